#!/usr/bin/env bash
# perf/gate.sh [MODE]: the benchmark gate. Reads the results of MODE
# (quick, full; default quick) from $PERF_RESULTS (perf/results/) and exits
# non-zero, naming each row, when a headline figure misses its target or
# is missing:
#
#   failover median interruption at default probe settings  <= 350 ms
#   relay TUN / stock wireguard-go goodput (medians)        >= 1.0
#   the same with offloads on (sender in the relay's netns)  >= 1.0
#   path switches on a flapping link, ours / naive          ours < naive / 10
#   failover with redundancy: duplicate, packets lost        0
#   TCP goodput dip at a cut with redundancy: duplicate, p95 < 100 ms
#   hub CPU per 1000 directed paths (idle peers, defaults)   < 5 % of a core
#   TCP goodput dip after a restore, p95 over the restores   < 100 ms
#   retransmits after a restore, p95 over the restores        <= one-path baseline + 10
#   detection at interval 20ms: failover median interruption  <= 70 ms
#   detection at interval 10ms: failover median interruption  <= 40 ms
#     (both on a direct link with no added delay, as in the issue: a
#     result measured on another link has no figure for these rows)
#   false switches at interval 20ms (idle, jitter, CPU load)   0
#
# This is a gate on benchmark figures, run at the end of `make perf` and
# `make perf-quick`; tests make no timing assertions. perf/gate-test.sh
# checks it on synthetic results.
set -o errexit -o nounset -o pipefail
PERF_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
M=${1:-quick}
R=${PERF_RESULTS:-$PERF_ROOT/results}
bad=0

# row NAME FILE JQ_FIGURE JQ_OK TARGET: JQ_FIGURE prints the figure (null
# if absent), JQ_OK is true when it meets TARGET.
row() {
	local name=$1 file=$R/$2-$M.json figure ok
	if [ ! -f "$file" ]; then
		echo "gate: FAIL  $name: no result ($file missing); target $5"
		bad=1
		return
	fi
	figure=$(jq -r "$3" "$file" 2>/dev/null || echo null)
	ok=$(jq -r "$4" "$file" 2>/dev/null || echo error)
	case $figure:$ok in
	null:* | *:error | *:null)
		echo "gate: FAIL  $name: no figure in $file; target $5"
		bad=1 ;;
	*:true) echo "gate: ok    $name: $figure (target $5)" ;;
	*)
		echo "gate: FAIL  $name: $figure misses its target $5 ($file)"
		bad=1 ;;
	esac
}

row "failover median interruption, default probes" failover \
	'.summary.interruptionMs.p50 | if type == "number" then "\(.) ms" else null end' \
	'.summary.interruptionMs.p50 as $m | if ($m|type) == "number" then $m <= 350 else null end' \
	'median <= 350 ms'
row "relay TUN / stock wireguard-go (medians)" throughput \
	'if (.mbps["relay-tun"].p50|type) == "number" and (.mbps["wireguard-go"].p50|type) == "number" and .mbps["wireguard-go"].p50 > 0 then (.mbps["relay-tun"].p50 / .mbps["wireguard-go"].p50 * 1000 | round / 1000) else null end' \
	'if (.mbps["relay-tun"].p50|type) == "number" and (.mbps["wireguard-go"].p50|type) == "number" and .mbps["wireguard-go"].p50 > 0 then .mbps["relay-tun"].p50 / .mbps["wireguard-go"].p50 >= 1.0 else null end' \
	'>= 1.0'
row "relay TUN / stock wireguard-go, offloads on (medians)" throughput \
	'if (.mbps["relay-tun-offload"].p50|type) == "number" and (.mbps["wireguard-go-offload"].p50|type) == "number" and .mbps["wireguard-go-offload"].p50 > 0 then (.mbps["relay-tun-offload"].p50 / .mbps["wireguard-go-offload"].p50 * 1000 | round / 1000) else null end' \
	'if (.mbps["relay-tun-offload"].p50|type) == "number" and (.mbps["wireguard-go-offload"].p50|type) == "number" and .mbps["wireguard-go-offload"].p50 > 0 then .mbps["relay-tun-offload"].p50 / .mbps["wireguard-go-offload"].p50 >= 1.0 else null end' \
	'>= 1.0'
row "path switches on a flapping link, ours / naive" flapping \
	'if (.lowestCost.switches|type) == "number" and (.naive.switches|type) == "number" then "\(.lowestCost.switches) / \(.naive.switches)" else null end' \
	'if (.lowestCost.switches|type) == "number" and (.naive.switches|type) == "number" then .lowestCost.switches * 10 < .naive.switches else null end' \
	'ours < naive / 10'

row "redundant failover, packets lost" failover-redundant \
	'.summary.lostPackets | if type == "number" then "\(.) packets over the cuts" else null end' \
	'.summary.lostPackets as $l | if ($l|type) == "number" then $l == 0 else null end' \
	'0'
# Over the cuts of failback-tcp (20 in the full run) with redundant sending.
row "redundant TCP goodput dip at a cut, p95" failback-tcp-redundant \
	'.summary.cutDipMs.p95 | if type == "number" then "\(.) ms" else null end' \
	'.summary.cutDipMs.p95 as $d | if ($d|type) == "number" then $d < 100 else null end' \
	'< 100 ms'
row "hub CPU per 1000 directed paths" scale-star \
	'.summary as $s | $s.hubCpuPercentPer1000Paths | if type == "number" then "\(.*100|round/100) % of a core (measured at \($s.hubPaths) paths)" else null end' \
	'.summary.hubCpuPercentPer1000Paths as $c | if ($c|type) == "number" then $c < 5 else null end' \
	'< 5 % of a core'
row "TCP goodput dip after a restore, p95" failback-tcp \
	'.summary.dipMs.p95 | if type == "number" then "\(.) ms" else null end' \
	'.summary.dipMs.p95 as $d | if ($d|type) == "number" then $d < 100 else null end' \
	'< 100 ms'
# A reordering burst is hundreds of segments (154 to 1040 per restore
# before moves waited for a flowlet boundary); 10 allows for a loss or two.
row "retransmits after a restore, p95" failback-tcp \
	'.summary as $s | $s.retransmitsPerRestore.p95 | if type == "number" and ($s.baselineRetransmitsPerWindow|type) == "number" then "\(.) segments (one path: \($s.baselineRetransmitsPerWindow))" else null end' \
	'.summary as $s | $s.retransmitsPerRestore.p95 as $r | if ($r|type) == "number" and ($s.baselineRetransmitsPerWindow|type) == "number" then $r <= $s.baselineRetransmitsPerWindow + 10 else null end' \
	'<= one-path baseline + 10'

# Aggressive timers (issue 13 item 3). 20 ms: the 67 ms measured before
# the jitter margin and stall discount, with 3 ms for the run's noise.
row "detection at interval 20ms: failover median" failover-interval-20ms \
	'.summary.interruptionMs.p50 | if type == "number" then "\(.) ms" else null end' \
	'.summary.interruptionMs.p50 as $m | if ($m|type) == "number" and .settings.wan.ab == "0ms" then $m <= 70 else null end' \
	'median <= 70 ms'
row "detection at interval 10ms: failover median" failover-interval-10ms \
	'.summary.interruptionMs.p50 | if type == "number" then "\(.) ms" else null end' \
	'.summary.interruptionMs.p50 as $m | if ($m|type) == "number" and .settings.wan.ab == "0ms" then $m <= 40 else null end' \
	'median <= 40 ms'
# A switch is false when the link delivered the probes in time; switches
# while the emulator itself ran late are reported, not gated.
row "false switches at interval 20ms (idle, jitter, CPU load)" timers \
	'.summary as $s | if ($s.falseSwitches|type) == "object" and ($s.falseSwitches|has("idle") and has("jitter") and has("load")) then "idle \($s.falseSwitches.idle), jitter \($s.falseSwitches.jitter), load \($s.falseSwitches.load) (with the link late: \([$s.linkLateSwitches[]] | add // 0))" else null end' \
	'.summary.falseSwitches as $f | if ($f|type) == "object" and ($f|has("idle") and has("jitter") and has("load")) and ([$f[]] | all(type == "number")) then ([$f[]] | add) == 0 else null end' \
	'0 in each case'

if [ $bad != 0 ]; then
	echo "gate: FAILED ($M results in $R)"
	exit 1
fi
echo "gate: passed ($M results in $R)"
