#!/usr/bin/env bash
# perf/scenarios/failover.sh: scenario 3. A continuous ping stream (with
# sequence numbers) from pod-a to pod-b while the direct A-B link is cut
# and restored N times; per cut: the interruption the stream saw, packets
# lost, when relay A switched (its own event log), and the time to fail
# back after the restore.
#
# Env: FAILOVER_CUTS (20), FAILOVER_HOLD seconds cut (2), FAILOVER_SPACING
# minimum seconds between cuts (10, so dampening stays out of the way as
# docs/config.md explains), PING_INTERVAL (0.005), PERF_HEALTH (relay
# health settings), RESULT name suffix (default "default").
#
# Against your own relays instead of the testbed: see perf/README.md
# (failover-remote.sh).
source "$(dirname "$0")/../lib.sh"
source "$PERF_ROOT/analyze/common.sh"

CUTS=${FAILOVER_CUTS:-20}
HOLD=${FAILOVER_HOLD:-2}
SPACING=${FAILOVER_SPACING:-10}
INTERVAL=${PING_INTERVAL:-0.005}
NAME=failover-${RESULT:-default}

perf_require
perf_trap
perf_up
W=$PERF_STATE/failover
mkdir -p "$W" "$PERF_RESULTS"
: >"$W/cuts"

start pod-a stream ping -D -n -i "$INTERVAL" "$POD_B"
sleep 2
last=0
for i in $(seq "$CUTS"); do
	wait_for 60 "traffic back on the direct path" active_is provider-a direct
	wait=$(awk -v l="$last" -v s="$SPACING" -v n="$(now)" 'BEGIN{w = l + s - n; print (w > 1 ? w : 1)}')
	sleep "$wait"
	t_cut=$(now)
	wan_set ab --cut
	last=$t_cut
	wait_for 20 "the switch to the consumer path" active_is provider-a consumer
	sleep "$HOLD"
	t_restore=$(now)
	wan_set ab --restore
	echo "$i $t_cut $t_restore" >>"$W/cuts"
	relay_status provider-a | jq -c '.events[]' >>"$W/events"
	log "cut $i/$CUTS done"
done
wait_for 60 "traffic back on the direct path" active_is provider-a direct
sleep 1
relay_status provider-a | jq -c '.events[]' >>"$W/events"
relay_status provider-a >"$W/status-a.json"
stop stream

# ---- analysis ----
awk -f "$ANALYZE/ping.awk" "$PERF_STATE/stream.log" | sort -n >"$W/samples"
awk -f "$ANALYZE/failover.awk" "$W/cuts" "$W/samples" >"$W/gaps"
interval_ms=$(awk '/^# interval_ms/{print $3}' "$W/gaps")
# Relay A's switches, as epoch seconds, deduplicated.
sort -u "$W/events" | jq -r 'select(.peer=="provider-b") | "\(.at) \(.from) \(.to) \(.reason)"' |
	while read -r at from to reason; do echo "$(ts_epoch "$at") $from $to $reason"; done | sort -n >"$W/switches"
# Per cut: the first switch away from direct after the cut, and the first
# failback after the restore.
while read -r i t_cut t_restore; do
	sw=$(awk -v t="$t_cut" '$1 >= t && $2=="direct" {print $1; exit}' "$W/switches")
	fb=$(awk -v t="$t_restore" '$1 >= t && $3=="direct" {print $1; exit}' "$W/switches")
	read -r _ intr lost fbintr losttot < <(awk -v i="$i" '$1==i' "$W/gaps")
	jq -nc --argjson i "$i" --argjson intr "$intr" --argjson lost "$lost" --argjson fbi "$fbintr" --argjson lt "$losttot" \
		--arg sw "$sw" --arg fb "$fb" --argjson tc "$t_cut" --argjson tr "$t_restore" \
		'{cut:$i, interruptionMs:$intr, lostPackets:$lost, switchAfterMs:(if $sw=="" then null else (($sw|tonumber)-$tc)*1000|round end),
		  failbackAfterMs:(if $fb=="" then null else (($fb|tonumber)-$tr)*1000|round end), failbackInterruptionMs:$fbi, lostPacketsTotal:$lt}'
done <"$W/cuts" >"$W/percut.jsonl"

jq -r '.interruptionMs' "$W/percut.jsonl" >"$W/intr"
jq -r '.failbackAfterMs // empty' "$W/percut.jsonl" >"$W/fb"
jq -r '.switchAfterMs // empty' "$W/percut.jsonl" >"$W/sw"
jq -n --arg name "$NAME" --argjson machine "$(machine_json)" --slurpfile cuts "$W/percut.jsonl" \
	--argjson intr "$(stats_json "$W/intr")" --argjson fb "$(stats_json "$W/fb")" --argjson sw "$(stats_json "$W/sw")" \
	--arg health "$PERF_HEALTH" --argjson n "$CUTS" --argjson hold "$HOLD" --argjson iv "$interval_ms" \
	--arg when "$(date -u +%FT%TZ)" --arg cmd "${PERF_COMMAND:-perf/scenarios/failover.sh}" \
	--arg modeA "$PERF_MODE_A" --arg modeB "$PERF_MODE_B" \
	'{scenario:"failover", name:$name, when:$when, command:$cmd, machine:$machine,
	  settings:{cuts:$n, holdSeconds:$hold, streamIntervalMs:$iv, health:$health, modeA:$modeA, modeB:$modeB,
	            wan:{ab:env.WAN_AB_DELAY, ac:env.WAN_AC_DELAY, cb:env.WAN_CB_DELAY}},
	  summary:{interruptionMs:$intr, relaySwitchAfterCutMs:$sw, failbackAfterRestoreMs:$fb,
	           lostPackets:([$cuts[].lostPackets]|add), failbackInterruptionMaxMs:([$cuts[].failbackInterruptionMs]|max)},
	  cuts:$cuts}' >"$PERF_RESULTS/$NAME.json"
log "wrote $PERF_RESULTS/$NAME.json"
jq -c '.summary' "$PERF_RESULTS/$NAME.json"

if have_gnuplot; then
	t0=$(head -1 "$W/samples" | awk '{print $2}')
	awk -v t0="$t0" '{printf "%.3f %.3f\n", $2 - t0, $4}' "$W/samples" >"$W/rtt.dat"
	awk -v t0="$t0" '{printf "%.3f %.3f\n", $2 - t0, $3 - t0}' "$W/cuts" >"$W/cuts.dat"
	jq -r '"\(.cut) \(.interruptionMs)"' "$W/percut.jsonl" >"$W/intr.dat"
	gnuplot <<GP
set terminal pngcairo size 1100,700 font ",10"
set output "$PERF_RESULTS/$NAME.png"
set multiplot layout 2,1 title "liqo-relay failover: $CUTS cuts of the direct A-B link ($NAME)"
set xlabel "time (s)"; set ylabel "pod-a -> pod-b RTT (ms)"; set grid
set style fill transparent solid 0.15 noborder
plot "$W/cuts.dat" using (\$1+\$2)/2:(0):(\$1):(\$2):(0):(200) with boxxyerror lc rgb "red" title "direct link cut", \
     "$W/rtt.dat" using 1:2 with dots lc rgb "blue" title "ping RTT (gaps = lost)"
set xlabel "cut"; set ylabel "interruption (ms)"; set yrange [0:*]
set xrange [0.5:$CUTS+0.5]; set xtics 1; set boxwidth 0.8
set style fill solid 0.6
plot "$W/intr.dat" using 1:2 with boxes lc rgb "dark-orange" title "interruption per cut", \
     $(jq '.summary.interruptionMs.p50' "$PERF_RESULTS/$NAME.json") with lines lw 2 lc rgb "black" title "median"
unset multiplot
GP
	log "wrote $PERF_RESULTS/$NAME.png"
fi
