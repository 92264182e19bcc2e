# soak-slope.awk: the leak check of the soak (perf/scenarios/soak.sh) on
# one series of one relay. Input lines "t segment up value": t the sample
# time in seconds, segment the process the sample belongs to (its pid: a
# restart starts a new segment), up the seconds the process had been
# running, value the count ("null" when there is none: skipped).
#
# Samples of the first `warmup` seconds of each process are left out, and
# so is a segment with fewer than 3 samples left. The slope is a least
# squares fit with one intercept per segment and one slope for all (the
# within-segment slope: a restart that resets a count is no slope), in
# units per hour. verdict: "leak" if the slope is above `allowed` (per
# hour), "flat" if not, "insufficient" if fewer than `minpoints` samples
# (default 6) or less than `minspan` seconds of fitted time (default 60)
# are left, "reported" if `allowed` is "null" (the series is fitted, not
# judged).
#
# Output: one JSON object {n, segments, spanSeconds, slopePerHour,
# allowedPerHour, verdict}.
BEGIN { warmup += 0; judged = (allowed != "null"); allowed = judged ? allowed + 0 : "null"; if (minpoints == "") minpoints = 6; if (minspan == "") minspan = 60 }
$4 != "null" && $4 != "" && $3 + 0 >= warmup {
	s = $2; k = ++cnt[s]
	T[s, k] = $1 + 0; Y[s, k] = $4 + 0
	st[s] += $1; sy[s] += $4
	if (!(s in lo) || $1 < lo[s]) lo[s] = $1 + 0
	if (!(s in hi) || $1 > hi[s]) hi[s] = $1 + 0
}
END {
	n = 0; segs = 0; span = 0; sxx = 0; sxy = 0
	for (s in cnt) {
		if (cnt[s] < 3) continue
		segs++; n += cnt[s]; span += hi[s] - lo[s]
		mt = st[s] / cnt[s]; my = sy[s] / cnt[s]
		for (k = 1; k <= cnt[s]; k++) {
			dt = T[s, k] - mt
			sxx += dt * dt; sxy += dt * (Y[s, k] - my)
		}
	}
	if (n < minpoints || span < minspan || sxx == 0) {
		printf "{\"n\":%d,\"segments\":%d,\"spanSeconds\":%.1f,\"slopePerHour\":null,\"allowedPerHour\":%s,\"verdict\":\"insufficient\"}\n", n, segs, span, allowed
		exit
	}
	slope = sxy / sxx * 3600
	printf "{\"n\":%d,\"segments\":%d,\"spanSeconds\":%.1f,\"slopePerHour\":%.3f,\"allowedPerHour\":%s,\"verdict\":\"%s\"}\n", n, segs, span, slope, allowed, (!judged ? "reported" : slope > allowed ? "leak" : "flat")
}
