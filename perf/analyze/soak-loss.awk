# soak-loss.awk: the datagrams of the soak's UDP stream (perf/cmd/udpstream)
# lost outside the windows where loss is allowed. Three files, in order:
#
#   windows   "kind start end ref" per window: loss of a datagram sent at
#             start <= t <= end is allowed; ref is the window's nominal end
#             (the restore, or the restarted relay's direct path up), to
#             say how long after it the last loss came;
#   sent      the sender's log, "seq send_time" (comment lines start #);
#   received  the receiver's log, "seq send_time recv_time".
#
# Times are in seconds, on one clock. A datagram is lost if it was sent
# and never received. Output: one JSON object {sent, received, duplicates,
# lost, lostInWindows, lostOutsideWindows, outside: [{seq, t}] (the first
# 50), windows: [{kind, start, end, ref, lost, lastLossAfterRefMs}]}.
FNR == 1 { f++ }
/^#/ { next }
f == 1 { nw++; wk[nw] = $1; ws[nw] = $2 + 0; we[nw] = $3 + 0; wr[nw] = $4 + 0; next }
f == 2 { sent++; st[$1] = $2 + 0; next }
f == 3 { if ($1 in got) dup++; else received++; got[$1] = 1; next }
END {
	out = ""; nout = 0
	for (q in st) {
		if (q in got) continue
		lost++; t = st[q]; inw = 0
		for (i = 1; i <= nw; i++) {
			if (t >= ws[i] && t <= we[i]) {
				inw = 1; wl[i]++
				d = (t - wr[i]) * 1000
				if (!(i in last) || d > last[i]) last[i] = d
			}
		}
		if (inw) { inside++; continue }
		outside++
		lseq[outside] = q + 0; lt[outside] = t
	}
	# The first 50 outside, in order of sequence (selection sort: 50 passes at most).
	for (i = 1; i <= outside && i <= 50; i++) {
		m = i
		for (j = i + 1; j <= outside; j++) if (lseq[j] < lseq[m]) m = j
		x = lseq[i]; lseq[i] = lseq[m]; lseq[m] = x; x = lt[i]; lt[i] = lt[m]; lt[m] = x
	}
	for (i = 1; i <= outside && i <= 50; i++) out = out (i > 1 ? "," : "") sprintf("{\"seq\":%d,\"t\":%.6f}", lseq[i], lt[i])
	printf "{\"sent\":%d,\"received\":%d,\"duplicates\":%d,\"lost\":%d,\"lostInWindows\":%d,\"lostOutsideWindows\":%d,\"outside\":[%s],\"windows\":[", sent, received, dup, lost, inside, outside, out
	for (i = 1; i <= nw; i++) printf "%s{\"kind\":\"%s\",\"start\":%.6f,\"end\":%.6f,\"ref\":%.6f,\"lost\":%d,\"lastLossAfterRefMs\":%s}", (i > 1 ? "," : ""), wk[i], ws[i], we[i], wr[i], wl[i], ((i in last) ? sprintf("%.1f", last[i]) : "null")
	printf "]}\n"
}
