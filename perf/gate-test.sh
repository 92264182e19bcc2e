#!/usr/bin/env bash
# perf/gate-test.sh: checks perf/gate.sh on synthetic results (no root, no
# testbed): it passes good figures, including each target's boundary, and
# fails, naming the row, on each bad or missing one. Exit 1 on the first
# wrong answer.
set -o errexit -o nounset -o pipefail
P=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# results FAILOVER_P50 TUN WG OURS NAIVE: synthetic quick results in $T.
results() {
	rm -f "$T"/*.json
	echo "{\"summary\":{\"interruptionMs\":{\"p50\":$1,\"p95\":400}}}" >"$T/failover-quick.json"
	echo "{\"mbps\":{\"relay-tun\":{\"p50\":$2},\"wireguard-go\":{\"p50\":$3}}}" >"$T/throughput-quick.json"
	echo "{\"lowestCost\":{\"switches\":$4},\"naive\":{\"switches\":$5}}" >"$T/flapping-quick.json"
}
# expect pass|fail [ROW]: run the gate; on fail, ROW must be the one row
# named as failing.
expect() {
	local out rc=0
	out=$(PERF_RESULTS=$T "$P/gate.sh" quick) || rc=$?
	case $1 in
	pass) [ $rc = 0 ] || fail "gate failed on good results ($CASE):"$'\n'"$out" ;;
	fail)
		[ $rc != 0 ] || fail "gate passed on a bad row ($CASE):"$'\n'"$out"
		[ "$(grep -c 'gate: FAIL ' <<<"$out")" = 1 ] || fail "want exactly one failing row ($CASE):"$'\n'"$out"
		grep -q "gate: FAIL  $2" <<<"$out" || fail "the failing row is not named \"$2\" ($CASE):"$'\n'"$out" ;;
	esac
}
FO="failover median interruption" TP="relay TUN / stock wireguard-go" FL="path switches on a flapping link"

CASE=good; results 291.7 575 568 13 423; expect pass
CASE=boundaries; results 350 95 100 9 91; expect pass
CASE="failover 351 ms"; results 351 575 568 13 423; expect fail "$FO"
CASE="failover 4 s"; results 4000 575 568 13 423; expect fail "$FO"
CASE="failover null"; results null 575 568 13 423; expect fail "$FO"
CASE="ratio 0.94"; results 291.7 94 100 13 423; expect fail "$TP"
CASE="no wireguard-go figure"; results 291.7 575 null 13 423; expect fail "$TP"
CASE="wireguard-go zero"; results 291.7 575 0 13 423; expect fail "$TP"
CASE="flapping ours = naive/10"; results 291.7 575 568 10 100; expect fail "$FL"
CASE="flapping ours > naive"; results 291.7 575 568 50 40; expect fail "$FL"
CASE="flapping no naive"; results 291.7 575 568 13 null; expect fail "$FL"
CASE="failover result missing"; results 291.7 575 568 13 423; rm "$T/failover-quick.json"; expect fail "$FO"
CASE="throughput result missing"; results 291.7 575 568 13 423; rm "$T/throughput-quick.json"; expect fail "$TP"
CASE="flapping result missing"; results 291.7 575 568 13 423; rm "$T/flapping-quick.json"; expect fail "$FL"
CASE="not JSON"; results 291.7 575 568 13 423; echo '{' >"$T/failover-quick.json"; expect fail "$FO"
echo "perf/gate.sh: all checks passed"
