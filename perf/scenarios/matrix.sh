#!/usr/bin/env bash
# perf/scenarios/matrix.sh: the throughput matrix. Provider A and provider
# B joined by a plain veth pair (no emulator, no added delay), pods behind
# them, and three tunnels compared side by side, each in processes of its
# own, started afresh in every cell of every round:
#
#   wireguard-go        stock wireguard-go at go.mod's version, `wg set`
#   wireguard-go-again  the same, a second time: the noise of this machine
#                       between two identical runs
#   relay-std           liqo-relay in TUN mode on wireguard-go's StdNetBind
#                       (`relay run --sockets std`)
#   relay               liqo-relay in TUN mode on its own Bind (internal/dataplane/conn/udpbind)
#
# The parts (MX_PARTS):
#
#  tcp    one TCP flow (iperf3) in every cell of
#           underlay offloads (MX_OFFLOADS) x sender (MX_SENDERS) x tunnel:
#           defaults  the A-B veth as the kernel makes it (GSO, UDP GSO on;
#                     GRO off, as veth has it)
#           off       every offload off (checksums, SG, TSO, GSO, GRO)
#           gso-off   UDP segmentation off, GRO on: a real NIC without UDP GSO
#         and
#           pod       iperf3 in pod-a (its veth's offloads off, so segments
#                     reach A's tunnel cut to the MTU)
#           relay     iperf3 in provider-a's own namespace, bound to a pod
#                     address ($POD_A_GW): its TCP stack hands GSO
#                     super-packets to the tunnel's TUN device;
#  flows  MX_FLOWS parallel TCP flows (iperf3 -P) from pod-a;
#  udp    UDP from pod-a at fixed offered rates (MX_UDP, SIZE:PPS, payload
#         bytes and packets per second): packets per second delivered, loss.
#         A 1400-byte payload is over the 1420-byte tunnel MTU (1400 + 28):
#         each datagram crosses the tunnels as two IP fragments, as a
#         sender of such datagrams gets it (the table says so).
# flows and udp run with the underlay at its defaults, the way a gateway
# carrying many pods' traffic would see it.
#
# Every round measures every variant once, in an order rotated by the round
# (offloads, tunnels and senders each shifted by one): a slow start or a
# drifting neighbour then favours no variant. The analysis
# (perf/analyze/matrix.sh) refuses a run whose rounds were not rotated. It
# reports, per cell, the median and range of Mbit/s, the CPU milliseconds
# per GB of the tunnel processes at each end, and for each tunnel its ratio
# to stock wireguard-go measured in the same round (the paired ratio),
# median and range.
#
# Env: MX_ROUNDS (7), MX_SECONDS per measurement (4),
# MX_MTU device MTU of both tunnels (1420, wireguard-go's default),
# MX_PARTS ("tcp flows udp"), MX_OFFLOADS ("defaults off gso-off"),
# MX_SENDERS ("pod relay"), MX_TUNNELS ("wireguard-go wireguard-go-again
# relay-std relay"), MX_FLOWS ("1 4 16"), MX_UDP ("64:20000 64:100000
# 1400:20000 1400:100000"), MX_SIDE_ROUNDS rounds of flows and udp (3),
# RESULT.
source "$(dirname "$0")/../lib.sh"
source "$PERF_ROOT/analyze/common.sh"
source "$PERF_ROOT/analyze/matrix.sh"

ROUNDS=${MX_ROUNDS:-7}
SIDE_ROUNDS=${MX_SIDE_ROUNDS:-3}
SECS=${MX_SECONDS:-4}
PARTS=${MX_PARTS:-tcp flows udp}
OFFLOADS=${MX_OFFLOADS:-defaults off gso-off}
SENDERS=${MX_SENDERS:-pod relay}
TUNNELS=${MX_TUNNELS:-wireguard-go wireguard-go-again relay-std relay}
FLOWS=${MX_FLOWS:-1 4 16}
UDP=${MX_UDP:-64:20000 64:100000 1400:20000 1400:100000}
NAME=matrix-${RESULT:-default}

perf_require iperf3 wg ethtool
OUT=$(mktemp -d)
trap 'rc=$?; trap - EXIT INT TERM; perf_down; rm -rf "$OUT"; exit $rc' EXIT INT TERM
mkdir -p "$PERF_RESULTS"
wg_build
export PERF_WAN_AB=veth PERF_MTU=${MX_MTU:-1420}
perf_up
relays_stop
start pod-b iperf-server iperf3 -s
TICK=$(getconf CLK_TCK)

# rot R WORD...: the words rotated left by R-1.
rot() {
	local r=$1; shift
	local n=$# k
	k=$(((r - 1) % n))
	echo "${@:k+1}" "${@:1:k}"
}

# cpu_ticks NAME: CPU time (user + system, clock ticks) used so far by the
# process start()ed as NAME (its child: start runs it under timeout).
cpu_ticks() {
	local p t=0
	for p in $(pgrep -P "$(cat "$PERF_STATE/$1.pid")"); do
		t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
	done
	echo "$t"
}

# Each tunnel: the start() names of its processes at A and B.
ends() { case $1 in wireguard-go*) echo "wg-a wg-b" ;; *) echo "relay-a relay-b" ;; esac; }
tunnel_up() {
	case $1 in
	wireguard-go*) wg_up ;;
	relay-std) PERF_RELAY_ARGS="--sockets std" relays_start ;;
	relay) PERF_RELAY_ARGS="" relays_start ;;
	*) die "unknown tunnel $1" ;;
	esac
}
tunnel_down() { case $1 in wireguard-go*) wg_down ;; *) relays_stop ;; esac; }
# switches: path switches of both relays so far, 0 for stock (a busy
# machine can starve the relays' probing and move a healthy direct path to
# the consumer path in the middle of a run: such a run is reported).
switches() {
	case $1 in wireguard-go*) echo 0; return ;; esac
	local n t=0
	for n in provider-a provider-b; do
		t=$((t + $({ relay_metrics "$n" || true; } | awk '/^relay_path_switches_total/ && !/reason="initial"/ {s += $NF} END {print s + 0}')))
	done
	echo "$t"
}

pos=0
# measure PART ROUND OFFLOADS SENDER TUNNEL [EXTRA_JSON] -- IPERF_ARGS...:
# one iperf3 run, appended to $OUT/m.jsonl as one measurement. The CPU
# time is the tunnel's over the whole run, so the bytes are the whole
# run's too: no omitted first second (on a veth with no delay, slow start
# is over in milliseconds).
measure() {
	local part=$1 round=$2 off=$3 sender=$4 tun=$5 extra=${6:-"{}"}
	shift 7
	local a b ca cb sw j ns=pod-a bind=()
	read -r a b <<<"$(ends "$tun")"
	[ "$sender" = pod ] || { ns=provider-a; bind=(-B "$POD_A_GW"); }
	ca=$(cpu_ticks "$a") cb=$(cpu_ticks "$b") sw=$(switches "$tun")
	if ! j=$(nsx "$ns" iperf3 -J "${bind[@]}" -c "$POD_B" -t "$SECS" "$@"); then
		log "iperf3 failed: $part $off $sender $tun: $(echo "$j" | jq -r '.error // empty' 2>/dev/null)"
		j='{"end":{}}'
	fi
	echo "$j" | jq -c --arg part "$part" --argjson round "$round" --argjson pos "$pos" --arg off "$off" \
		--arg sender "$sender" --arg tun "$tun" --argjson extra "$extra" \
		--argjson ca "$(($(cpu_ticks "$a") - ca))" --argjson cb "$(($(cpu_ticks "$b") - cb))" --argjson tick "$TICK" \
		--argjson sw "$(($(switches "$tun") - sw))" --argjson secs "$SECS" '
		{part: $part, round: $round, pos: $pos, offloads: $off, sender: $sender, tunnel: $tun, switches: $sw} + $extra +
		if $part == "udp" then
			(.end.sum // {}) as $s |
			{mbps: (($s.bits_per_second // 0) / 1e6), sent: ($s.packets // 0), lost: ($s.lost_packets // 0),
			 delivered: ((($s.packets // 0) - ($s.lost_packets // 0)) / $secs | round), loss: ($s.lost_percent // 100)}
		else
			(.end.sum_received.bytes // 0) as $bytes |
			{mbps: ((.end.sum_received.bits_per_second // 0) / 1e6),
			 retransmits: (.end.sum_sent.retransmits // null),
			 cpuA: (if $bytes > 0 then $ca / $tick * 1000 / ($bytes / 1e9) else null end),
			 cpuB: (if $bytes > 0 then $cb / $tick * 1000 / ($bytes / 1e9) else null end)}
		end' >>"$OUT/m.jsonl"
	log "$(tail -1 "$OUT/m.jsonl" | jq -r '"\(.part) r\(.round) \(.offloads)/\(.sender)/\(.tunnel)\(if .flows then " P\(.flows)" else "" end)\(if .size then " \(.size)B@\(.pps)pps" else "" end): \(.mbps | round) Mbit/s\(if .delivered then ", \(.delivered) pps delivered, \(.loss)% lost" else "" end)\(if .switches > 0 then ", \(.switches) path switches" else "" end)"')"
	pos=$((pos + 1))
}

if [[ " $PARTS " == *" tcp "* ]]; then
	for r in $(seq "$ROUNDS"); do
		log "tcp round $r/$ROUNDS"
		pos=0
		for off in $(rot "$r" $OFFLOADS); do
			ab_offloads "$off"
			for tun in $(rot "$r" $TUNNELS); do
				tunnel_up "$tun"
				for s in $(rot "$r" $SENDERS); do
					measure tcp "$r" "$off" "$s" "$tun" "{}" --
				done
				tunnel_down "$tun"
			done
		done
	done
fi
SIDE_TUNNELS=$(for t in $TUNNELS; do [ "$t" = wireguard-go-again ] || echo "$t"; done)
if [[ " $PARTS " == *" flows "* || " $PARTS " == *" udp "* ]]; then
	ab_offloads defaults
	for r in $(seq "$SIDE_ROUNDS"); do
		log "flows and udp round $r/$SIDE_ROUNDS"
		pos=0
		# shellcheck disable=SC2086
		for tun in $(rot "$r" $SIDE_TUNNELS); do
			tunnel_up "$tun"
			if [[ " $PARTS " == *" flows "* ]]; then
				for p in $(rot "$r" $FLOWS); do
					measure flows "$r" defaults pod "$tun" "{\"flows\":$p}" -- -P "$p"
				done
			fi
			if [[ " $PARTS " == *" udp "* ]]; then
				for u in $(rot "$r" $UDP); do
					size=${u%%:*} pps=${u##*:}
					measure udp "$r" defaults pod "$tun" "{\"size\":$size,\"pps\":$pps}" -- -u -l "$size" -b "$((size * pps * 8))"
				done
			fi
			tunnel_down "$tun"
		done
	done
fi

# ---- results ----
why=$(matrix_rotation "$OUT/m.jsonl") || die "the rounds were not rotated, no result: $why"
features=$(for o in $OFFLOADS; do ab_offloads "$o" 2>/dev/null; jq -n --arg o "$o" --arg f "$(ab_offloads_show provider-a)" '{($o): $f}'; done | jq -s add)
mkdir -p "$PERF_RESULTS/raw/$NAME"
cp "$OUT/m.jsonl" "$PERF_RESULTS/raw/$NAME/measurements.jsonl"
jq -n --arg name "$NAME" --argjson machine "$(machine_json)" --arg when "$(date -u +%FT%TZ)" \
	--arg cmd "${PERF_COMMAND:-perf/scenarios/matrix.sh}" --argjson rounds "$ROUNDS" --argjson side "$SIDE_ROUNDS" \
	--argjson secs "$SECS" --argjson mtu "$PERF_MTU" --argjson features "$features" \
	--arg offloads "$OFFLOADS" --arg senders "$SENDERS" --arg tunnels "$TUNNELS" \
	--argjson summary "$(matrix_summary "$OUT/m.jsonl")" --slurpfile m "$OUT/m.jsonl" \
	'{scenario: "matrix", name: $name, when: $when, command: $cmd, machine: $machine,
	  settings: {rounds: $rounds, sideRounds: $side, secondsPerRun: $secs, mtu: $mtu,
	             offloads: ($offloads | split(" ")), offloadFeatures: $features, senders: ($senders | split(" ")),
	             tunnels: ($tunnels | split(" ")), link: "A-B plain veth, no added delay", podVethOffloads: "off"},
	  rounds: ($m | group_by([.part, .round]) | map({part: .[0].part, round: .[0].round, order: (sort_by(.pos) | map([.offloads, .sender, .tunnel, (.flows // .size // "" | tostring)] | map(select(. != "")) | join("/")))})),
	  measurements: $m} + $summary' >"$PERF_RESULTS/$NAME.json"
log "wrote $PERF_RESULTS/$NAME.json"
jq -r '.cells[] | "\(.offloads)/\(.sender): " + ([.tunnels | to_entries[] | "\(.key) \(.value.mbps.p50 | round)\(if .value.vsStock then " (x\(.value.vsStock.mbps.p50))" else "" end)"] | join(", "))' "$PERF_RESULTS/$NAME.json" >&2
jq -c '{noise}' "$PERF_RESULTS/$NAME.json" >&2

if have_gnuplot; then
	jq -r '.cells[] | "\(.offloads)/\(.sender) \(.tunnels["wireguard-go"].mbps.p50 // 0) \(.tunnels["relay-std"].mbps.p50 // 0) \(.tunnels["relay"].mbps.p50 // 0)"' "$PERF_RESULTS/$NAME.json" >"$OUT/bars.dat"
	gnuplot <<GP
set terminal pngcairo size 1000,500 font ",10"
set output "$PERF_RESULTS/$NAME.png"
set title "TCP goodput by underlay offloads / sender, MTU $PERF_MTU, median of $ROUNDS rotated rounds ($NAME)"
set ylabel "Mbit/s"; set grid y; set yrange [0:*]
set style data histograms; set style histogram clustered gap 1
set style fill solid 0.7; set key top left
plot "$OUT/bars.dat" using 2:xtic(1) title "stock wireguard-go", "" using 3 title "relay --sockets std", "" using 4 title "relay"
GP
	log "wrote $PERF_RESULTS/$NAME.png"
fi
