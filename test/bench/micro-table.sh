#!/usr/bin/env bash
# micro-table.sh [RAW]: the per-packet table of docs/performance.md
# (markdown) from the raw go test output test/bench/micro.sh wrote to RAW
# (default perf/results/bench-micro.txt): per benchmark, the fastest and the
# median ns per packet (the benchmark's ns/packet or ns/pkt metric when it
# handles a batch per op, else ns/op) over the runs, and allocs/op (the
# largest seen).
set -o errexit -o nounset -o pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RAW=${1:-$ROOT/perf/results/bench-micro.txt}
[ -s "$RAW" ] || { echo "micro-table.sh: no raw results in $RAW (run test/bench/micro.sh)" >&2; exit 1; }
awk '
function median(list,   a, n, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return (n % 2) ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
# num: one decimal, two below 1 ns (a batch of 128 divides small costs).
function num(v) { return sprintf(v + 0 < 1 ? "%.2f" : "%.1f", v) }
/^# / { k = $2; sub(/:$/, "", k); v = $0; sub(/^# [^:]*: */, "", v); hdr[k] = v; next }
/^pkg: / { pkg = $2; sub(/.*\/pkg\//, "", pkg); next }
/^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name); name = pkg " " name
	# Per packet where the benchmark reports it (a batch per op), else per op.
	v = ""
	for (i = 2; i <= NF; i++) {
		if ($i == "ns/packet" || $i == "ns/pkt") v = $(i-1)
		if ($i == "ns/op" && v == "") v = $(i-1)
		if ($i == "allocs/op" && $(i-1) + 0 >= al[name]) al[name] = $(i-1) + 0
	}
	ns[name] = ns[name] " " v; if (!(name in lo) || v + 0 < lo[name]) lo[name] = v + 0
	if (!(name in seen)) { seen[name] = 1; order[++nn] = name }
}
END {
	printf "`%s` at commit %s, %s on %s:\n\n", hdr["command"], hdr["commit"], hdr["when"], hdr["machine"]
	print "| benchmark | ns/packet fastest | ns/packet median | allocs/op | runs |"
	print "|---|---:|---:|---:|---:|"
	for (i = 1; i <= nn; i++) {
		k = order[i]
		printf "| %s | %s | %s | %d | %d |\n", k, num(lo[k]), num(median(ns[k])), al[k], split(ns[k], x, " ")
	}
}' "$RAW"
