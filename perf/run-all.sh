#!/usr/bin/env bash
# perf/run-all.sh quick|full: every scenario, each with its own time
# budget, results under perf/results/ as <scenario>-<mode>.json and .png,
# then the results table (perf/table.sh) and the gate (perf/gate.sh).
# `make perf` runs full (budgets of about 147 minutes), `make perf-quick` quick (about
# 32 minutes).
#
# Everything is built first, outside any budget: the WAN emulator
# (bin/wanem), stock wireguard-go (perf/.bin) and the scale scenarios'
# measurement (bin/scale, perf/cmd/scale). A budget is a figure for a machine like ours, not
# a rule: a scenario that overruns it is reported with a warning, and only
# a scenario that gave no figure (no result JSON written by this run) fails
# the run. A hard limit of PERF_HARD_FACTOR (3) times the budget still
# stops a scenario that hangs.
#
# Results of `make perf` (full) in perf/results/ are committed, so they must
# come from a committed tree: full mode refuses a tree that
# `git describe --dirty` calls dirty, and refuses again at the end if the
# tree changed during the run. For local experiments on a dirty tree, write
# elsewhere: PERF_RESULTS=/tmp/perf make perf.
source "$(dirname "$0")/lib.sh"
source "$PERF_ROOT/analyze/common.sh"
MODE=${1:-quick}
S=$PERF_ROOT/scenarios
case $MODE in quick | full) ;; *) die "usage: $0 quick|full" ;; esac
HARD_FACTOR=${PERF_HARD_FACTOR:-3}

# The commit every result of this run must carry.
commit=$(tree_commit)
[ "$MODE" != full ] || require_committed_tree "$commit"

[ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
# Builds, untimed.
perf_build_tools
wg_build
SCALE_BIN=$REPO_ROOT/bin/scale
log "building $SCALE_BIN"
(cd "$REPO_ROOT" && go build -trimpath -o "$SCALE_BIN" ./perf/cmd/scale) || die "building perf/cmd/scale failed"
export SCALE_BIN
perf_require iperf3 wg curl
mkdir -p "$PERF_RESULTS"

# scenario BUDGET_SECONDS NAME ENV...: run one scenario in its own
# testbed. It gave a figure if it wrote its result JSON
# ($PERF_RESULTS/NAME-RESULT.json) during this run; one that did not is
# reported as failed and the rest run. Overrunning the budget only warns.
failed=() slow=() produced=() rc=0
scenario() {
	local budget=$1 name=$2; shift 2
	local result=$MODE a
	for a in "$@"; do case $a in RESULT=*) result=${a#RESULT=} ;; esac; done
	local out="$PERF_RESULTS/$name-$result.json" mark
	mark=$(mktemp)
	log "=== $name-$result (budget ${budget}s, stopped at $((budget * HARD_FACTOR))s) ==="
	local t0=$SECONDS rc=0
	env RESULT="$MODE" "$@" PERF_COMMAND="make perf$([ "$MODE" = quick ] && echo -quick)" \
		timeout -s TERM -k 10 "$((budget * HARD_FACTOR))" "$S/$name.sh" || rc=$?
	local took=$((SECONDS - t0))
	if [ -f "$out" ] && [ "$out" -nt "$mark" ]; then
		produced+=("$out")
		[ $rc = 0 ] || log "=== $name-$result: warning: exit status $rc, but it wrote $out ==="
		if [ $took -gt "$budget" ]; then
			log "=== $name-$result: warning: took ${took}s, over its ${budget}s budget (a slow or busy machine; the figure stands) ==="
			slow+=("$name-$result (${took}s > ${budget}s)")
		fi
	else
		log "=== $name-$result FAILED: no figure (exit status $rc, no new $out) ==="
		failed+=("$name-$result")
	fi
	rm -f "$mark"
	log "=== $name-$result took ${took}s ==="
}

case $MODE in
quick)
	scenario 45 latency LAT_COUNT=200
	scenario 90 failover FAILOVER_CUTS=5 FAILOVER_SPACING=8
	scenario 40 failover-tcp FT_SECONDS=12 FT_CUT_AT=4 FT_RESTORE_AT=8
	scenario 75 throughput TP_RUNS=2 TP_SECONDS=3
	scenario 540 matrix MX_ROUNDS=3 MX_SECONDS=3 MX_SIDE_ROUNDS=2
	scenario 40 ceiling CEIL_COUNT=3
	scenario 55 flapping FLAP_SECONDS=20
	scenario 35 wanem-ceiling CEIL_RUNS=2 CEIL_SECONDS=3
	scenario 60 scale "SCALE_RELAYS=4 8" SCALE_SECONDS=8
	scenario 60 scale-star "STAR_PEERS=250" SCALE_SECONDS=20
	scenario 75 failover FAILOVER_CUTS=3 FAILOVER_SPACING=8 RESULT=redundant-quick "PERF_HEALTH={redundancy: duplicate}"
	scenario 50 failback-tcp FB_RESTORES=3 FB_LEAD=5
	scenario 50 failback-tcp FB_RESTORES=3 FB_LEAD=5 RESULT=redundant-quick "PERF_HEALTH={redundancy: duplicate}"
	scenario 90 failover FAILOVER_CUTS=5 FAILOVER_SPACING=8 WAN_AB_DELAY=0ms RESULT=interval-20ms-quick "PERF_HEALTH={interval: 20ms}"
	scenario 90 failover FAILOVER_CUTS=5 FAILOVER_SPACING=8 WAN_AB_DELAY=0ms RESULT=interval-10ms-quick "PERF_HEALTH={interval: 10ms}"
	scenario 90 failover FAILOVER_CUTS=5 FAILOVER_SPACING=8 RESULT=interval-20ms-wan-quick "PERF_HEALTH={interval: 20ms}"
	scenario 90 failover FAILOVER_CUTS=5 FAILOVER_SPACING=8 RESULT=interval-10ms-wan-quick "PERF_HEALTH={interval: 10ms}"
	scenario 150 timers TIMERS_SECONDS=30
	scenario 180 soak SOAK_MINUTES=2 SOAK_LEAK=0
	;;
full)
	scenario 150 latency LAT_COUNT=600
	scenario 300 failover FAILOVER_CUTS=20
	scenario 75 failover-tcp FT_SECONDS=25 FT_CUT_AT=8 FT_RESTORE_AT=16
	scenario 150 failover FAILOVER_CUTS=10 RESULT=probe-50ms "PERF_HEALTH={interval: 50ms, idleInterval: 250ms}"
	scenario 180 failover FAILOVER_CUTS=10 FAILOVER_SPACING=12 RESULT=probe-200ms "PERF_HEALTH={interval: 200ms, idleInterval: 1s}"
	scenario 450 throughput TP_RUNS=5 TP_SECONDS=8
	scenario 1500 matrix
	scenario 60 ceiling CEIL_COUNT=5
	scenario 280 flapping FLAP_SECONDS=120
	scenario 150 wanem-ceiling CEIL_RUNS=5 CEIL_SECONDS=5
	scenario 120 scale "SCALE_RELAYS=5 10 20" SCALE_SECONDS=20
	scenario 300 scale-star "STAR_PEERS=25 50 125 250" SCALE_SECONDS=20
	scenario 300 failover FAILOVER_CUTS=20 RESULT=redundant-full "PERF_HEALTH={redundancy: duplicate}"
	scenario 240 failback-tcp FB_RESTORES=20
	scenario 240 failback-tcp FB_RESTORES=20 FB_CONTROL=1 RESULT=control-full
	scenario 240 failback-tcp FB_RESTORES=20 RESULT=redundant-full "PERF_HEALTH={redundancy: duplicate}"
	scenario 240 failback-tcp FB_RESTORES=20 FB_CC=bbr RESULT=bbr-full
	scenario 300 failover FAILOVER_CUTS=20 WAN_AB_DELAY=0ms RESULT=interval-20ms-full "PERF_HEALTH={interval: 20ms}"
	scenario 300 failover FAILOVER_CUTS=20 WAN_AB_DELAY=0ms RESULT=interval-10ms-full "PERF_HEALTH={interval: 10ms}"
	scenario 300 failover FAILOVER_CUTS=20 RESULT=interval-20ms-wan-full "PERF_HEALTH={interval: 20ms}"
	scenario 300 failover FAILOVER_CUTS=20 RESULT=interval-10ms-wan-full "PERF_HEALTH={interval: 10ms}"
	scenario 1900 timers TIMERS_SECONDS=600
	scenario 720 soak SOAK_MINUTES=10
	;;
esac

# Every result of this run must carry the commit the run started from: a
# tree edited during a full run gives figures of no commit.
if [ "$MODE" = full ]; then
	for f in "${produced[@]}"; do check_result_commit "$f" "$commit"; done
fi
"$PERF_ROOT/table.sh" "$MODE" | tee "$PERF_RESULTS/table-$MODE.md"
# A full run into perf/results/ also updates the table in perf/README.md.
if [ "$MODE" = full ] && results_committed; then "$PERF_ROOT/docs.sh" || rc=1; fi
[ ${#slow[@]} = 0 ] || log "warning: over budget (figures kept): ${slow[*]}"
[ ${#failed[@]} = 0 ] || { log "error: no figure from: ${failed[*]}"; rc=1; }
"$PERF_ROOT/gate.sh" "$MODE" || rc=1
exit $rc
