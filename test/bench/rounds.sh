#!/usr/bin/env bash
# rounds.sh runs the data-plane throughput benchmarks in interleaved rounds
# and prints the median MB/s and CPU ns per byte of each, and the median
# per-round ratio of chosen pairs, so that a noisy shared machine skews
# every variant alike (docs/performance.md). Run from the repository root (root for the TUN pair):
#
#   test/bench/rounds.sh [ROUNDS] [NETSTACK_BENCHTIME] [TUN_BENCHTIME]
#
# Defaults: 7 rounds, 1500x (≈100 MB per netstack variant), 3000x (≈200 MB
# per TUN variant). Raw lines, after a header naming the commit, go to $OUT
# (default perf/results/bench-rounds.txt, committed: the tables of
# docs/performance.md are made from it by test/bench/rounds-table.sh and
# perf/docs.sh), runs that gave no figure to $OUT.failures. Writing the
# committed file needs a clean tree (git describe --dirty); for local
# experiments set OUT elsewhere.
set -euo pipefail
rounds=${1:-7}
ns_time=${2:-1500x}
tun_time=${3:-3000x}
committed=perf/results/bench-rounds.txt
out=${OUT:-$committed}
commit=$(git describe --always --dirty 2>/dev/null || echo unknown)
if [ "$(realpath -m "$out")" = "$(realpath -m "$committed")" ] && [[ $commit == *-dirty || $commit == unknown ]]; then
	echo "rounds.sh: the tree is dirty ($commit): $committed is committed and must come from a committed tree; commit first, or set OUT elsewhere" >&2
	exit 1
fi
# Pairs compared round by round, A:B (benchmark names without "Benchmark").
PAIRS=${PAIRS:-"NetstackPair/wg-stock/tcp:NetstackPair/wg-multipath/tcp NetstackPair/wg-stock/tcp:NetstackPair/relay/tcp NetstackPair/relay/tcp:NetstackPair/relay-translated/tcp NetstackPair/relay/tcp:NetstackPair/relay-linkem/tcp TUNPair/wireguard-go/tcp:TUNPair/relay/tcp TUNPair/relay/tcp:TUNPair/relay-translated/tcp"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/agent.test" ./internal/agent
go test -c -o "$tmp/bench.test" ./test/bench
{
	echo "# commit: $commit"
	echo "# when: $(date -u +%FT%TZ)"
	echo "# machine: $(nproc) vCPU $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo), kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "# command: test/bench/rounds.sh $rounds $ns_time $tun_time"
	echo "# pairs: $PAIRS"
} >"$out"
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
		dir=internal/agent
		[ "$pkg" = bench ] && dir=test/bench
		res=$(cd "$dir" && "$tmp/$pkg.test" -test.run '^$' -test.bench "$sel" -test.benchtime "$bt" 2>&1) || true
		if grep -q MB/s <<<"$res"; then
			grep MB/s <<<"$res" | sed "s/^/r$i /" >>"$out"
		else
			printf 'round %d: %s %s gave no figure:\n%s\n' "$i" "$pkg" "$sel" "$res" | tee -a "$out.failures" >&2
		fi
	done
done
# The tables: medians per benchmark and per-round ratios per pair.
"$(dirname "$0")/rounds-table.sh" "$out"
