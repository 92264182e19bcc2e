#!/usr/bin/env bash
# micro.sh [COUNT] [BENCHTIME]: the per-packet benchmarks of
# docs/performance.md (internal/core/packet, internal/dataplane/pipe, internal/dataplane/conn/multipath), each
# COUNT times (default 6) for BENCHTIME (default 1s), one package at a
# time. Raw output, after a header naming the commit, goes to $OUT
# (default perf/results/bench-micro.txt, committed: test/bench/micro-table.sh
# and perf/docs.sh make the doc's table from it). Writing the committed file
# needs a clean tree (git describe --dirty); set OUT elsewhere to experiment.
# Run from the repository root; no root needed.
set -euo pipefail
count=${1:-6}
bt=${2:-1s}
committed=perf/results/bench-micro.txt
out=${OUT:-$committed}
commit=$(git describe --always --dirty 2>/dev/null || echo unknown)
if [ "$(realpath -m "$out")" = "$(realpath -m "$committed")" ] && [[ $commit == *-dirty || $commit == unknown ]]; then
	echo "micro.sh: the tree is dirty ($commit): $committed is committed and must come from a committed tree; commit first, or set OUT elsewhere" >&2
	exit 1
fi
pkgs="./internal/core/packet/ ./internal/dataplane/pipe/ ./internal/dataplane/conn/multipath/"
# The per-packet benchmarks (not bind's loopback and device throughput).
BENCH='^Benchmark(Translate|Parse|ClampMSS|TableLookupBytes|Read|Write|SendOverhead|ReceiveOverhead)$'

{
	echo "# commit: $commit"
	echo "# when: $(date -u +%FT%TZ)"
	echo "# machine: $(nproc) vCPU $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo), kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "# command: test/bench/micro.sh $count $bt"
} >"$out.tmp"
go test -p 1 -run '^$' -bench "$BENCH" -benchmem -count "$count" -benchtime "$bt" $pkgs | tee -a "$out.tmp" >&2
mv "$out.tmp" "$out"
"$(dirname "$0")/micro-table.sh" "$out"
