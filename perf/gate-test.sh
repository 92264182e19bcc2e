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

# results FAILOVER_P50 TUN WG OURS NAIVE [LOST DIP HUBCPU FBDIP FBRETR FBBASE TUNOFF WGOFF P50_20MS P50_10MS LOADFALSE ABDELAY]:
# synthetic quick results in $T (then: redundant failover's lost packets,
# its TCP dip at a cut in ms (p95 over the cuts), the hub's CPU % per 1000 paths, the p95 TCP dip and
# retransmits after a restore and the one-path baseline, the offloads-on
# relay TUN and wireguard-go goodputs, the failover medians at interval
# 20ms and 10ms, the false switches under CPU load at 20ms and the
# direct link's delay of the interval rows (0ms); good
# figures by default).
results() {
	rm -f "$T"/*.json
	echo "{\"summary\":{\"interruptionMs\":{\"p50\":$1,\"p95\":400}}}" >"$T/failover-quick.json"
	echo "{\"mbps\":{\"relay-tun\":{\"p50\":$2},\"wireguard-go\":{\"p50\":$3},\"relay-tun-offload\":{\"p50\":${12:-700}},\"wireguard-go-offload\":{\"p50\":${13:-690}}}}" >"$T/throughput-quick.json"
	echo "{\"lowestCost\":{\"switches\":$4},\"naive\":{\"switches\":$5}}" >"$T/flapping-quick.json"
	echo "{\"summary\":{\"lostPackets\":${6:-0},\"interruptionMs\":{\"p50\":12}}}" >"$T/failover-redundant-quick.json"
	echo "{\"summary\":{\"cutDipMs\":{\"p95\":${7:-0}}}}" >"$T/failback-tcp-redundant-quick.json"
	echo "{\"summary\":{\"hubPaths\":100,\"hubCpuPercentPer1000Paths\":${8:-4.2}}}" >"$T/scale-star-quick.json"
	echo "{\"summary\":{\"dipMs\":{\"p95\":${9:-0}},\"retransmitsPerRestore\":{\"p95\":${10:-0}},\"baselineRetransmitsPerWindow\":${11:-0}}}" >"$T/failback-tcp-quick.json"
	echo "{\"settings\":{\"wan\":{\"ab\":\"${17:-0ms}\"}},\"summary\":{\"interruptionMs\":{\"p50\":${14:-66}}}}" >"$T/failover-interval-20ms-quick.json"
	echo "{\"settings\":{\"wan\":{\"ab\":\"${17:-0ms}\"}},\"summary\":{\"interruptionMs\":{\"p50\":${15:-37}}}}" >"$T/failover-interval-10ms-quick.json"
	echo "{\"summary\":{\"falseSwitches\":{\"idle\":0,\"jitter\":0,\"load\":${16:-0}},\"linkLateSwitches\":{\"idle\":0,\"jitter\":0,\"load\":2}}}" >"$T/timers-quick.json"
}
# expect pass|fail [ROW [N]]: run the gate; on fail, ROW must be named as
# failing, and be the only failing row (or one of N: rows that read the
# same result file).
expect() {
	local out rc=0
	out=$(PERF_RESULTS=$T "$P/gate.sh" quick) || rc=$?
	case $1 in
	pass) [ $rc = 0 ] || fail "gate failed on good results ($CASE):"$'\n'"$out" ;;
	fail)
		[ $rc != 0 ] || fail "gate passed on a bad row ($CASE):"$'\n'"$out"
		[ "$(grep -c 'gate: FAIL ' <<<"$out")" = "${3:-1}" ] || fail "want exactly ${3:-1} failing row(s) ($CASE):"$'\n'"$out"
		grep -q "gate: FAIL  $2" <<<"$out" || fail "the failing row is not named \"$2\" ($CASE):"$'\n'"$out" ;;
	esac
}
FO="failover median interruption" TP="relay TUN / stock wireguard-go" FL="path switches on a flapping link"
FD="TCP goodput dip after a restore" FR="retransmits after a restore"
TO="relay TUN / stock wireguard-go, offloads on" RL="redundant failover, packets lost" RD="redundant TCP goodput dip at a cut" HC="hub CPU per 1000 directed paths"

CASE=good; results 291.7 575 568 13 423; expect pass
CASE=boundaries; results 350 100 100 9 91 0 99 4.99 0 0 0 100 100; expect pass
CASE="offloads-on ratio 0.99"; results 291.7 575 568 13 423 0 0 4.2 0 0 0 99 100; expect fail "$TO"
CASE="no offloads-on figures"; results 291.7 575 568 13 423 0 0 4.2 0 0 0 null null; expect fail "$TO"
CASE="redundant lost 1"; results 291.7 575 568 13 423 1; expect fail "$RL"
CASE="redundant lost null"; results 291.7 575 568 13 423 null; expect fail "$RL"
CASE="redundant dip 100 ms"; results 291.7 575 568 13 423 0 100; expect fail "$RD"
CASE="failback boundaries"; results 291.7 575 568 13 423 0 0 4.2 99 15 5; expect pass
CASE="failback dip 100 ms"; results 291.7 575 568 13 423 0 0 4.2 100; expect fail "$FD"
CASE="failback retransmit burst"; results 291.7 575 568 13 423 0 0 4.2 0 16 5; expect fail "$FR"
CASE="failback no baseline"; results 291.7 575 568 13 423 0 0 4.2 0 0 null; expect fail "$FR"
CASE="failback dip null"; results 291.7 575 568 13 423 0 0 4.2 null; expect fail "$FD"
CASE="hub CPU 5 %"; results 291.7 575 568 13 423 0 0 5; expect fail "$HC"
CASE="hub result missing"; results 291.7 575 568 13 423; rm "$T/scale-star-quick.json"; expect fail "$HC"
TI="detection at interval" T20="detection at interval 20ms" T10="detection at interval 10ms" TF="false switches at interval 20ms"
G="291.7 575 568 13 423 0 0 4.2 0 0 0 700 690"
CASE="timer boundaries"; results $G 70 40 0; expect pass
CASE="20ms median 71 ms"; results $G 71 37 0; expect fail "$T20"
CASE="10ms median 41 ms"; results $G 66 41 0; expect fail "$T10"
CASE="10ms median null"; results $G 66 null 0; expect fail "$T10"
CASE="interval rows measured on the 10 ms link"; results $G 66 37 0 10ms; expect fail "$TI" 2
CASE="a false switch under load"; results $G 66 37 1; expect fail "$TF"
CASE="false switches null"; results $G 66 37 null; expect fail "$TF"
CASE="timers result missing"; results $G; rm "$T/timers-quick.json"; expect fail "$TF"
CASE="timers without the load case"; results $G; echo '{"summary":{"falseSwitches":{"idle":0,"jitter":0}}}' >"$T/timers-quick.json"; expect fail "$TF"
CASE="failover 351 ms"; results 351 575 568 13 423; expect fail "$FO"
CASE="failover 4 s"; results 4000 575 568 13 423; expect fail "$FO"
CASE="failover null"; results null 575 568 13 423; expect fail "$FO"
CASE="ratio 0.99"; results 291.7 99 100 13 423; expect fail "$TP"
CASE="no wireguard-go figure"; results 291.7 575 null 13 423; expect fail "$TP"
CASE="wireguard-go zero"; results 291.7 575 0 13 423; expect fail "$TP"
CASE="flapping ours = naive/10"; results 291.7 575 568 10 100; expect fail "$FL"
CASE="flapping ours > naive"; results 291.7 575 568 50 40; expect fail "$FL"
CASE="flapping no naive"; results 291.7 575 568 13 null; expect fail "$FL"
CASE="failover result missing"; results 291.7 575 568 13 423; rm "$T/failover-quick.json"; expect fail "$FO"
CASE="throughput result missing"; results 291.7 575 568 13 423; rm "$T/throughput-quick.json"; expect fail "$TP" 2; expect fail "$TO" 2
CASE="flapping result missing"; results 291.7 575 568 13 423; rm "$T/flapping-quick.json"; expect fail "$FL"
CASE="not JSON"; results 291.7 575 568 13 423; echo '{' >"$T/failover-quick.json"; expect fail "$FO"
echo "perf/gate.sh: all checks passed"
