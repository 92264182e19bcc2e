#!/usr/bin/env bash
# perf/run-all.sh quick|full: every scenario, each within its own time
# budget (`timeout`), results under perf/results/ as <scenario>-<mode>.json
# and .png, then the results table (perf/table.sh). `make perf` runs full
# (under 30 minutes), `make perf-quick` quick (under 5 minutes).
source "$(dirname "$0")/lib.sh"
MODE=${1:-quick}
S=$PERF_ROOT/scenarios
perf_require iperf3 wg curl

# scenario BUDGET_SECONDS NAME ENV...: run one scenario in its own
# testbed; a scenario that fails or overruns is reported and the rest run.
failed=()
scenario() {
	local budget=$1 name=$2; shift 2
	log "=== $name (budget ${budget}s) ==="
	local t0=$SECONDS
	if ! env RESULT="$MODE" "$@" PERF_COMMAND="make perf$([ "$MODE" = quick ] && echo -quick)" \
		timeout -s TERM -k 10 "$budget" "$S/$name.sh"; then
		log "=== $name FAILED or over budget ==="
		failed+=("$name")
	fi
	log "=== $name took $((SECONDS - t0))s ==="
}

case $MODE in
quick)
	scenario 45 latency LAT_COUNT=200
	scenario 90 failover FAILOVER_CUTS=5 FAILOVER_SPACING=8
	scenario 40 failover-tcp FT_SECONDS=12 FT_CUT_AT=4 FT_RESTORE_AT=8
	scenario 75 throughput TP_RUNS=2 TP_SECONDS=3
	scenario 55 flapping FLAP_SECONDS=20
	scenario 35 wanem-ceiling CEIL_RUNS=2 CEIL_SECONDS=3
	scenario 60 scale "SCALE_RELAYS=4 8" SCALE_SECONDS=8
	;;
full)
	scenario 150 latency LAT_COUNT=600
	scenario 300 failover FAILOVER_CUTS=20
	scenario 75 failover-tcp FT_SECONDS=25 FT_CUT_AT=8 FT_RESTORE_AT=16
	scenario 150 failover FAILOVER_CUTS=10 RESULT=probe-50ms "PERF_HEALTH={interval: 50ms, idleInterval: 250ms}"
	scenario 180 failover FAILOVER_CUTS=10 FAILOVER_SPACING=12 RESULT=probe-200ms "PERF_HEALTH={interval: 200ms, idleInterval: 1s}"
	scenario 450 throughput TP_RUNS=5 TP_SECONDS=8
	scenario 280 flapping FLAP_SECONDS=120
	scenario 150 wanem-ceiling CEIL_RUNS=5 CEIL_SECONDS=5
	scenario 120 scale "SCALE_RELAYS=5 10 20" SCALE_SECONDS=20
	;;
*) die "usage: $0 quick|full" ;;
esac
"$PERF_ROOT/table.sh" "$MODE" | tee "$PERF_RESULTS/table-$MODE.md"
[ ${#failed[@]} = 0 ] || die "failed: ${failed[*]}"
