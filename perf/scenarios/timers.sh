#!/usr/bin/env bash
# perf/scenarios/timers.sh: aggressive timers that stay honest under load.
# Both relays run `health: {interval: 20ms}` (detect
# time 60 ms) for TIMERS_SECONDS per case, with no cut, and every path
# switch of either relay is counted:
#
#   idle    no impairment on any link, nothing else running;
#   jitter  the flapping scenario's jitter on the direct link (20 ms ± 15 ms
#           each way, no loss; the consumer path keeps its default 25+25 ms,
#           so that the selector never has a cheaper path to move to);
#   load    no impairment, while TIMERS_LOAD_PROCS busy loops contend for
#           the CPUs, capped at TIMERS_LOAD_CPUS cores by a cgroup of their
#           own (cgroup v2 cpu.max, or the v1 cpu controller's CFS quota
#           where v2 has no cpu controller), so that the WAN emulator is
#           not starved with the relays.
#
# The failover scenario's 5 ms ping stream runs pod-a -> pod-b in every
# case: without traffic the peer is idle and its paths are probed every
# 4 x idleInterval, which would not exercise the 20 ms timers.
#
# A switch is false when the link delivered the probes in time: the
# direct link's emulator wrote no frame more than 5 ms after it was due
# (`wanem show` .stats.*.late) from 1 s before the switch to the poll after
# it. Switches with a late link are reported apart (linkLateSwitches), not
# counted as false. The relays' own probe scheduling delay
# (relay_probe_schedule_delay_seconds, relay_stalls_total) is reported per
# case.
#
# Env: TIMERS_SECONDS (600), TIMERS_CASES ("idle jitter load"),
# TIMERS_INTERVAL (20ms), TIMERS_JITTER_DELAY/TIMERS_JITTER (20ms/15ms),
# TIMERS_LOAD_PROCS (4), TIMERS_LOAD_CPUS (1.5), PING_INTERVAL (0.005),
# RESULT.
#
# The testbed tears itself down after PERF_TTL seconds (perf/lib.sh,
# default 1800): the cases together take longer than that at 600 s each,
# so the TTL is raised to cover them (a testbed torn down inside the last
# case once showed as "false" switches).
: "${PERF_TTL:=$(( (${TIMERS_SECONDS:-600} + 120) * $(wc -w <<<"${TIMERS_CASES:-idle jitter load}") + 600 ))}"
export PERF_TTL
source "$(dirname "$0")/../lib.sh"
source "$PERF_ROOT/analyze/common.sh"

SECS=${TIMERS_SECONDS:-600}
CASES=${TIMERS_CASES:-idle jitter load}
IV=${TIMERS_INTERVAL:-20ms}
JDELAY=${TIMERS_JITTER_DELAY:-20ms} JJIT=${TIMERS_JITTER:-15ms}
LOAD_PROCS=${TIMERS_LOAD_PROCS:-4}
LOAD_CPUS=${TIMERS_LOAD_CPUS:-1.5}
INTERVAL=${PING_INTERVAL:-0.005}
NAME=timers-${RESULT:-default}
PERF_HEALTH="{interval: $IV}"

perf_require curl
W=$PERF_STATE/timers
CG="" CGKIND=""

# load_start: TIMERS_LOAD_PROCS busy loops in a cgroup of their own, capped
# at TIMERS_LOAD_CPUS cores.
load_start() {
	local quota
	quota=$(awk -v c="$LOAD_CPUS" 'BEGIN { printf "%d", c * 100000 }')
	if grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
		grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control || echo +cpu >/sys/fs/cgroup/cgroup.subtree_control
		CG=/sys/fs/cgroup/liqo-relay-perf-$PERF_PREFIX CGKIND="v2 cpu.max"
		mkdir -p "$CG"
		echo "$quota 100000" >"$CG/cpu.max"
	elif [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
		CG=/sys/fs/cgroup/cpu/liqo-relay-perf-$PERF_PREFIX CGKIND="v1 cpu.cfs_quota_us (no cpu controller on cgroup v2 here)"
		mkdir -p "$CG"
		echo 100000 >"$CG/cpu.cfs_period_us"
		echo "$quota" >"$CG/cpu.cfs_quota_us"
	else
		die "no cgroup cpu controller to cap the load with"
	fi
	log "load: $LOAD_PROCS busy loops capped at $LOAD_CPUS cores ($CGKIND, $CG)"
	local i
	for i in $(seq "$LOAD_PROCS"); do
		# The shell joins the cgroup, then becomes the bounded busy loop.
		sh -c 'echo $$ >"$1/cgroup.procs" && exec timeout -s KILL "$2" sh -c "while :; do :; done"' sh "$CG" "$PERF_TTL" &
		echo $! >>"$W/load.pids"
	done
}

load_stop() {
	local pid
	if [ -f "$W/load.pids" ]; then
		while read -r pid; do kill -KILL "$pid" 2>/dev/null || true; done <"$W/load.pids"
		while read -r pid; do wait "$pid" 2>/dev/null || true; done <"$W/load.pids"
		rm -f "$W/load.pids"
	fi
	if [ -n "$CG" ] && [ -d "$CG" ]; then
		while read -r pid; do kill -KILL "$pid" 2>/dev/null || true; done <"$CG/cgroup.procs"
		# cgroup.procs reads as size 0 whatever it holds: read it.
		for _ in $(seq 50); do [ -n "$(cat "$CG/cgroup.procs")" ] || break; sleep 0.1; done
		rmdir "$CG" 2>/dev/null || log "warning: could not remove $CG"
	fi
	CG=""
}

trap 'rc=$?; trap - EXIT INT TERM; load_stop; perf_down; exit $rc' EXIT INT TERM
perf_up
mkdir -p "$W" "$PERF_RESULTS"

# late_total: frames the direct link's emulator wrote late, both directions.
late_total() { wan_show ab | jq '[.stats[]?.late // 0] | add // 0'; }

# sched NS: the relay's scheduling figures, JSON.
sched() {
	relay_metrics "$1" | awk -f "$ANALYZE/schedule.awk"
}

for c in $CASES; do
	log "case $c: ${SECS}s at {interval: $IV}"
	relays_stop
	wan_defaults
	relays_configure
	relays_start
	case $c in
	idle) ;;
	jitter) wan_set ab --reset --delay "$JDELAY" --jitter "$JJIT" ;;
	load) load_start ;;
	*) die "unknown case $c (idle, jitter, load)" ;;
	esac
	: >"$W/$c.late"
	start pod-a "stream-$c" ping -D -n -i "$INTERVAL" "$POD_B"
	t_start=$(now)
	end=$(( $(date +%s) + SECS ))
	while [ "$(date +%s)" -lt "$end" ]; do
		echo "$(now) $(late_total)" >>"$W/$c.late"
		sleep 1
	done
	t_end=$(now)
	wan_show ab >/dev/null 2>&1 || die "case $c: the direct link's emulator is gone (the testbed was torn down: PERF_TTL $PERF_TTL s too short?); no figure"
	echo "$t_end $(late_total)" >>"$W/$c.late"
	stop "stream-$c"
	[ "$c" != load ] || load_stop
	# Raw data, for a second look (not committed).
	mkdir -p "$PERF_RESULTS/raw/$NAME"
	cp "$PERF_STATE/relay-a.log" "$PERF_RESULTS/raw/$NAME/$c-relay-a.log"
	cp "$PERF_STATE/relay-b.log" "$PERF_RESULTS/raw/$NAME/$c-relay-b.log"
	cp "$W/$c.late" "$PERF_RESULTS/raw/$NAME/"
	for n in provider-a provider-b; do
		relay_status "$n" | jq -c --arg r "$n" '.events[] | select(.reason != "initial") | . + {relay:$r}'
	done >"$W/$c.events"
	# Each switch of the run (not of the start-up or the teardown): the
	# link was late if its late count moved from 1 s before the switch to
	# the first poll after it.
	jq -r '"\(.at) \(.relay) \(.reason)"' "$W/$c.events" | while read -r at relay reason; do
		t=$(ts_epoch "$at")
		awk -v t="$t" -v a="$t_start" -v b="$t_end" 'BEGIN { exit !(t >= a && t <= b) }' || continue
		late=$(awk -v t="$t" '$1 <= t - 1 { before = $2 } $1 >= t && after == "" { after = $2 } END { print ((after != "" && after > before + 0) ? "true" : "false") }' "$W/$c.late")
		jq -nc --arg at "$at" --arg relay "$relay" --arg reason "$reason" --argjson late "$late" '{at:$at, relay:$relay, reason:$reason, linkLate:$late}'
	done >"$W/$c.switches"
	awk -f "$ANALYZE/ping.awk" "$PERF_STATE/stream-$c.log" >"$W/$c.samples"
	sent=$(awk '{s=$1} END{print s+0}' "$W/$c.samples")
	got=$(wc -l <"$W/$c.samples")
	jq -n --arg case "$c" --slurpfile sw "$W/$c.switches" --argjson a "$(sched provider-a)" --argjson b "$(sched provider-b)" \
		--argjson late "$(awk 'NR==1{f=$2} {l=$2} END{print l-f}' "$W/$c.late")" --argjson sent "$sent" --argjson got "$got" \
		--arg cg "$([ "$c" = load ] && echo "$LOAD_PROCS busy loops, $LOAD_CPUS cores, $CGKIND" || true)" \
		'{case:$case, switches:($sw|length), falseSwitches:([$sw[] | select(.linkLate|not)]|length),
		  linkLateSwitches:([$sw[] | select(.linkLate)]|length), switchList:$sw, linkLateFrames:$late,
		  schedule:{a:$a, b:$b}, stream:{sent:$sent, answered:$got, loss:(if $sent>0 then ((1-$got/$sent)*10000|round/10000) else null end)},
		  load:(if $cg == "" then null else $cg end)}' >"$W/$c.json"
	log "case $c: $(jq -c '{switches, falseSwitches, linkLateSwitches, linkLateFrames, wakeOver5msA:.schedule.a.wake.over5ms, stallsA:.schedule.a.stalls}' "$W/$c.json")"
done

cases=()
for c in $CASES; do cases+=("$W/$c.json"); done
jq -n --arg name "$NAME" --argjson machine "$(machine_json)" --arg when "$(date -u +%FT%TZ)" \
	--arg cmd "${PERF_COMMAND:-perf/scenarios/timers.sh}" --argjson secs "$SECS" --arg iv "$IV" \
	--arg jd "$JDELAY" --arg jj "$JJIT" --slurpfile cases <(cat "${cases[@]}") \
	'{scenario:"timers", name:$name, when:$when, command:$cmd, machine:$machine,
	  settings:{secondsPerCase:$secs, health:"{interval: \($iv)}", jitter:{delay:$jd, jitter:$jj}, stream:"ping every 5 ms pod-a -> pod-b"},
	  cases:($cases | map({(.case): .}) | add),
	  summary:{falseSwitches:($cases | map({(.case): .falseSwitches}) | add), linkLateSwitches:($cases | map({(.case): .linkLateSwitches}) | add)}}' >"$PERF_RESULTS/$NAME.json"
log "wrote $PERF_RESULTS/$NAME.json"
jq -c .summary "$PERF_RESULTS/$NAME.json"
