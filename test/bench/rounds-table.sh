#!/usr/bin/env bash
# rounds-table.sh [RAW]: the end-to-end tables of docs/performance.md
# (markdown) from the raw lines test/bench/rounds.sh wrote to RAW (default
# perf/results/bench-rounds.txt): per benchmark the median MB/s and CPU ns
# per byte over the rounds; per pair (B against A, run minutes apart in the
# same round) the median of the per-round ratios B/A, which cancels load
# that drifts between rounds. perf/docs.sh puts the output into the doc.
#
# RAW: "# key: value" header lines (commit, when, machine, command,
# pairs), then one line per benchmark result, prefixed by its round: "rN
# BenchmarkX/y/tcp-2  N  T ns/op  M MB/s  C cpu-ns/B".
set -o errexit -o nounset -o pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RAW=${1:-$ROOT/perf/results/bench-rounds.txt}
[ -s "$RAW" ] || { echo "rounds-table.sh: no raw results in $RAW (run test/bench/rounds.sh)" >&2; exit 1; }
awk '
function median(list,   a, n, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return (n % 2) ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
function label(name) { sub(/^Benchmark/, "", name); sub(/\/tcp$/, "", name); return name }
/^# / {
	k = $2; sub(/:$/, "", k); v = $0; sub(/^# [^:]*: */, "", v); hdr[k] = v; next
}
/^r[0-9]+ / {
	round = $1; name = $2; sub(/-[0-9]+$/, "", name)
	for (i = 3; i <= NF; i++) {
		if ($i == "MB/s") { mb[name] = mb[name] " " $(i-1); r_mb[round, name] = $(i-1) }
		if ($i ~ /ns\/B$/) { cpu[name] = cpu[name] " " $(i-1); r_cpu[round, name] = $(i-1) }
	}
	rounds[round] = 1; if (!(name in seen)) { seen[name] = 1; order[++nn] = name }
}
END {
	nr = 0; for (r in rounds) nr++
	printf "`%s` at commit %s, %s on %s (%d rounds):\n\n", hdr["command"], hdr["commit"], hdr["when"], hdr["machine"], nr
	print "| benchmark | median MB/s | median CPU ns/B | runs |"
	print "|---|---:|---:|---:|"
	# Sorted by name, so the table does not depend on the rotation.
	for (i = 1; i <= nn; i++) for (j = i; j > 1 && label(order[j-1]) > label(order[j]); j--) { t = order[j]; order[j] = order[j-1]; order[j-1] = t }
	for (i = 1; i <= nn; i++) {
		k = order[i]
		printf "| %s | %.1f | %s | %d |\n", label(k), median(mb[k]), (k in cpu) ? sprintf("%.2f", median(cpu[k])) : "–", split(mb[k], x, " ")
	}
	print ""
	print "Paired comparisons (median over the rounds of B/A measured in the same round; runs: rounds with both):"
	print ""
	print "| B against A | MB/s ratio | CPU/B ratio | rounds |"
	print "|---|---:|---:|---:|"
	np = split(hdr["pairs"], pl, " ")
	for (p = 1; p <= np; p++) {
		split(pl[p], ab, ":"); a = "Benchmark" ab[1]; b = "Benchmark" ab[2]; rm = ""; rc = ""; n = 0
		for (r in rounds) {
			if (((r, a) in r_mb) && ((r, b) in r_mb)) { rm = rm " " r_mb[r, b] / r_mb[r, a]; n++ }
			if (((r, a) in r_cpu) && ((r, b) in r_cpu)) rc = rc " " r_cpu[r, b] / r_cpu[r, a]
		}
		if (rm == "") continue
		la = label(a); lb = label(b); split(la, pa, "/"); split(lb, pb, "/")
		printf "| %s: %s / %s | %.2f | %s | %d |\n", pa[1], pb[2], pa[2], median(rm), (rc != "") ? sprintf("%.2f", median(rc)) : "–", n
	}
}' "$RAW"
