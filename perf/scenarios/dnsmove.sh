#!/usr/bin/env bash
# perf/scenarios/dnsmove.sh: how long a relay takes to follow a path
# endpoint whose host name moves to another address. Two netstack relays on
# loopback; provider-a reaches provider-b through a name that resolves to
# 127.0.0.2 (a UDP forwarder to b); mid-stream (a UDP echo every 10 ms
# through the tunnel) the name moves to 127.0.0.3 and 127.0.0.2 dies. The
# figure is the time from the move to the first echo of a message sent
# after it. The names are refreshed every 0.75 s (dns.minTTL 1s), so the
# expected spread is 0 to 0.75 s plus one probe round; no WireGuard
# handshake is needed. The measurement is the Go test
# TestEndpointNameMovesMidStream in internal/agent/dnsmove_test.go; this script
# builds it once, runs it DNSMOVE_RUNS times, and reports min, median and
# max. No namespaces and no root.
#
# Env: DNSMOVE_RUNS (10), RESULT (default).
source "$(dirname "$0")/../lib.sh"
source "$PERF_ROOT/analyze/common.sh"

RUNS=${DNSMOVE_RUNS:-10}
NAME=dnsmove-${RESULT:-default}
command -v go >/dev/null || die "dnsmove needs the go tool"
command -v jq >/dev/null || die "missing commands: jq (make perf-deps installs it)"
mkdir -p "$PERF_STATE" "$PERF_RESULTS"
W=$PERF_STATE/dnsmove
mkdir -p "$W"
trap 'rc=$?; trap - EXIT INT TERM; case $PERF_STATE in /run/liqo-relay-perf/?*) rm -rf "$PERF_STATE";; esac; exit $rc' EXIT INT TERM

TESTBIN=$W/agent.test
log "building the agent test binary"
(cd "$REPO_ROOT" && go test -c -o "$TESTBIN" ./internal/agent/)
runs=()
for i in $(seq 1 "$RUNS"); do
	(cd "$REPO_ROOT/internal/agent" && DNSMOVE_OUT=$W/run-$i.json \
		"$TESTBIN" -test.run '^TestEndpointNameMovesMidStream$' -test.count=1 -test.v) >"$W/run-$i.log" 2>&1 ||
		die "TestEndpointNameMovesMidStream failed (log: $W/run-$i.log)"
	runs+=("$W/run-$i.json")
done
jq -s --arg name "$NAME" --argjson machine "$(machine_json)" --arg when "$(date -u +%FT%TZ)" \
	--arg cmd "${PERF_COMMAND:-perf/scenarios/dnsmove.sh}" \
	'(map(.recoverySeconds) | sort) as $r |
	 {scenario:"dnsmove", name:$name, when:$when, command:$cmd, machine:$machine,
	  settings:{runs:length, refreshSeconds:.[0].refreshSeconds},
	  summary:{minSeconds:$r[0], medianSeconds:$r[(length/2|floor)], maxSeconds:$r[-1],
	    newHandshakes:(map(select(.newHandshake))|length)},
	  runs:.}' "${runs[@]}" >"$PERF_RESULTS/$NAME.json"
log "wrote $PERF_RESULTS/$NAME.json"
jq -c .summary "$PERF_RESULTS/$NAME.json"
