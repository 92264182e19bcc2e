#!/usr/bin/env bash
# perf/scenarios/failover.sh: scenario 3. A continuous ping stream (with
# sequence numbers) from pod-a to pod-b while the direct A-B link is cut
# (both directions, in the wanem bridge) and restored N times; per cut:
# the interruption the stream saw, packets lost, when relay A switched
# (its own event log), and the time to fail back after the restore.
#
# Env: FAILOVER_CUTS (20), FAILOVER_HOLD seconds cut (2), FAILOVER_SPACING
# minimum seconds between cuts (10, so that dampening stays out of the way,
# see docs/config.md), PING_INTERVAL (0.005), PERF_HEALTH (relay health
# settings, e.g. '{interval: 50ms}'), RESULT name suffix (default).
#
# For your own relays, see failover-remote.sh.
source "$(dirname "$0")/../lib.sh"
source "$PERF_ROOT/analyze/common.sh"
source "$PERF_ROOT/analyze/failover-lib.sh"

FO_CUTS=${FAILOVER_CUTS:-20}
FO_HOLD=${FAILOVER_HOLD:-2}
FO_SPACING=${FAILOVER_SPACING:-10}
FO_PEER=provider-b
INTERVAL=${PING_INTERVAL:-0.005}
NAME=failover-${RESULT:-default}

fo_active() { active_path provider-a; }
fo_status() { relay_status provider-a; }
fo_cut() { wan_set ab --cut; }
fo_restore() { wan_set ab --restore; }

perf_require
perf_trap
perf_up
FO_DIR=$PERF_STATE/failover
mkdir -p "$FO_DIR"
start pod-a stream ping -D -n -i "$INTERVAL" "$POD_B"
sleep 2
failover_run
stop stream
settings=$(jq -n --argjson n "$FO_CUTS" --argjson hold "$FO_HOLD" --arg health "$PERF_HEALTH" \
	--arg a "$PERF_MODE_A" --arg b "$PERF_MODE_B" \
	'{cuts:$n, holdSeconds:$hold, health:$health, modeA:$a, modeB:$b, cut:"direct A-B link, both directions (wanem)",
	  wan:{ab:env.WAN_AB_DELAY, ac:env.WAN_AC_DELAY, cb:env.WAN_CB_DELAY}}')
failover_report "$NAME" "$PERF_STATE/stream.log" "$settings"
