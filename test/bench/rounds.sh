#!/usr/bin/env bash
# rounds.sh runs the data-plane throughput benchmarks in interleaved rounds
# and prints the median MB/s and CPU ns per byte of each, and the median
# per-round ratio of chosen pairs, so that a noisy shared machine skews
# every variant alike (docs/performance.md). Run from the repository root (root for the TUN pair):
#
#   test/bench/rounds.sh [ROUNDS] [NETSTACK_BENCHTIME] [TUN_BENCHTIME]
#
# Defaults: 7 rounds, 1500x (≈100 MB per netstack variant), 3000x (≈200 MB
# per TUN variant). Raw lines go to $OUT (default /tmp/relay-rounds.txt),
# runs that gave no figure to $OUT.failures.
set -euo pipefail
rounds=${1:-7}
ns_time=${2:-1500x}
tun_time=${3:-3000x}
out=${OUT:-/tmp/relay-rounds.txt}
# Pairs compared round by round, A:B (benchmark names without "Benchmark").
PAIRS=${PAIRS:-"NetstackPair/wg-stock/tcp:NetstackPair/wg-multipath/tcp NetstackPair/wg-stock/tcp:NetstackPair/relay/tcp NetstackPair/relay/tcp:NetstackPair/relay-translated/tcp NetstackPair/relay/tcp:NetstackPair/relay-linkem/tcp TUNPair/wireguard-go/tcp:TUNPair/relay/tcp TUNPair/relay/tcp:TUNPair/relay-translated/tcp"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/agent.test" ./pkg/agent
go test -c -o "$tmp/bench.test" ./test/bench
: >"$out"
rm -f "$out.failures"
# One process per variant, in an order rotated every round: a variant that
# runs after another in the same process measures slower (the first one's
# heap and stacks are still being collected), and the machine's load
# drifts.
runs=(
	"agent NetstackPair/^relay$ $ns_time"
	"agent NetstackPair/^relay-translated$ $ns_time"
	"agent NetstackPair/^relay-linkem$ $ns_time"
	"agent NetstackPair/^wg-stock$ $ns_time"
	"agent NetstackPair/^wg-multipath$ $ns_time"
	"bench TUNPair/^relay$ $tun_time"
	"bench TUNPair/^relay-translated$ $tun_time"
	"bench TUNPair/^wireguard-go$ $tun_time"
	"bench TUNPair/^routed$ $tun_time"
)
for i in $(seq "$rounds"); do
	echo "round $i/$rounds" >&2
	for j in $(seq 0 $((${#runs[@]} - 1))); do
		read -r pkg sel bt <<<"${runs[$(((i + j) % ${#runs[@]}))]}"
		dir=pkg/agent
		[ "$pkg" = bench ] && dir=test/bench
		res=$(cd "$dir" && "$tmp/$pkg.test" -test.run '^$' -test.bench "$sel" -test.benchtime "$bt" 2>&1) || true
		if grep -q MB/s <<<"$res"; then
			grep MB/s <<<"$res" | sed "s/^/r$i /" >>"$out"
		else
			printf 'round %d: %s %s gave no figure:\n%s\n' "$i" "$pkg" "$sel" "$res" | tee -a "$out.failures" >&2
		fi
	done
done
# Per benchmark: the median MB/s and CPU ns per byte over the rounds. Per
# pair (B against A, run minutes apart within a round): the median of the
# per-round ratios B/A, which cancels load that drifts between rounds.
awk -v pairs="$PAIRS" '
function median(list,   a, n, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return (n % 2) ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
{
	round = $1; name = $2; sub(/-[0-9]+$/, "", name)
	for (i = 3; i <= NF; i++) {
		if ($i == "MB/s") { mb[name] = mb[name] " " $(i-1); r_mb[round, name] = $(i-1) }
		if ($i ~ /ns\/B$/) { cpu[name] = cpu[name] " " $(i-1); r_cpu[round, name] = $(i-1) }
	}
	rounds[round] = 1; names[name] = 1
}
END {
	printf "%-44s %12s %14s %4s\n", "benchmark", "median MB/s", "median cpu-ns/B", "n"
	for (k in names) printf "%-44s %12.1f %14s %4d\n", k, median(mb[k]), (k in cpu) ? sprintf("%.2f", median(cpu[k])) : "-", split(mb[k], x, " ") | "sort"
	close("sort")
	print ""
	np = split(pairs, pl, " ")
	for (p = 1; p <= np; p++) {
		split(pl[p], ab, ":"); a = "Benchmark" ab[1]; b = "Benchmark" ab[2]; rm = ""; rc = ""
		for (r in rounds) {
			if (((r, a) in r_mb) && ((r, b) in r_mb)) rm = rm " " r_mb[r, b] / r_mb[r, a]
			if (((r, a) in r_cpu) && ((r, b) in r_cpu)) rc = rc " " r_cpu[r, b] / r_cpu[r, a]
		}
		if (rm != "") printf "%s vs %s: median per-round ratio MB/s %.3f, cpu-ns/B %s\n", ab[2], ab[1], median(rm), (rc != "") ? sprintf("%.3f", median(rc)) : "-"
	}
}' "$out"
