#!/usr/bin/env bash
# perf/profile-throughput.sh [SECS]: where the relay's CPU per byte goes,
# against stock wireguard-go's, in TUN mode. In one testbed (A-B over a
# plain veth, MTU 1420, as throughput.sh's unlimited part), first the relay
# (RELAY, default bin/relay), then stock wireguard-go: one iperf3 run from
# provider-a's own namespace (offloads on; PROF_FROM=pod sends from pod-a,
# offloads off), and during SECS seconds of it (8) `perf record -F 999 -g`
# on both tunnel processes. Prints, for each variant, the goodput and the
# samples of each wireguard-go routine divided by the cipher's samples
# (perf/analyze/wgprofile.awk): CPU per byte in units of the cipher's cost,
# which a busy machine slows as much as everything else. Keeps the
# recordings in PROF_OUT (default: a new directory under /tmp) for
# `perf report -i`. Run it under the measurement lock.
source "$(dirname "$0")/lib.sh"
SECS=${1:-8}
FROM=${PROF_FROM:-offload}
OUT=${PROF_OUT:-$(mktemp -d /tmp/liqo-relay-profile.XXXXXX)}
case $FROM in offload | pod) ;; *) die "PROF_FROM must be offload or pod, not $FROM" ;; esac
perf_require iperf3 wg perf
perf_trap
wg_build
mkdir -p "$OUT"
export PERF_WAN_AB=veth PERF_MTU=1420
perf_up
start pod-b iperf-server iperf3 -s
# System calls of the data path (TUN writes and reads, UDP batches) and
# context switches: their count per MB shows the batch sizes.
EVENTS=syscalls:sys_enter_write,syscalls:sys_enter_read,syscalls:sys_enter_recvmmsg,syscalls:sys_enter_sendmmsg,context-switches
child() { pgrep -P "$(cat "$PERF_STATE/$1.pid")"; }
# profile TAG A B: profile the tunnel processes start()ed as A and B.
profile() {
	local tag=$1 pids j
	pids=$(child "$2"),$(child "$3")
	if [ "$FROM" = pod ]; then
		nsx pod-a iperf3 -J -c "$POD_B" -t $((SECS + 4)) >"$OUT/$tag.json" &
	else
		nsx provider-a iperf3 -J -B "$POD_A_GW" -c "$POD_B" -t $((SECS + 4)) >"$OUT/$tag.json" &
	fi
	j=$!
	sleep 2
	perf stat -x, -e "$EVENTS" -p "$pids" -o "$OUT/$tag.stat" -- sleep "$SECS" &
	perf record -q -F 999 -g -p "$pids" -o "$OUT/$tag.data" -- sleep "$SECS" 2>/dev/null
	wait "$j" $!
	local mbit
	mbit=$(jq '.end.sum_received.bits_per_second / 1e6' "$OUT/$tag.json")
	printf '%s (%s): %.0f Mbit/s, load %s\n' "$tag" "$FROM" "$mbit" "$(cut -d' ' -f1-3 /proc/loadavg)"
	# Events per MB received, the run's mean goodput taken for the window's.
	awk -F, -v mb="$(awk -v m="$mbit" -v s="$SECS" 'BEGIN {print m * s / 8}')" \
		'$1 ~ /^[0-9]+$/ && mb > 0 {printf "  %s per MB: %.1f\n", $3, $1 / mb}' "$OUT/$tag.stat"
	perf script -i "$OUT/$tag.data" -F comm,tid,ip,sym 2>/dev/null | awk -f "$PERF_ROOT/analyze/wgprofile.awk"
}
profile relay relay-a relay-b
relays_stop
wg_up
profile wireguard-go wg-a wg-b
wg_down
log "recordings in $OUT"
