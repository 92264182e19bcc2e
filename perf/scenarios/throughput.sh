#!/usr/bin/env bash
# perf/scenarios/throughput.sh: scenario 2, pod-a -> pod-b TCP goodput
# (iperf3), two parts:
#
#  limited:   the default WAN delays plus per-link rate limits
#             (TP_RATE_AB, TP_RATE_AC, TP_RATE_CB), over the direct path
#             and over the consumer path (direct link cut), relays in TUN.
#  unlimited: A and B joined by a plain veth (no emulator, so its ceiling
#             plays no part, every offload off), no delay, side by side
#             and interleaved: plain routing over the veth (the machine's
#             ceiling), liqo-relay TUN-TUN, TUN-TUN with translation,
#             TUN-netstack (B's netstack relay forwarding to pod-b's
#             iperf3), medians compared. These senders are in pod-a, so
#             packets reach A's tunnel already cut to the MTU. The
#             comparison with stock wireguard-go, in every underlay and
#             sender condition, is the throughput matrix (matrix.sh); the
#             variants wireguard-go, wireguard-go-offload and
#             relay-tun-offload (sender in A's own namespace) are still
#             here on request.
#
# Env: TP_RUNS (5), TP_SECONDS per run (5), TP_PARTS ("limited unlimited"),
# TP_MTU device MTU of both tunnels (1420, wireguard-go's default),
# TP_VARIANTS (the unlimited variants, "veth relay-tun
# relay-tun-translated relay-netstack" unless given), RESULT.
source "$(dirname "$0")/../lib.sh"
source "$PERF_ROOT/analyze/common.sh"

RUNS=${TP_RUNS:-5}
SECS=${TP_SECONDS:-5}
PARTS=${TP_PARTS:-limited unlimited}
VARIANTS=${TP_VARIANTS:-veth relay-tun relay-tun-translated relay-netstack}
RATE_AB=${TP_RATE_AB:-200mbit} RATE_AC=${TP_RATE_AC:-100mbit} RATE_CB=${TP_RATE_CB:-100mbit}
NAME=throughput-${RESULT:-default}

perf_require iperf3 wg
perf_trap
mkdir -p "$PERF_RESULTS"
OUT=$(mktemp -d)
mkdir -p "$OUT/runs"
trap 'rc=$?; trap - EXIT INT TERM; perf_down; rm -rf "$OUT"; exit $rc' EXIT INT TERM

# tunnel_cpu NAME...: CPU time (user + system, clock ticks) used so far by
# the processes start()ed as NAME... (the tunnel: relays or wireguard-go).
tunnel_cpu() {
	local n p t=0
	for n in "$@"; do
		for p in $(pgrep -P "$(cat "$PERF_STATE/$n.pid")"); do
			t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
		done
	done
	echo "$t"
}
TICK=$(getconf CLK_TCK)

# iperf NAME [FROM]: one run pod-a -> pod-b (or from namespace FROM, bound
# to $POD_A_GW), Mbit/s received appended to $OUT/NAME. With TUNNEL set to
# the start() names of the tunnel's two processes, their CPU time per GB
# received is appended to $OUT/cpu/NAME: on a busy machine it moves less
# than goodput, which depends on how much CPU the neighbours leave.
iperf() {
	local j c0=0 c1
	[ -z "${TUNNEL:-}" ] || c0=$(tunnel_cpu $TUNNEL)
	if [ -n "${2:-}" ]; then
		j=$(nsx "$2" iperf3 -J -B "$POD_A_GW" -c "$POD_B" -t "$SECS" -O 1)
	else
		j=$(nsx pod-a iperf3 -J -c "$POD_B" -t "$SECS" -O 1)
	fi || { log "iperf3 $1 failed"; echo 0 >>"$OUT/runs/$1"; return 0; }
	echo "$j" | jq '.end.sum_received.bits_per_second/1e6' >>"$OUT/runs/$1"
	if [ -n "${TUNNEL:-}" ]; then
		c1=$(tunnel_cpu $TUNNEL)
		mkdir -p "$OUT/cpu"
		echo "$j" | jq --argjson c $((c1 - c0)) --argjson t "$TICK" 'if .end.sum_received.bytes > 0 then $c / $t * 1000 / (.end.sum_received.bytes / 1e9) | round else empty end' >>"$OUT/cpu/$1"
	fi
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
	want() { [[ " $VARIANTS " == *" $1 "* ]]; }
	# switches: path switches of both relays so far (a busy machine can
	# starve the relays' probing and fail a healthy direct path over to the
	# consumer path, 50 ms away, in the middle of a run).
	switches() {
		local n t=0
		for n in provider-a provider-b; do
			t=$((t + $({ relay_metrics "$n" || true; } | awk '/^relay_path_switches_total/ && !/reason="initial"/ {s += $NF} END {print s + 0}')))
		done
		echo "$t"
	}
	# variant NAME MODE_B TRANSLATE [FROM]: restart the relays that way and
	# measure (from namespace FROM, see iperf).
	relay_variant() {
		want "$1" || return 0
		relays_stop
		PERF_MODE_B=$2 PERF_TRANSLATE=$3 relays_configure
		relays_start
		local before
		before=$(switches)
		TUNNEL="relay-a relay-b" iperf "$1" "${4:-}"
		echo $(($(switches) - before)) >>"$OUT/switches-$1"
		[ "$(tail -1 "$OUT/switches-$1")" = 0 ] || log "$1: relay path switches during the run: $(tail -1 "$OUT/switches-$1")"
	}
	for r in $(seq "$RUNS"); do
		log "round $r/$RUNS"
		relays_stop
		if want veth; then
			pods_via_direct
			iperf veth
		fi
		if want wireguard-go || want wireguard-go-offload; then
			wg_up
			! want wireguard-go || TUNNEL="wg-a wg-b" iperf wireguard-go
			! want wireguard-go-offload || TUNNEL="wg-a wg-b" iperf wireguard-go-offload provider-a
			wg_down
		fi
		relay_variant relay-tun tun 0
		relay_variant relay-tun-offload tun 0 provider-a
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
for f in "$OUT"/switches-*; do
	[ -f "$f" ] || continue
	jq -n --arg k "${f##*/switches-}" --argjson v "$(jq -s . "$f")" '{($k): $v}'
done | jq -s 'add // {}' >"$OUT/switches.json"
for f in "$OUT"/cpu/*; do
	[ -f "$f" ] || continue
	jq -n --arg k "$(basename "$f")" --argjson v "$(stats_json "$f")" '{($k): $v}'
done | jq -s 'add // {}' >"$OUT/cpu.json"
jq -n --arg name "$NAME" --argjson machine "$(machine_json)" --arg when "$(date -u +%FT%TZ)" \
	--arg cmd "${PERF_COMMAND:-perf/scenarios/throughput.sh}" --argjson runs "$RUNS" --argjson secs "$SECS" \
	--arg rab "$RATE_AB" --arg rac "$RATE_AC" --arg rcb "$RATE_CB" --arg mtu "${TP_MTU:-1420}" \
	--slurpfile all "$OUT/all.json" --slurpfile sw "$OUT/switches.json" \
	--slurpfile cpu "$OUT/cpu.json" \
	'{scenario:"throughput", name:$name, when:$when, command:$cmd, machine:$machine,
	  settings:{runs:$runs, secondsPerRun:$secs, limited:{ab:$rab, ac:$rac, cb:$rcb, wan:{ab:env.WAN_AB_DELAY, ac:env.WAN_AC_DELAY, cb:env.WAN_CB_DELAY}},
	            unlimitedMtu:($mtu|tonumber)},
	  mbps:$all[0],
	  relayPathSwitchesPerRun:$sw[0],
	  tunnelCpuMsPerGB:$cpu[0]}' \
	>"$PERF_RESULTS/$NAME.json"
log "wrote $PERF_RESULTS/$NAME.json"
jq -c '(.mbps|map_values(.p50)) + {cpuMsPerGB:(.tunnelCpuMsPerGB|map_values(.p50))}' "$PERF_RESULTS/$NAME.json"

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
