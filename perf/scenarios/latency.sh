#!/usr/bin/env bash
# perf/scenarios/latency.sh: scenario 1. Pod-to-pod RTT distributions over
# the direct path and over the consumer path (both through the relays; the
# consumer path is forced by cutting the direct link), the underlay RTTs
# without relays for reference, and the relay's own added latency with no
# WAN delay: RTT to the peer relay's overlay address (through both relays'
# WireGuard) against RTT to its underlay address (same wires, no relay).
#
# Env: LAT_COUNT pings per measurement (500), LAT_INTERVAL (0.01),
# WAN_*_DELAY (lib.sh), RESULT name suffix (default "default").
source "$(dirname "$0")/../lib.sh"
source "$PERF_ROOT/analyze/common.sh"

COUNT=${LAT_COUNT:-500}
INTERVAL=${LAT_INTERVAL:-0.01}
NAME=latency-${RESULT:-default}

perf_require
perf_trap
perf_up
W=$PERF_STATE/latency
mkdir -p "$W" "$PERF_RESULTS"

# rtts NS DST OUT: COUNT pings, one RTT in ms per line.
rtts() {
	nsx "$1" ping -n -i "$INTERVAL" -c "$COUNT" -W 2 "$2" | awk -F'time=' '/time=/{split($2, a, " "); print a[1]}' >"$3"
	[ -s "$3" ] || die "no answers from $2 in $1"
}

log "direct path: pod-a -> pod-b"
wait_for 30 "direct path active" active_is provider-a direct
rtts pod-a "$POD_B" "$W/direct"
rtts provider-a "$AB_B" "$W/underlay-direct"

log "consumer path: cutting the direct link"
wan_set ab --cut
wait_for 20 "consumer path active on A" active_is provider-a consumer
wait_for 20 "consumer path active on B" active_is provider-b consumer
rtts pod-a "$POD_B" "$W/consumer"
rtts provider-a "$CB_B" "$W/underlay-consumer"
wan_set ab --restore
wait_for 30 "direct path back" active_is provider-a direct
wait_for 30 "direct path back on B" active_is provider-b direct

log "relay overhead: no WAN delay"
wan_zero
sleep 1
rtts provider-a "$OVL_B" "$W/zero-relay"
rtts provider-a "$AB_B" "$W/zero-underlay"
rtts pod-a "$POD_B" "$W/zero-pods"
path_zero=$(active_path provider-a)

j() { stats_json "$W/$1"; }
jq -n --arg name "$NAME" --argjson machine "$(machine_json)" --arg when "$(date -u +%FT%TZ)" \
	--arg cmd "${PERF_COMMAND:-perf/scenarios/latency.sh}" --argjson count "$COUNT" --arg iv "$INTERVAL" \
	--arg modeA "$PERF_MODE_A" --arg modeB "$PERF_MODE_B" --arg pz "$path_zero" \
	--argjson d "$(j direct)" --argjson c "$(j consumer)" --argjson ud "$(j underlay-direct)" --argjson uc "$(j underlay-consumer)" \
	--argjson zr "$(j zero-relay)" --argjson zu "$(j zero-underlay)" --argjson zp "$(j zero-pods)" \
	'{scenario:"latency", name:$name, when:$when, command:$cmd, machine:$machine,
	  settings:{count:$count, interval:$iv, modeA:$modeA, modeB:$modeB,
	            wan:{ab:env.WAN_AB_DELAY, ac:env.WAN_AC_DELAY, cb:env.WAN_CB_DELAY}},
	  rttMs:{podToPodDirect:$d, podToPodConsumer:$c, underlayDirect:$ud, underlayConsumer:$uc},
	  zeroDelay:{activePath:$pz, relayOverlay:$zr, underlay:$zu, podToPod:$zp,
	             relayAddedMsP50:(($zr.p50 - $zu.p50)*1000|round/1000), relayAddedMsMean:(($zr.mean - $zu.mean)*1000|round/1000)},
	  directVsConsumerP50Ratio:(($c.p50 / $d.p50)*100|round/100)}' >"$PERF_RESULTS/$NAME.json"
log "wrote $PERF_RESULTS/$NAME.json"
jq -c '{direct:.rttMs.podToPodDirect.p50, consumer:.rttMs.podToPodConsumer.p50, relayAdded:.zeroDelay.relayAddedMsP50}' "$PERF_RESULTS/$NAME.json"

if have_gnuplot; then
	for f in direct consumer zero-relay zero-underlay zero-pods; do
		sort -g "$W/$f" | awk '{v[NR]=$1} END{for(i=1;i<=NR;i++) print v[i], i/NR}' >"$W/$f.cdf"
	done
	gnuplot <<GP
set terminal pngcairo size 1100,500 font ",10"
set output "$PERF_RESULTS/$NAME.png"
set multiplot layout 1,2 title "liqo-relay pod-to-pod RTT ($NAME; WAN one way: A-B $WAN_AB_DELAY, A-consumer $WAN_AC_DELAY, consumer-B $WAN_CB_DELAY)"
set grid; set key bottom right; set ylabel "CDF"; set yrange [0:1]
set xlabel "RTT (ms)"
plot "$W/direct.cdf" with lines lw 2 title "direct path", "$W/consumer.cdf" with lines lw 2 title "consumer path"
set xlabel "RTT with no WAN delay (ms)"
plot "$W/zero-underlay.cdf" with lines lw 2 title "underlay A->B (no relay)", \
     "$W/zero-relay.cdf" with lines lw 2 title "relay A->relay B (WireGuard)", \
     "$W/zero-pods.cdf" with lines lw 2 title "pod-a -> pod-b via relays"
unset multiplot
GP
	log "wrote $PERF_RESULTS/$NAME.png"
fi
