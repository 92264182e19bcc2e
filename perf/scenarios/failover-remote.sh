#!/usr/bin/env bash
# perf/scenarios/failover-remote.sh: the failover measurement against your
# own relays (any two relays whose admin endpoint you can reach), no
# testbed. You say how to cut and restore the path; the script cuts it
# FAILOVER_CUTS times while a ping stream runs, and reports per-cut
# interruption, lost packets, the relay's switch time and the failback
# time, like scenario 3.
#
# Required env:
#   ADMIN        admin endpoint of the relay on the sending side (host:port)
#   PEER         the peer whose path is cut (its name in that relay's config)
#   CUT_CMD      shell command that cuts the path, e.g.
#                "ssh node-b iptables -I INPUT -p udp --dport 51900 -s 203.0.113.7 -j DROP"
#   RESTORE_CMD  the command that restores it
#   TARGET       an address behind the peer to ping (a pod IP), unless
#                STREAM_CMD is given: a command printing `ping -D -n` lines
# Optional: FO_PATH (direct), FAILOVER_CUTS (20), FAILOVER_HOLD (2),
# FAILOVER_SPACING (10), PING_INTERVAL (0.005; below 0.2 needs root),
# RESULT (remote), PERF_RESULTS (perf/results).
source "$(dirname "$0")/../lib.sh"
source "$PERF_ROOT/analyze/common.sh"
source "$PERF_ROOT/analyze/failover-lib.sh"

: "${ADMIN:?set ADMIN to the admin host:port of the relay}" "${PEER:?set PEER}" "${CUT_CMD:?set CUT_CMD}" "${RESTORE_CMD:?set RESTORE_CMD}"
[ -n "${STREAM_CMD:-}" ] || : "${TARGET:?set TARGET (or STREAM_CMD)}"
STREAM_CMD=${STREAM_CMD:-ping -D -n -i ${PING_INTERVAL:-0.005} $TARGET}
FO_PEER=$PEER
FO_CUTS=${FAILOVER_CUTS:-20}
FO_HOLD=${FAILOVER_HOLD:-2}
FO_SPACING=${FAILOVER_SPACING:-10}
NAME=failover-${RESULT:-remote}
command -v jq >/dev/null || die "needs jq"
[ -x "$RELAY" ] || RELAY=$(command -v relay) || die "needs the relay binary (RELAY=...)"

fo_status() { "$RELAY" status --admin "$ADMIN" --json; }
fo_active() { fo_status | jq -r --arg p "$PEER" '.peers[] | select(.name==$p) | .activePath'; }
fo_cut() { bash -c "$CUT_CMD"; }
fo_restore() { bash -c "$RESTORE_CMD"; }

FO_DIR=$(mktemp -d)
stream_pid=""
cleanup() {
	rc=$?
	[ -z "$stream_pid" ] || kill "$stream_pid" 2>/dev/null || true
	# Never leave the path cut.
	[ ! -f "$FO_DIR/cut-on" ] || fo_restore || log "restore failed: restore the path by hand"
	rm -rf "$FO_DIR"
	exit $rc
}
trap cleanup EXIT INT TERM
fo_cut() { : >"$FO_DIR/cut-on"; bash -c "$CUT_CMD"; }
fo_restore() { bash -c "$RESTORE_CMD"; rm -f "$FO_DIR/cut-on"; }

log "stream: $STREAM_CMD"
timeout "$PERF_TTL" bash -c "$STREAM_CMD" >"$FO_DIR/stream.log" 2>&1 &
stream_pid=$!
sleep 2
failover_run
kill "$stream_pid" 2>/dev/null || true
wait "$stream_pid" 2>/dev/null || true
stream_pid=""
settings=$(jq -n --argjson n "$FO_CUTS" --argjson hold "$FO_HOLD" --arg cut "$CUT_CMD" --arg admin "$ADMIN" --arg peer "$PEER" \
	'{cuts:$n, holdSeconds:$hold, cut:$cut, admin:$admin, peer:$peer}')
failover_report "$NAME" "$FO_DIR/stream.log" "$settings"
