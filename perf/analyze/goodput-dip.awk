# perf/analyze/goodput-dip.awk -v cut=S [-v from=S -v to=S]: from
# "start end mbps" lines (iperf3 intervals), a dip: the longest run of
# intervals below 10% of the median goodput before the cut (the first
# second, TCP's slow start, left out), searched among the intervals that
# start in [from - 0.15, to) (default: from the cut on). Prints one JSON
# object; minMbps is the lowest interval in that window.
function median(a, n,    i, j, t) {
	for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
BEGIN { if (from == "") from = cut; if (to == "") to = 1e18 }
{ s[NR] = $1; e[NR] = $2; v[NR] = $3; if ($2 <= cut && $1 >= 1) pre[++np] = $3 }
END {
	if (np == 0) { print "{\"preCutMedianMbps\": null}"; exit }
	m = median(pre, np); thr = m / 10
	best = 0; run = 0
	for (i = 1; i <= NR; i++) {
		if (s[i] >= from - 0.15 && s[i] < to && v[i] < thr) { if (!run) rs = i; run++ } else run = 0
		if (run > best) { best = run; bs = rs; be = i }
	}
	mn = -1
	for (i = 1; i <= NR; i++) if (s[i] >= from - 0.15 && s[i] < to && (mn < 0 || v[i] < mn)) mn = v[i]
	printf "{\"preCutMedianMbps\": %.1f, \"thresholdMbps\": %.1f, \"minMbps\": %.1f, \"intervals\": %d", m, thr, mn, best
	if (best) printf ", \"startS\": %.3f, \"endS\": %.3f, \"durationMs\": %d", s[bs], e[be], (e[be] - s[bs]) * 1000 + 0.5
	else printf ", \"startS\": null, \"endS\": null, \"durationMs\": 0"
	print "}"
}
