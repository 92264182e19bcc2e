#!/usr/bin/env bash
# perf/gate-test.sh: checks perf/gate.sh on synthetic results (no root, no
# testbed): it passes good figures, including each target's boundary, and
# fails, naming the row, on each bad or missing one. Exit 1 on the first
# wrong answer.
set -o errexit -o nounset -o pipefail
P=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
MODE=quick

# results: good synthetic results of every gated scenario in $T, for MODE.
results() {
	rm -f "$T"/*.json
	local m=$MODE
	echo '{"summary":{"interruptionMs":{"p50":291.7,"p95":400}}}' >"$T/failover-$m.json"
	jq -n '{settings: {rounds: 7}, noise: {mbps: 0.01, cpu: 0.02},
		cells: [("defaults", "off", "gso-off") as $o | ("pod", "relay") as $s |
			{offloads: $o, sender: $s, tunnels: {"wireguard-go": {mbps: {p50: 1900}},
			 relay: {mbps: {p50: 1910}, vsStock: {mbps: {p50: 1.005, min: 0.98, max: 1.03}, cpu: {p50: 0.99}}}}}]}' >"$T/matrix-$m.json"
	echo '{"lowestCost":{"switches":13},"naive":{"switches":423}}' >"$T/flapping-$m.json"
	echo '{"summary":{"lostPackets":0,"interruptionMs":{"p50":12}}}' >"$T/failover-redundant-$m.json"
	echo '{"summary":{"cutDipMs":{"p95":0}}}' >"$T/failback-tcp-redundant-$m.json"
	echo '{"summary":{"hubPaths":100,"hubCpuPercentPer1000Paths":4.2}}' >"$T/scale-star-$m.json"
	echo '{"summary":{"dipMs":{"p95":0},"retransmitsPerRestore":{"p95":0},"baselineRetransmitsPerWindow":0}}' >"$T/failback-tcp-$m.json"
	echo '{"settings":{"wan":{"ab":"0ms"}},"summary":{"interruptionMs":{"p50":66}}}' >"$T/failover-interval-20ms-$m.json"
	echo '{"settings":{"wan":{"ab":"0ms"}},"summary":{"interruptionMs":{"p50":37}}}' >"$T/failover-interval-10ms-$m.json"
	echo '{"settings":{"wan":{"ab":"10ms"}},"summary":{"interruptionMs":{"p50":83.6},"detectBound":{"ms":82.2,"detectMs":60,"rttMs":20.2,"jitterMarginMs":2}}}' >"$T/failover-interval-20ms-wan-$m.json"
	echo '{"settings":{"wan":{"ab":"10ms"}},"summary":{"interruptionMs":{"p50":53.4},"detectBound":{"ms":52.2,"detectMs":30,"rttMs":20.2,"jitterMarginMs":2}}}' >"$T/failover-interval-10ms-wan-$m.json"
	echo '{"summary":{"falseSwitches":{"idle":0,"jitter":0,"load":0},"linkLateSwitches":{"idle":0,"jitter":0,"load":2}}}' >"$T/timers-$m.json"
	jq -n --arg v "$([ "$m" = full ] && echo flat || echo skipped)" \
		'{settings: {minutes: 2}, summary: {lostOutsideWindows: 0, tcpReset: false, leftovers: 0, restartsNotUp: 0, reloadErrors: 0, leakVerdict: $v}}' >"$T/soak-$m.json"
}
# edit NAME JQ: rewrite result NAME-MODE.json with JQ.
edit() { jq "$2" "$T/$1-$MODE.json" >"$T/x" && mv "$T/x" "$T/$1-$MODE.json"; }
# cell OFFLOADS SENDER JQ: rewrite one matrix cell's relay tunnel with JQ.
cell() { edit matrix "(.cells[] | select(.offloads == \"$1\" and .sender == \"$2\") | .tunnels.relay) |= ($3)"; }
# expect pass|fail [ROW [N]]: run the gate; on fail, ROW must be named as
# failing, and be the only failing row (or one of N: rows that read the
# same result file).
expect() {
	local out rc=0
	out=$(PERF_RESULTS=$T "$P/gate.sh" "$MODE") || rc=$?
	case $1 in
	pass) [ $rc = 0 ] || fail "gate failed on good results ($CASE):"$'\n'"$out" ;;
	fail)
		[ $rc != 0 ] || fail "gate passed on a bad row ($CASE):"$'\n'"$out"
		[ "$(grep -c 'gate: FAIL ' <<<"$out")" = "${3:-1}" ] || fail "want exactly ${3:-1} failing row(s) ($CASE):"$'\n'"$out"
		grep -q "gate: FAIL  $2" <<<"$out" || fail "the failing row is not named \"$2\" ($CASE):"$'\n'"$out" ;;
	esac
}
FO="failover median interruption" FL="path switches on a flapping link"
FD="TCP goodput dip after a restore" FR="retransmits after a restore"
RL="redundant failover, packets lost" RD="redundant TCP goodput dip at a cut" HC="hub CPU per 1000 directed paths"
T20="detection at interval 20ms, no added delay" T10="detection at interval 10ms, no added delay"
W20="detection at interval 20ms on the WAN link" W10="detection at interval 10ms on the WAN link"
TF="false switches at interval 20ms" SK="soak:"

CASE=good; results; expect pass

# The matrix: every cell, goodput and CPU.
MG="matrix off/relay: relay / stock wireguard-go goodput" MC="matrix off/relay: relay / stock wireguard-go CPU per GB"
CASE="matrix ratio 0.97 (boundary)"; results; cell off relay '.vsStock.mbps.p50 = 0.97'; expect pass
CASE="matrix ratio 0.969"; results; cell off relay '.vsStock.mbps.p50 = 0.969'; expect fail "$MG"
CASE="matrix ratio 0.96 in gso-off/pod"; results; cell gso-off pod '.vsStock.mbps.p50 = 0.96'; expect fail "matrix gso-off/pod: relay / stock wireguard-go goodput"
CASE="matrix ratio null"; results; cell defaults pod '.vsStock.mbps.p50 = null'; expect fail "matrix defaults/pod: relay / stock wireguard-go goodput"
CASE="matrix CPU at 1 + noise (boundary)"; results; cell off relay '.vsStock.cpu.p50 = 1.02'; expect pass
CASE="matrix CPU over 1 + noise"; results; cell off relay '.vsStock.cpu.p50 = 1.021'; expect fail "$MC"
CASE="matrix without a noise figure"; results; edit matrix '.noise.cpu = null'; expect fail "matrix defaults/pod: relay / stock wireguard-go CPU per GB" 6
CASE="quick: matrix noise over 0.15, the relay within it"; results; edit matrix '.noise.cpu = 0.25'; expect pass
CASE="matrix cell missing"; results; edit matrix '.cells |= map(select(.offloads != "off" or .sender != "relay"))'; expect fail "$MG" 2; expect fail "$MC" 2
CASE="matrix without the relay"; results; edit matrix '.cells[0].tunnels |= del(.relay)'; expect fail "matrix defaults/pod" 2
CASE="matrix result missing"; results; rm "$T/matrix-$MODE.json"; expect fail "matrix defaults/pod" 12

# Detection on the WAN link, against the limit.
CASE="WAN 20ms at limit + 10 (boundary)"; results; edit failover-interval-20ms-wan '.summary.interruptionMs.p50 = 92.2'; expect pass
CASE="WAN 20ms over limit + 10"; results; edit failover-interval-20ms-wan '.summary.interruptionMs.p50 = 92.3'; expect fail "$W20"
CASE="WAN 10ms over limit + 10"; results; edit failover-interval-10ms-wan '.summary.interruptionMs.p50 = 62.3'; expect fail "$W10"
CASE="WAN row without a limit"; results; edit failover-interval-10ms-wan '.summary.detectBound.ms = null'; expect fail "$W10"
CASE="WAN row measured with no added delay"; results; edit failover-interval-20ms-wan '.settings.wan.ab = "0ms"'; expect fail "$W20"
CASE="WAN result missing"; results; rm "$T/failover-interval-20ms-wan-$MODE.json"; expect fail "$W20"

# The zero-delay rows.
CASE="20ms median 70 ms (boundary)"; results; edit failover-interval-20ms '.summary.interruptionMs.p50 = 70'; expect pass
CASE="20ms median 71 ms"; results; edit failover-interval-20ms '.summary.interruptionMs.p50 = 71'; expect fail "$T20"
CASE="10ms median 41 ms"; results; edit failover-interval-10ms '.summary.interruptionMs.p50 = 41'; expect fail "$T10"
CASE="10ms median null"; results; edit failover-interval-10ms '.summary.interruptionMs.p50 = null'; expect fail "$T10"
CASE="zero-delay rows measured on the 10 ms link"; results; edit failover-interval-20ms '.settings.wan.ab = "10ms"'; edit failover-interval-10ms '.settings.wan.ab = "10ms"'; expect fail "detection at interval" 2

# The soak.
CASE="soak lost 1"; results; edit soak '.summary.lostOutsideWindows = 1'; expect fail "$SK"
CASE="soak TCP reset"; results; edit soak '.summary.tcpReset = true'; expect fail "$SK"
CASE="soak leftovers"; results; edit soak '.summary.leftovers = 2'; expect fail "$SK"
CASE="soak restart not up"; results; edit soak '.summary.restartsNotUp = 1'; expect fail "$SK"
CASE="soak reload rejected"; results; edit soak '.summary.reloadErrors = 1'; expect fail "$SK"
CASE="soak leak in a quick run"; results; edit soak '.summary.leakVerdict = "leak"'; expect fail "$SK"
CASE="soak without a figure"; results; edit soak '.summary.lostOutsideWindows = null'; expect fail "$SK"
CASE="soak missing"; results; rm "$T/soak-$MODE.json"; expect fail "$SK"
MODE=full
CASE="full: good"; results; expect pass
CASE="full: matrix noise 0.15 (boundary)"; results; edit matrix '.noise.cpu = 0.15'; expect pass
CASE="full: matrix noise over 0.15"; results; edit matrix '.noise.cpu = 0.151'; expect fail "matrix defaults/pod: relay / stock wireguard-go CPU per GB" 6
CASE="full: matrix of 6 rounds"; results; edit matrix '.settings.rounds = 6'; expect fail "matrix defaults/pod: relay / stock wireguard-go goodput" 6
CASE="full: soak without a leak verdict"; results; edit soak '.summary.leakVerdict = "skipped"'; expect fail "$SK"
CASE="full: soak leak"; results; edit soak '.summary.leakVerdict = "leak"'; expect fail "$SK"
MODE=quick

# The rows that were there before.
CASE="redundant lost 1"; results; edit failover-redundant '.summary.lostPackets = 1'; expect fail "$RL"
CASE="redundant lost null"; results; edit failover-redundant '.summary.lostPackets = null'; expect fail "$RL"
CASE="redundant dip 99 ms (boundary)"; results; edit failback-tcp-redundant '.summary.cutDipMs.p95 = 99'; expect pass
CASE="redundant dip 100 ms"; results; edit failback-tcp-redundant '.summary.cutDipMs.p95 = 100'; expect fail "$RD"
CASE="failback boundaries"; results; edit failback-tcp '.summary.dipMs.p95 = 99 | .summary.retransmitsPerRestore.p95 = 15 | .summary.baselineRetransmitsPerWindow = 5'; expect pass
CASE="failback dip 100 ms"; results; edit failback-tcp '.summary.dipMs.p95 = 100'; expect fail "$FD"
CASE="failback retransmit burst"; results; edit failback-tcp '.summary.retransmitsPerRestore.p95 = 16 | .summary.baselineRetransmitsPerWindow = 5'; expect fail "$FR"
CASE="failback no baseline"; results; edit failback-tcp '.summary.baselineRetransmitsPerWindow = null'; expect fail "$FR"
CASE="failback dip null"; results; edit failback-tcp '.summary.dipMs.p95 = null'; expect fail "$FD"
CASE="hub CPU 4.99 % (boundary)"; results; edit scale-star '.summary.hubCpuPercentPer1000Paths = 4.99'; expect pass
CASE="hub CPU 5 %"; results; edit scale-star '.summary.hubCpuPercentPer1000Paths = 5'; expect fail "$HC"
CASE="hub result missing"; results; rm "$T/scale-star-$MODE.json"; expect fail "$HC"
CASE="a false switch under load"; results; edit timers '.summary.falseSwitches.load = 1'; expect fail "$TF"
CASE="false switches null"; results; edit timers '.summary.falseSwitches.load = null'; expect fail "$TF"
CASE="timers result missing"; results; rm "$T/timers-$MODE.json"; expect fail "$TF"
CASE="timers without the load case"; results; edit timers 'del(.summary.falseSwitches.load)'; expect fail "$TF"
CASE="failover 350 ms (boundary)"; results; edit failover '.summary.interruptionMs.p50 = 350'; expect pass
CASE="failover 351 ms"; results; edit failover '.summary.interruptionMs.p50 = 351'; expect fail "$FO"
CASE="failover null"; results; edit failover '.summary.interruptionMs.p50 = null'; expect fail "$FO"
CASE="flapping ours = naive/10"; results; edit flapping '.lowestCost.switches = 10 | .naive.switches = 100'; expect fail "$FL"
CASE="flapping ours > naive"; results; edit flapping '.lowestCost.switches = 50 | .naive.switches = 40'; expect fail "$FL"
CASE="flapping no naive"; results; edit flapping '.naive.switches = null'; expect fail "$FL"
CASE="failover result missing"; results; rm "$T/failover-$MODE.json"; expect fail "$FO"
CASE="not JSON"; results; echo '{' >"$T/failover-$MODE.json"; expect fail "$FO"
echo "perf/gate.sh: all checks passed"
