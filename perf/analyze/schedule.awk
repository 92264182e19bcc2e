# schedule.awk: the relay's probe scheduling figures from its /metrics text,
# as one JSON object: per stage (wake, send) the number of observations,
# the mean, the fraction over 1, 5, 25 and 100 ms, and upper bounds of the
# median and the 99th percentile (the bucket bounds they fall in, ms;
# null above the last bucket); and the stalls reported to the monitor.
/^relay_probe_schedule_delay_seconds_bucket\{/ {
	match($0, /stage="[a-z]+"/); st = substr($0, RSTART + 7, RLENGTH - 8)
	match($0, /le="[^"]+"/); le = substr($0, RSTART + 4, RLENGTH - 5)
	n[st]++; les[st, n[st]] = le; cum[st, n[st]] = $NF
	if (le == "0.001" || le == "0.005" || le == "0.025" || le == "0.1") at[st, le] = $NF
	stages[st] = 1
}
/^relay_probe_schedule_delay_seconds_count\{/ { match($0, /stage="[a-z]+"/); cnt[substr($0, RSTART + 7, RLENGTH - 8)] = $NF }
/^relay_probe_schedule_delay_seconds_sum\{/ { match($0, /stage="[a-z]+"/); sum[substr($0, RSTART + 7, RLENGTH - 8)] = $NF }
/^relay_stalls_total / { stalls = $NF }
/^relay_stall_seconds_total / { stallsec = $NF }
function q(st, p,   i) {
	for (i = 1; i <= n[st]; i++) {
		if (cum[st, i] >= p * cnt[st]) {
			if (les[st, i] == "+Inf") return "null"
			return les[st, i] * 1000
		}
	}
	return "null"
}
function over(st, le) { return cnt[st] > 0 ? (cnt[st] - at[st, le]) / cnt[st] : 0 }
END {
	printf "{"
	for (st in stages) {
		c = cnt[st] + 0
		mean = 0; p50 = "null"; p99 = "null"
		if (c > 0) { mean = sum[st] / c * 1000; p50 = q(st, 0.5); p99 = q(st, 0.99) }
		printf "\"%s\":{\"count\":%d,\"meanMs\":%.3f,\"over1ms\":%.5f,\"over5ms\":%.5f,\"over25ms\":%.5f,\"over100ms\":%.5f,\"p50LeMs\":%s,\"p99LeMs\":%s},", st, c, mean, over(st, "0.001"), over(st, "0.005"), over(st, "0.025"), over(st, "0.1"), p50, p99
	}
	printf "\"stalls\":%d,\"stallSeconds\":%.3f}\n", stalls + 0, stallsec + 0
}
