#!/usr/bin/env bash
# perf/scenarios/throughput.sh: scenario 2, pod-a -> pod-b TCP goodput
# (iperf3), two parts:
#
#  limited:   the default WAN delays plus per-link rate limits
#             (TP_RATE_AB, TP_RATE_AC, TP_RATE_CB), over the direct path
#             and over the consumer path (direct link cut), relays in TUN.
#  unlimited: A and B joined by a plain veth (no emulator, so its ceiling
#             plays no part), no delay, side by side and interleaved:
#             plain routing over the veth (the machine's ceiling), stock
#             wireguard-go at go.mod's version, liqo-relay TUN-TUN,
#             TUN-TUN with translation, TUN-netstack (B's netstack relay
#             forwarding to pod-b's iperf3), medians compared.
#
# Env: TP_RUNS (5), TP_SECONDS per run (5), TP_PARTS ("limited unlimited"),
# TP_MTU device MTU of both tunnels (1420, wireguard-go's default), RESULT.
source "$(dirname "$0")/../lib.sh"
source "$PERF_ROOT/analyze/common.sh"

RUNS=${TP_RUNS:-5}
SECS=${TP_SECONDS:-5}
PARTS=${TP_PARTS:-limited unlimited}
RATE_AB=${TP_RATE_AB:-200mbit} RATE_AC=${TP_RATE_AC:-100mbit} RATE_CB=${TP_RATE_CB:-100mbit}
NAME=throughput-${RESULT:-default}

perf_require iperf3 wg
perf_trap
mkdir -p "$PERF_RESULTS"
OUT=$(mktemp -d)
mkdir -p "$OUT/runs"
trap 'rc=$?; trap - EXIT INT TERM; perf_down; rm -rf "$OUT"; exit $rc' EXIT INT TERM

# iperf NAME: one run pod-a -> pod-b, Mbit/s received appended to $OUT/NAME.
iperf() {
	local j
	j=$(nsx pod-a iperf3 -J -c "$POD_B" -t "$SECS" -O 1) || { log "iperf3 $1 failed"; echo 0 >>"$OUT/runs/$1"; return 0; }
	echo "$j" | jq '.end.sum_received.bits_per_second/1e6' >>"$OUT/runs/$1"
	log "$1: $(tail -1 "$OUT/runs/$1") Mbit/s"
}

if [[ " $PARTS " == *" limited "* ]]; then
	log "part 1: rate-limited WAN (ab $RATE_AB, ac $RATE_AC, cb $RATE_CB)"
	perf_up
	start pod-b iperf-server iperf3 -s
	wan_set ab --rate "$RATE_AB"; wan_set ac --rate "$RATE_AC"; wan_set cb --rate "$RATE_CB"
	for r in $(seq "$RUNS"); do
		wait_for 30 "direct path" active_is provider-a direct
		iperf limited-direct
		wan_set ab --cut
		wait_for 20 "consumer path on A" active_is provider-a consumer
		wait_for 20 "consumer path on B" active_is provider-b consumer
		iperf limited-consumer
		wan_set ab --restore
	done
	perf_down
	PERF_PREFIX=lrp$(od -An -N2 -tx1 /dev/urandom | tr -d ' \n') PERF_STATE=/run/liqo-relay-perf/$PERF_PREFIX
fi

if [[ " $PARTS " == *" unlimited "* ]]; then
	log "part 2: unlimited, A-B over a plain veth"
	wg_build
	export PERF_WAN_AB=veth PERF_MTU=${TP_MTU:-1420}
	perf_up
	start pod-b iperf-server iperf3 -s
	# variant NAME MODE_B TRANSLATE: restart the relays that way and measure.
	relay_variant() {
		relays_stop
		PERF_MODE_B=$2 PERF_TRANSLATE=$3 relays_configure
		relays_start
		iperf "$1"
	}
	for r in $(seq "$RUNS"); do
		log "round $r/$RUNS"
		relays_stop
		pods_via_direct
		iperf veth
		wg_up
		iperf wireguard-go
		wg_down
		relay_variant relay-tun tun 0
		relay_variant relay-tun-translated tun 1
		relay_variant relay-netstack netstack 0
	done
fi

# ---- results ----
for f in "$OUT"/runs/*; do
	[ -f "$f" ] || continue
	jq -n --arg k "$(basename "$f")" --argjson v "$(stats_json "$f")" '{($k): $v}'
done | jq -s 'add // {}' >"$OUT/all.json.tmp"
mv "$OUT/all.json.tmp" "$OUT/all.json"
jq -n --arg name "$NAME" --argjson machine "$(machine_json)" --arg when "$(date -u +%FT%TZ)" \
	--arg cmd "${PERF_COMMAND:-perf/scenarios/throughput.sh}" --argjson runs "$RUNS" --argjson secs "$SECS" \
	--arg rab "$RATE_AB" --arg rac "$RATE_AC" --arg rcb "$RATE_CB" --arg mtu "${TP_MTU:-1420}" \
	--slurpfile all "$OUT/all.json" \
	'{scenario:"throughput", name:$name, when:$when, command:$cmd, machine:$machine,
	  settings:{runs:$runs, secondsPerRun:$secs, limited:{ab:$rab, ac:$rac, cb:$rcb, wan:{ab:env.WAN_AB_DELAY, ac:env.WAN_AC_DELAY, cb:env.WAN_CB_DELAY}},
	            unlimitedMtu:($mtu|tonumber)},
	  mbps:$all[0],
	  relayTunVsWireguardGoP50:(if $all[0]["relay-tun"] and $all[0]["wireguard-go"] then (($all[0]["relay-tun"].p50 / $all[0]["wireguard-go"].p50)*1000|round/1000) else null end)}' \
	>"$PERF_RESULTS/$NAME.json"
log "wrote $PERF_RESULTS/$NAME.json"
jq -c '(.mbps|map_values(.p50)) + {tunVsWg:.relayTunVsWireguardGoP50}' "$PERF_RESULTS/$NAME.json"

if have_gnuplot; then
	jq -r '.mbps | to_entries[] | "\(.key) \(.value.p50) \(.value.min) \(.value.max)"' "$PERF_RESULTS/$NAME.json" >"$OUT/bars.dat"
	gnuplot <<GP
set terminal pngcairo size 1000,500 font ",10"
set output "$PERF_RESULTS/$NAME.png"
set title "pod-a -> pod-b TCP goodput, iperf3 ($NAME): median of $RUNS, bars min..max"
set ylabel "Mbit/s"; set grid y; set yrange [0:*]
set style fill solid 0.6; set boxwidth 0.6
set xtics rotate by -20
plot "$OUT/bars.dat" using 0:2:xtic(1) with boxes lc rgb "steelblue" notitle, \
     "" using 0:2:3:4 with yerrorbars lc rgb "black" pt 0 notitle
GP
	log "wrote $PERF_RESULTS/$NAME.png"
fi
