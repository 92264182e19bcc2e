#!/usr/bin/env bash
# perf/ab-throughput.sh ROUNDS SECS OLD_RELAY NEW_RELAY: an A/B check of the
# relay's data path against stock wireguard-go, for a change that claims to
# make the relay cheaper. In one testbed (A-B over a plain veth, MTU 1420,
# as throughput.sh's unlimited part), round by round: stock wireguard-go,
# the OLD_RELAY binary and the NEW_RELAY binary, each with one iperf3 run
# of SECS seconds from provider-a's own namespace (offloads on) and one from
# pod-a (offloads off). Prints one line per run:
#
#   ROUND VARIANT SENDER MBIT/S TUNNEL-CPU-MS-PER-GB RELAY-PATH-SWITCHES
#
# The CPU figure is the two tunnel processes' user + system time over the
# run per GB received: on a busy machine it moves less than goodput. A run
# with path switches was disturbed (its relays' probing starved, the
# direct path failed over): leave it out. Build OLD_RELAY from the commit
# to compare with, for example:
#   git archive BASE | tar -x -C /tmp/old && (cd /tmp/old && go build -o /tmp/relay-old ./cmd/relay)
source "$(dirname "$0")/lib.sh"
[ $# = 4 ] || die "usage: $0 ROUNDS SECS OLD_RELAY NEW_RELAY"
ROUNDS=$1 SECS=$2 OLD=$3 NEW=$4
[ -x "$OLD" ] || die "OLD_RELAY $OLD is not an executable"
RELAY=$NEW # the testbed's tools (genkey, status) and perf_require's check
perf_require iperf3 wg
perf_trap
wg_build
export PERF_WAN_AB=veth PERF_MTU=1420
RELAY=$NEW perf_up
start pod-b iperf-server iperf3 -s
tick=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
child() { pgrep -P "$(cat "$PERF_STATE/$1.pid")"; }
switches() {
	[ "$1" = wg ] && { echo 0; return; }
	local t=0 n
	for n in provider-a provider-b; do
		t=$((t + $({ relay_metrics "$n" || true; } | awk '/^relay_path_switches_total/ && !/reason="initial"/ {s += $NF} END {print s + 0}')))
	done
	echo "$t"
}
for r in $(seq "$ROUNDS"); do
	for v in wg old new; do
		relays_stop
		case $v in
		wg) wg_up; a=wg-a b=wg-b ;;
		old) RELAY=$OLD relays_start; a=relay-a b=relay-b ;;
		new) RELAY=$NEW relays_start; a=relay-a b=relay-b ;;
		esac
		pa=$(child $a) pb=$(child $b)
		for from in offload pod; do
			s0=$(switches $v) c0=$(($(cpu "$pa") + $(cpu "$pb")))
			if [ $from = pod ]; then
				j=$(nsx pod-a iperf3 -J -c "$POD_B" -t "$SECS") || j='{}'
			else
				j=$(nsx provider-a iperf3 -J -B "$POD_A_GW" -c "$POD_B" -t "$SECS") || j='{}'
			fi
			c1=$(($(cpu "$pa") + $(cpu "$pb"))) s1=$(switches $v)
			echo "$j" | jq -r --arg r "$r" --arg v "$v" --arg f "$from" --argjson c $((c1 - c0)) --argjson t "$tick" --argjson s $((s1 - s0)) \
				'(.end.sum_received // {bytes: 0, bits_per_second: 0}) as $e | "\($r) \($v) \($f) \($e.bits_per_second / 1e6 | round) \(if $e.bytes > 0 then $c / $t * 1000 / ($e.bytes / 1e9) | round else "-" end) \($s)"'
		done
		[ $v != wg ] || wg_down
	done
done
