# stats.awk: numbers, one per line, to a JSON summary:
# {"n":..,"min":..,"mean":..,"p50":..,"p90":..,"p95":..,"p99":..,"max":..}
# Percentiles are nearest-rank on the sorted values. Empty input gives n 0
# and nulls.
{ v[n++] = $1 + 0; s += $1 }
function q(p,   k) { k = int(p * n + 0.999999); if (k < 1) k = 1; if (k > n) k = n; return v[k - 1] }
END {
	if (n == 0) { print "{\"n\":0,\"min\":null,\"mean\":null,\"p50\":null,\"p90\":null,\"p95\":null,\"p99\":null,\"max\":null}"; exit }
	# insertion sort is fine for the few thousand samples a scenario takes
	for (i = 1; i < n; i++) { x = v[i]; for (j = i - 1; j >= 0 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
	printf "{\"n\":%d,\"min\":%.3f,\"mean\":%.3f,\"p50\":%.3f,\"p90\":%.3f,\"p95\":%.3f,\"p99\":%.3f,\"max\":%.3f}\n", \
		n, v[0], s / n, q(0.5), q(0.9), q(0.95), q(0.99), v[n - 1]
}
