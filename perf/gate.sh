#!/usr/bin/env bash
# perf/gate.sh [MODE]: the benchmark gate. Reads the results of MODE
# (quick, full; default quick) from $PERF_RESULTS (perf/results/) and exits
# non-zero, naming each row, when a headline figure misses its target or
# is missing. The targets, and why each has its value, are in
# perf/targets.sh (perf/table.sh prints the same ones):
#
#   failover median interruption at default probe settings
#   throughput matrix, every cell (underlay offloads x sender): the relay's
#     goodput over stock wireguard-go's in the same round, and its CPU per
#     GB over stock's within the noise of two identical stock runs
#   path switches on a flapping link, ours / naive
#   failover with redundancy: duplicate, packets lost; its TCP dip at a cut
#   hub CPU per 1000 directed paths (idle peers, defaults)
#   TCP goodput dip and retransmits after a restore
#   detection at interval 20ms and 10ms: on a direct link with no added
#     delay against fixed targets, and on the testbed's 10 ms WAN link
#     against the detector's physical limit plus a slack (a result measured
#     on another link has no figure for these rows)
#   false switches at interval 20ms (idle, jitter, CPU load)
#   the soak: nothing lost outside the cut and kill windows, no TCP reset,
#     nothing left after the last stop, and (full) every count flat
#
# This is a gate on benchmark figures, run at the end of `make perf` and
# `make perf-quick`; tests make no timing assertions. perf/gate-test.sh
# checks it on synthetic results.
set -o errexit -o nounset -o pipefail
PERF_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
M=${1:-quick}
PERF_GATE_MODE=$M
R=${PERF_RESULTS:-$PERF_ROOT/results}
bad=0
source "$PERF_ROOT/targets.sh"
# Every TARGET_* of targets.sh, as $t in the rows' jq: $t.FAILOVER_MS...
T=$(for v in $(compgen -v TARGET_); do printf '"%s": %s\n' "${v#TARGET_}" "${!v}"; done | paste -sd, | sed 's/.*/{&}/')
jq -e . <<<"$T" >/dev/null || { echo "gate: perf/targets.sh gives no valid targets: $T"; exit 1; }
T=$(jq -c --arg m "$M" '. + {MODE: $m}' <<<"$T")

# row NAME FILE JQ_FIGURE JQ_OK TARGET: JQ_FIGURE prints the figure (null
# if absent), JQ_OK is true when it meets TARGET (the text of target_text);
# both see the targets as $t.
row() {
	local name=$1 file=$R/$2-$M.json figure ok
	if [ ! -f "$file" ]; then
		echo "gate: FAIL  $name: no result ($file missing); target $5"
		bad=1
		return
	fi
	figure=$(jq -r --argjson t "$T" "$3" "$file" 2>/dev/null || echo null)
	ok=$(jq -r --argjson t "$T" "$4" "$file" 2>/dev/null || echo error)
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
	'.summary.interruptionMs.p50 as $m | if ($m|type) == "number" then $m <= $t.FAILOVER_MS else null end' \
	"$(target_text failover)"
for off in $MATRIX_OFFLOADS; do
	for snd in $MATRIX_SENDERS; do
		cell=".cells[] | select(.offloads == \"$off\" and .sender == \"$snd\") | .tunnels"
		row "matrix $off/$snd: relay / stock wireguard-go goodput" matrix \
			"[$cell | .relay.vsStock.mbps | select(.p50 | type == \"number\") | \"\\(.p50) (\\(.min)..\\(.max))\"][0] // null" \
			"[$cell | .relay.vsStock.mbps.p50 | select(type == \"number\") | . >= \$t.MATRIX_RATIO][0] as \$ok | if \$ok == null then null else \$ok and (\$t.MODE != \"full\" or (.settings.rounds // 0) >= \$t.MATRIX_MIN_ROUNDS) end" \
			"$(target_text matrix)"
		row "matrix $off/$snd: relay / stock wireguard-go CPU per GB" matrix \
			"[$cell | .relay.vsStock.cpu.p50 | select(type == \"number\")][0] as \$c | .noise.cpu as \$n | if (\$c|type) == \"number\" and (\$n|type) == \"number\" then \"\\(\$c) (noise \\(\$n))\" else null end" \
			"[$cell | .relay.vsStock.cpu.p50 | select(type == \"number\")][0] as \$c | .noise.cpu as \$n | if (\$c|type) == \"number\" and (\$n|type) == \"number\" then (\$t.MODE != \"full\" or \$n <= \$t.MATRIX_MAX_NOISE) and \$c <= 1 + \$n else null end" \
			"$(target_text matrix-cpu)"
	done
done
row "path switches on a flapping link, ours / naive" flapping \
	'if (.lowestCost.switches|type) == "number" and (.naive.switches|type) == "number" then "\(.lowestCost.switches) / \(.naive.switches)" else null end' \
	'if (.lowestCost.switches|type) == "number" and (.naive.switches|type) == "number" then .lowestCost.switches * $t.FLAP_FACTOR < .naive.switches else null end' \
	"$(target_text flapping)"
row "redundant failover, packets lost" failover-redundant \
	'.summary.lostPackets | if type == "number" then "\(.) packets over the cuts" else null end' \
	'.summary.lostPackets as $l | if ($l|type) == "number" then $l <= $t.REDUNDANT_LOST else null end' \
	"$(target_text redundant-lost)"
# Over the cuts of failback-tcp (20 in the full run) with redundant sending.
row "redundant TCP goodput dip at a cut, p95" failback-tcp-redundant \
	'.summary.cutDipMs.p95 | if type == "number" then "\(.) ms" else null end' \
	'.summary.cutDipMs.p95 as $d | if ($d|type) == "number" then $d < $t.REDUNDANT_DIP_MS else null end' \
	"$(target_text redundant-dip)"
row "hub CPU per 1000 directed paths" scale-star \
	'.summary as $s | $s.hubCpuPercentPer1000Paths | if type == "number" then "\(.*100|round/100) % of a core (measured at \($s.hubPaths) paths)" else null end' \
	'.summary.hubCpuPercentPer1000Paths as $c | if ($c|type) == "number" then $c < $t.HUB_CPU_PERCENT else null end' \
	"$(target_text hub-cpu)"
row "TCP goodput dip after a restore, p95" failback-tcp \
	'.summary.dipMs.p95 | if type == "number" then "\(.) ms" else null end' \
	'.summary.dipMs.p95 as $d | if ($d|type) == "number" then $d < $t.FAILBACK_DIP_MS else null end' \
	"p95 < $TARGET_FAILBACK_DIP_MS ms"
row "retransmits after a restore, p95" failback-tcp \
	'.summary as $s | $s.retransmitsPerRestore.p95 | if type == "number" and ($s.baselineRetransmitsPerWindow|type) == "number" then "\(.) segments (one path: \($s.baselineRetransmitsPerWindow))" else null end' \
	'.summary as $s | $s.retransmitsPerRestore.p95 as $r | if ($r|type) == "number" and ($s.baselineRetransmitsPerWindow|type) == "number" then $r <= $s.baselineRetransmitsPerWindow + $t.FAILBACK_RETRANSMITS_SLACK else null end' \
	"<= one-path baseline + $TARGET_FAILBACK_RETRANSMITS_SLACK"
# Aggressive timers: on a link with no added delay, fixed targets.
row "detection at interval 20ms, no added delay: failover median" failover-interval-20ms \
	'.summary.interruptionMs.p50 | if type == "number" then "\(.) ms" else null end' \
	'.summary.interruptionMs.p50 as $m | if ($m|type) == "number" and .settings.wan.ab == "0ms" then $m <= $t.INTERVAL_20MS_MS else null end' \
	"$(target_text interval-20ms)"
row "detection at interval 10ms, no added delay: failover median" failover-interval-10ms \
	'.summary.interruptionMs.p50 | if type == "number" then "\(.) ms" else null end' \
	'.summary.interruptionMs.p50 as $m | if ($m|type) == "number" and .settings.wan.ab == "0ms" then $m <= $t.INTERVAL_10MS_MS else null end' \
	"$(target_text interval-10ms)"
# On the WAN link (an added delay): against the detector's physical limit.
for iv in 20ms 10ms; do
	row "detection at interval $iv on the WAN link: failover median vs the limit" "failover-interval-$iv-wan" \
		'.summary as $s | if ($s.interruptionMs.p50|type) == "number" and ($s.detectBound.ms|type) == "number" then "\($s.interruptionMs.p50) ms (limit \($s.detectBound.ms) ms: \($s.detectBound.detectMs) + RTT \($s.detectBound.rttMs * 100 | round / 100) + margin \($s.detectBound.jitterMarginMs * 100 | round / 100))" else null end' \
		'.summary as $s | if ($s.interruptionMs.p50|type) == "number" and ($s.detectBound.ms|type) == "number" and .settings.wan.ab != "0ms" then $s.interruptionMs.p50 <= $s.detectBound.ms + $t.DETECT_SLACK_MS else null end' \
		"$(target_text detect-wan)"
done
# A switch is false when the link delivered the probes in time; switches
# while the emulator itself ran late are reported, not gated.
row "false switches at interval 20ms (idle, jitter, CPU load)" timers \
	'.summary as $s | if ($s.falseSwitches|type) == "object" and ($s.falseSwitches|has("idle") and has("jitter") and has("load")) then "idle \($s.falseSwitches.idle), jitter \($s.falseSwitches.jitter), load \($s.falseSwitches.load) (with the link late: \([$s.linkLateSwitches[]] | add // 0))" else null end' \
	'.summary.falseSwitches as $f | if ($f|type) == "object" and ($f|has("idle") and has("jitter") and has("load")) and ([$f[]] | all(type == "number")) then ([$f[]] | add) <= $t.FALSE_SWITCHES else null end' \
	"$(target_text timers)"
# The soak: a quick run is the smoke (no leak verdict), a full one has it.
row "soak: lost outside windows, TCP reset, leftovers$([ "$M" = full ] && echo ", leak verdict")" soak \
	'.summary as $s | if ($s.lostOutsideWindows|type) == "number" and ($s.leftovers|type) == "number" then "\($s.lostOutsideWindows) lost, reset \($s.tcpReset), \($s.leftovers) left, restarts not up \($s.restartsNotUp), reloads rejected \($s.reloadErrors), leak \($s.leakVerdict) (\(.settings.minutes // "?") min)" else null end' \
	"$(jq -n --arg m "$M" '$m')"' as $m | .summary as $s | if ($s.lostOutsideWindows|type) == "number" and ($s.leftovers|type) == "number" and ($s.tcpReset|type) == "boolean" then $s.lostOutsideWindows <= $t.SOAK_LOST and ($s.tcpReset | not) and $s.leftovers == 0 and ($s.restartsNotUp // 1) == 0 and ($s.reloadErrors // 1) == 0 and (if $m == "full" then $s.leakVerdict == "flat" else ($s.leakVerdict == "flat" or $s.leakVerdict == "skipped") end) else null end' \
	"$(if [ "$M" = full ]; then target_text soak; else target_text soak-smoke; fi)"

if [ $bad != 0 ]; then
	echo "gate: FAILED ($M results in $R)"
	exit 1
fi
echo "gate: passed ($M results in $R)"
