#!/usr/bin/env bash
# rounds.sh runs the data-plane throughput benchmarks in interleaved rounds
# and prints the median MB/s of each, so that a noisy shared machine skews
# every variant alike. Run from the repository root (root for the TUN pair):
#
#   test/bench/rounds.sh [ROUNDS] [NETSTACK_BENCHTIME] [TUN_BENCHTIME]
#
# Defaults: 7 rounds, 1500x (≈100 MB per netstack variant), 3000x (≈200 MB
# per TUN variant). Raw lines go to $OUT (default /tmp/relay-rounds.txt).
set -euo pipefail
rounds=${1:-7}
ns_time=${2:-1500x}
tun_time=${3:-3000x}
out=${OUT:-/tmp/relay-rounds.txt}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/agent.test" ./pkg/agent
go test -c -o "$tmp/bench.test" ./test/bench
: >"$out"
for i in $(seq "$rounds"); do
	echo "round $i/$rounds" >&2
	(cd pkg/agent && "$tmp/agent.test" -test.run '^$' -test.bench NetstackPair -test.benchtime "$ns_time") | grep MB/s >>"$out" || true
	(cd test/bench && "$tmp/bench.test" -test.run '^$' -test.bench TUNPair -test.benchtime "$tun_time") | grep MB/s >>"$out" || true
done
# name, then the MB/s column; median per name.
awk '{for (i = 1; i <= NF; i++) if ($i == "MB/s") print $1, $(i-1)}' "$out" | sort -k1,1 -k2,2g |
	awk '{v[$1] = v[$1] " " $2; n[$1]++}
	END {for (k in v) {split(substr(v[k], 2), a, " "); m = (n[k] % 2) ? a[(n[k]+1)/2] : (a[n[k]/2] + a[n[k]/2+1]) / 2;
		printf "%-48s median %8.1f MB/s  (n=%d, min %s, max %s)\n", k, m, n[k], a[1], a[n[k]]}}' | sort
