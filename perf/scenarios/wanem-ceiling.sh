#!/usr/bin/env bash
# perf/scenarios/wanem-ceiling.sh: the emulator's own ceiling. Two
# namespaces joined by a plain veth pair, and the same through a `relay
# wanem` bridge with no impairment: TCP throughput (iperf3) and UDP packet
# rate with 64-byte payloads, RUNS interleaved rounds, medians compared.
# The bridge must be well above any rate a scenario asks of it.
#
# Env: CEIL_RUNS (5), CEIL_SECONDS per run (5), RESULT (default).
source "$(dirname "$0")/../lib.sh"
source "$PERF_ROOT/analyze/common.sh"

RUNS=${CEIL_RUNS:-5}
SECS=${CEIL_SECONDS:-5}
NAME=wanem-ceiling-${RESULT:-default}

perf_require iperf3
perf_trap
mkdir -p "$PERF_STATE/wanem" "$PERF_RESULTS"
W=$PERF_STATE/ceiling
mkdir -p "$W"
for n in v1 v2 w1 w2; do ns_add "$n"; done
# Plain veth: v1 -- v2.
veth v1 eth0 v2 eth0
nsx v1 ip addr add 192.168.50.1/24 dev eth0
nsx v2 ip addr add 192.168.50.2/24 dev eth0
# Through the emulator: w1 -- [wan-x] -- w2, same /24 (L2).
wan_link x w1 eth0 192.168.60.1 w2 eth0 192.168.60.2
start w2 iperf-w iperf3 -s
start v2 iperf-v iperf3 -s
sleep 0.5

# run NS DST KIND: one iperf3 run; prints Mbit/s (tcp) or packets/s (udp).
run() {
	local out
	case $3 in
	tcp) out=$(nsx "$1" iperf3 -J -c "$2" -t "$SECS") && echo "$out" | jq '.end.sum_received.bits_per_second/1e6' ;;
	udp) out=$(nsx "$1" iperf3 -J -u -b 0 -l 64 -c "$2" -t "$SECS") &&
		echo "$out" | jq '(.end.sum.packets - .end.sum.lost_packets) / .end.sum.seconds' ;;
	esac
}
for r in $(seq "$RUNS"); do
	for kind in tcp udp; do
		run v1 192.168.50.2 $kind >>"$W/veth-$kind" || die "iperf3 over veth failed"
		run w1 192.168.60.2 $kind >>"$W/wanem-$kind" || die "iperf3 through wanem failed"
	done
	log "round $r/$RUNS: veth $(tail -1 "$W/veth-tcp") Mbit/s $(tail -1 "$W/veth-udp") pps; wanem $(tail -1 "$W/wanem-tcp") Mbit/s $(tail -1 "$W/wanem-udp") pps"
done
wan_show x >"$W/wanem-stats.json"

j() { stats_json "$W/$1"; }
jq -n --arg name "$NAME" --argjson machine "$(machine_json)" --arg when "$(date -u +%FT%TZ)" \
	--arg cmd "${PERF_COMMAND:-perf/scenarios/wanem-ceiling.sh}" --argjson runs "$RUNS" --argjson secs "$SECS" \
	--argjson vt "$(j veth-tcp)" --argjson vu "$(j veth-udp)" --argjson wt "$(j wanem-tcp)" --argjson wu "$(j wanem-udp)" \
	--slurpfile ws "$W/wanem-stats.json" \
	'{scenario:"wanem-ceiling", name:$name, when:$when, command:$cmd, machine:$machine,
	  settings:{runs:$runs, secondsPerRun:$secs, udpPayloadBytes:64},
	  tcpMbps:{veth:$vt, wanem:$wt}, udpPps:{veth:$vu, wanem:$wu},
	  wanemVsVethTcpP50:(($wt.p50/$vt.p50)*100|round/100), wanemCounters:$ws[0].stats}' >"$PERF_RESULTS/$NAME.json"
log "wrote $PERF_RESULTS/$NAME.json"
jq -c '{tcpMbps:(.tcpMbps|map_values(.p50)), udpPps:(.udpPps|map_values(.p50))}' "$PERF_RESULTS/$NAME.json"
