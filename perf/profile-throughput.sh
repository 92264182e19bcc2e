#!/usr/bin/env bash
# perf/profile-throughput.sh [SECS]: where the relay's CPU per byte goes,
# against stock wireguard-go's, in TUN mode. In one testbed (A-B over a
# plain veth, MTU 1420, as throughput.sh's unlimited part), three variants
# one after the other: the relay (RELAY, default bin/relay) with its own
# UDP sockets (`run --sockets batch`, the default), the same relay on
# wireguard-go's StdNetBind (`run --sockets std`), then stock
# wireguard-go. For each, one iperf3 run from provider-a's own namespace
# (TSO super-packets reach the TUN; PROF_FROM=pod sends from pod-a, whose
# veth has offloads off), with the A-B veth's offloads as PERF_AB_OFFLOADS
# sets them (perf/lib.sh: off, defaults, gso-off; the result records it),
# and during SECS seconds of it (8):
#
#   - `perf record -F 999 -g` on both tunnel processes. This VM has no
#     hardware PMU (`perf stat -e instructions` is "not supported"), so
#     perf samples the software cpu-clock event: samples are CPU time of
#     the two processes, their system calls and the softirq work the
#     kernel does in their context included, everything else (iperf3, the
#     pods' forwarding on other threads) excluded;
#   - `perf stat` of syscall tracepoints (read, write, recvmmsg, sendmmsg)
#     and context switches on the same processes: counts, not samples.
#
# Prints, for each variant, the goodput, the events per MB received, and
# the samples of each wireguard-go routine divided by the cipher's samples
# (perf/analyze/wgprofile.awk): CPU per byte in units of the cipher's cost,
# which a busy machine slows as much as everything else. Writes the summary
# to $PERF_RESULTS/profile-${RESULT:-default}.json (below), and keeps the
# recordings in PROF_OUT (default: a new directory under /tmp) for
# `perf report -i`. Run it under the measurement lock.
#
# The summary, per variant (relay, relay-std, wireguard-go):
#   mbps                  iperf3's received goodput over the whole run
#   samples               perf samples of both tunnel processes
#   cipherShare           samples in ChaCha20/Poly1305 code / samples
#   copyShare             samples in byte copies (memmove, copy_user*,
#                         _copy_to/from_iter, csum_partial_copy...) / samples
#   syscallsPerMB         {read, write, recvmmsg, sendmmsg}: calls during
#                         the window per MB (1e6 bytes) received, the run's
#                         mean goodput taken for the window's
#   contextSwitchesPerMB  the same for context switches
#   groups                samples per wireguard-go routine (wgprofile.awk)
# plus machine (commit included) and settings.
source "$(dirname "$0")/lib.sh"
source "$PERF_ROOT/analyze/common.sh"
SECS=${1:-8}
FROM=${PROF_FROM:-offload}
OUT=${PROF_OUT:-$(mktemp -d /tmp/liqo-relay-profile.XXXXXX)}
NAME=profile-${RESULT:-default}
FREQ=999
case $FROM in offload | pod) ;; *) die "PROF_FROM must be offload or pod, not $FROM" ;; esac
perf_require iperf3 wg perf
perf_trap
wg_build
mkdir -p "$OUT" "$PERF_RESULTS"
export PERF_WAN_AB=veth PERF_MTU=1420
# The first variant is the relay as it runs by default.
PERF_RELAY_ARGS=
perf_up
start pod-b iperf-server iperf3 -s
# System calls of the data path (TUN writes and reads, UDP batches) and
# context switches: their count per MB shows the batch sizes.
SYSCALLS="write read recvmmsg sendmmsg"
EVENTS=$(for s in $SYSCALLS; do printf 'syscalls:sys_enter_%s,' "$s"; done)context-switches
child() { pgrep -P "$(cat "$PERF_STATE/$1.pid")"; }
# profile TAG A B: profile the tunnel processes start()ed as A and B;
# leaves $OUT/TAG.summary.json.
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
	perf record -q -F "$FREQ" -g -p "$pids" -o "$OUT/$tag.data" -- sleep "$SECS" 2>/dev/null
	wait "$j" $!
	local mbit mb
	mbit=$(jq '.end.sum_received.bits_per_second / 1e6' "$OUT/$tag.json")
	printf '%s (%s): %.0f Mbit/s, load %s\n' "$tag" "$FROM" "$mbit" "$(cut -d' ' -f1-3 /proc/loadavg)"
	# Events per MB received, the run's mean goodput taken for the window's.
	mb=$(awk -v m="$mbit" -v s="$SECS" 'BEGIN {print m * s / 8}')
	awk -F, -v mb="$mb" '$1 ~ /^[0-9]+$/ && mb > 0 {printf "  %s per MB: %.1f\n", $3, $1 / mb}' "$OUT/$tag.stat"
	perf script -i "$OUT/$tag.data" -F comm,tid,ip,sym 2>/dev/null >"$OUT/$tag.script"
	awk -f "$PERF_ROOT/analyze/wgprofile.awk" "$OUT/$tag.script"
	# The summary: events per MB as {name: value}, then the samples.
	awk -F, -v mb="$mb" '$1 ~ /^[0-9]+$/ && mb > 0 {
			e = $3; sub(/^syscalls:sys_enter_/, "", e)
			printf "%s\"%s\":%.2f", n++ ? "," : "{", e, $1 / mb
		} END { print n ? "}" : "{}" }' "$OUT/$tag.stat" >"$OUT/$tag.events.json"
	jq -n --argjson mbps "$mbit" --slurpfile ev "$OUT/$tag.events.json" \
		--argjson prof "$(awk -v json=1 -f "$PERF_ROOT/analyze/wgprofile.awk" "$OUT/$tag.script")" \
		--arg sys "$SYSCALLS" --arg pids "$pids" '
		{mbps: ($mbps * 10 | round / 10), samples: $prof.samples, cipherShare: $prof.cipherShare, copyShare: $prof.copyShare,
		 syscallsPerMB: ($sys | split(" ") | map({key: ., value: ($ev[0][.] // null)}) | from_entries),
		 contextSwitchesPerMB: ($ev[0]["context-switches"] // null),
		 cipherSamples: $prof.cipherSamples, copySamples: $prof.copySamples, groups: $prof.groups}' >"$OUT/$tag.summary.json"
}
# cmdline TAG: the command line of the process start()ed as TAG.
cmdline() { tr '\0' ' ' <"/proc/$(child "$1")/cmdline"; }

profile relay relay-a relay-b
relays_stop
# perf/lib.sh's relays_start passes PERF_RELAY_ARGS to every `relay run`;
# check that these relays got it.
PERF_RELAY_ARGS="--sockets std"
relays_start
case $(cmdline relay-a) in *"--sockets std"*) ;; *) die "relay A runs without --sockets std ($(cmdline relay-a)): perf/lib.sh's relays_start must pass PERF_RELAY_ARGS" ;; esac
profile relay-std relay-a relay-b
relays_stop
wg_up
profile wireguard-go wg-a wg-b
wg_down
log "recordings in $OUT"

jq -n --arg name "$NAME" --arg when "$(date -u +%FT%TZ)" --argjson machine "$(machine_json)" \
	--arg cmd "${PERF_COMMAND:-perf/profile-throughput.sh $SECS}" --arg from "$FROM" --argjson secs "$SECS" \
	--argjson freq "$FREQ" --arg offloads "$PERF_AB_OFFLOADS" --arg relay "$RELAY" --arg wg "$WG_GO" --arg out "$OUT" \
	--slurpfile relay_ "$OUT/relay.summary.json" --slurpfile std "$OUT/relay-std.summary.json" \
	--slurpfile wgo "$OUT/wireguard-go.summary.json" '
	{scenario: "profile", name: $name, when: $when, command: $cmd, machine: $machine,
	 settings: {from: $from, secondsProfiled: $secs, frequencyHz: $freq, mtu: 1420, wanAB: "veth", underlayOffloads: $offloads,
	            sampled: "perf record -g -F \($freq) of the cpu-clock software event (no hardware PMU here) on both tunnel processes",
	            syscalls: "perf stat of syscalls:sys_enter_* tracepoints on both tunnel processes, per MB received",
	            relay: $relay, wireguardGo: $wg, recordings: $out},
	 variants: {relay: ($relay_[0] + {sockets: "batch"}), "relay-std": ($std[0] + {sockets: "std"}), "wireguard-go": $wgo[0]}}' \
	>"$PERF_RESULTS/$NAME.json"
log "wrote $PERF_RESULTS/$NAME.json"
jq -c '.variants | map_values({mbps, cipherShare, copyShare, syscallsPerMB})' "$PERF_RESULTS/$NAME.json"
