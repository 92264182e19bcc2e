# shellcheck shell=bash
# perf/analyze/failover-lib.sh: the failover measurement, independent of
# how a path is cut. The caller defines:
#   fo_active    print the active path of the peer under test
#   fo_status    print the relay's /status JSON
#   fo_cut       cut the path FO_PATH
#   fo_restore   restore it
# and sets FO_DIR (work directory), FO_PEER, FO_PATH (default direct),
# FO_CUTS, FO_HOLD (seconds cut), FO_SPACING (minimum seconds between cuts).
#
# The report also gives the detector's physical limit (summary.detectBound):
# a probe-based detector cannot declare a path down sooner than
# detectMultiplier x interval after the last answer, the last answer may
# still have been in flight at the cut (one RTT), and the detector adds a
# jitter margin of 4 x the RTT variation, capped at half the detect time.
# RTT and variation are the relay's own figures for the path just before
# each cut (medians over the cuts).

# failover_run: cut and restore FO_CUTS times; cut times in $FO_DIR/cuts,
# the relay's switch events in $FO_DIR/events.
failover_run() {
	local path=${FO_PATH:-direct} last=0 i wait t_cut t_restore pre
	: >"$FO_DIR/cuts"
	: >"$FO_DIR/events"
	: >"$FO_DIR/precut"
	for i in $(seq "$FO_CUTS"); do
		wait_for 60 "traffic on the $path path" fo_is "$path"
		wait=$(awk -v l="$last" -v s="$FO_SPACING" -v n="$(now)" 'BEGIN{w = l + s - n; print (w > 1 ? w : 1)}')
		sleep "$wait"
		# One line per cut, {} when the relay did not answer, so that the
		# lines stay paired with the cuts.
		pre=$(fo_status | jq -c --arg peer "$FO_PEER" --arg path "$path" \
			'[.peers[] | select(.name == $peer) | .paths[] | select(.name == $path) | {rttMs, jitterMs}][0] // {}') || pre=
		echo "${pre:-"{}"}" >>"$FO_DIR/precut"
		t_cut=$(now)
		fo_cut
		last=$t_cut
		wait_for 20 "traffic to leave the $path path" fo_is_not "$path"
		sleep "$FO_HOLD"
		t_restore=$(now)
		fo_restore
		echo "$i $t_cut $t_restore" >>"$FO_DIR/cuts"
		fo_status | jq -c '.events[]' >>"$FO_DIR/events"
		log "cut $i/$FO_CUTS done"
	done
	wait_for 60 "traffic back on the $path path" fo_is "$path"
	sleep 1
	fo_status | jq -c '.events[]' >>"$FO_DIR/events"
}
# detect_bound_jq: the jq definition of detect_bound(RTTS; JITTERS), with
# the health settings (a YAML flow mapping, "" for the defaults) as input:
# {intervalMs, multiplier, detectMs, rttMs, jitterMs, jitterMarginMs, ms},
# ms = detectMs + rttMs + jitterMarginMs; null figures without samples.
detect_bound_jq() {
	cat <<'JQ'
def dur_ms: capture("^(?<n>[0-9.]+)(?<u>ms|s)$") | (.n | tonumber) * (if .u == "s" then 1000 else 1 end);
def med: sort | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
def detect_bound($rtts; $jitters):
	((capture("interval: *(?<v>[0-9.]+m?s)").v | dur_ms) // 100) as $iv |
	((capture("detectMultiplier: *(?<v>[0-9]+)").v | tonumber) // 3) as $m |
	($iv * $m) as $d | ($rtts | med) as $rtt | ($jitters | med) as $j |
	{intervalMs: $iv, multiplier: $m, detectMs: $d, rttMs: (if $rtt == null then null else $rtt * 100 | round / 100 end), jitterMs: (if $j == null then null else $j * 1000 | round / 1000 end),
	 jitterMarginMs: (if $j == null then null else [4 * $j, $d / 2] | min end),
	 ms: (if $rtt == null or $j == null then null else ($d + $rtt + ([4 * $j, $d / 2] | min)) * 10 | round / 10 end)};
JQ
}

fo_is() { [ "$(fo_active)" = "$1" ]; }
fo_is_not() { local a; a=$(fo_active) && [ "$a" != "$1" ]; }

# failover_report NAME STREAM_LOG SETTINGS_JSON: per-cut figures from the
# stream (`ping -D -n` output) and the relay's events; writes
# $PERF_RESULTS/NAME.json and, with gnuplot, NAME.png.
failover_report() {
	local name=$1 stream=$2 settings=$3 W=$FO_DIR path=${FO_PATH:-direct}
	awk -f "$ANALYZE/ping.awk" "$stream" | sort -n >"$W/samples"
	[ -s "$W/samples" ] || die "the stream $stream has no answers"
	awk -f "$ANALYZE/failover.awk" "$W/cuts" "$W/samples" >"$W/gaps"
	local interval_ms
	interval_ms=$(awk '/^# interval_ms/{print $3}' "$W/gaps")
	sort -u "$W/events" | jq -r --arg p "$FO_PEER" 'select(.peer==$p) | "\(.at) \(.from // "-") \(.to // "-") \(.reason)"' |
		while read -r at from to reason; do echo "$(ts_epoch "$at") $from $to $reason"; done | sort -n >"$W/switches"
	local i t_cut t_restore sw fb intr lost fbintr losttot
	while read -r i t_cut t_restore; do
		sw=$(awk -v t="$t_cut" -v p="$path" '$1 >= t && $2==p {print $1; exit}' "$W/switches")
		fb=$(awk -v t="$t_restore" -v p="$path" '$1 >= t && $3==p {print $1; exit}' "$W/switches")
		read -r _ intr lost fbintr losttot < <(awk -v i="$i" '$1==i' "$W/gaps")
		jq -nc --argjson i "$i" --argjson intr "$intr" --argjson lost "$lost" --argjson fbi "$fbintr" --argjson lt "$losttot" \
			--arg sw "$sw" --arg fb "$fb" --argjson tc "$t_cut" --argjson tr "$t_restore" \
			'{cut:$i, interruptionMs:$intr, lostPackets:$lost, switchAfterMs:(if $sw=="" then null else (($sw|tonumber)-$tc)*1000|round end),
			  failbackAfterMs:(if $fb=="" then null else (($fb|tonumber)-$tr)*1000|round end), failbackInterruptionMs:$fbi, lostPacketsTotal:$lt}'
	done <"$W/cuts" >"$W/percut.jsonl"
	# The path's RTT and variation before each cut, per cut.
	if [ -s "$W/precut" ]; then
		jq -sc --slurpfile pre "$W/precut" '[., $pre] | transpose | map(.[0] + {preCut: .[1]}) | .[]' "$W/percut.jsonl" >"$W/percut.tmp"
		mv "$W/percut.tmp" "$W/percut.jsonl"
	fi
	jq -r '.interruptionMs' "$W/percut.jsonl" >"$W/intr"
	jq -r '.failbackAfterMs // empty' "$W/percut.jsonl" >"$W/fb"
	jq -r '.switchAfterMs // empty' "$W/percut.jsonl" >"$W/sw"
	mkdir -p "$PERF_RESULTS/raw/$name"
	# Raw data, for a second look (not committed).
	cp "$W/cuts" "$W/events" "$W/samples" "$W/gaps" "$W/switches" "$PERF_RESULTS/raw/$name/"
	jq -n --arg name "$name" --argjson machine "$(machine_json)" --slurpfile cuts "$W/percut.jsonl" \
		--argjson intr "$(stats_json "$W/intr")" --argjson fb "$(stats_json "$W/fb")" --argjson sw "$(stats_json "$W/sw")" \
		--argjson settings "$settings" --argjson iv "$interval_ms" \
		--arg when "$(date -u +%FT%TZ)" --arg cmd "${PERF_COMMAND:-$0}" \
		"$(detect_bound_jq)"'
		{scenario:"failover", name:$name, when:$when, command:$cmd, machine:$machine,
		  settings:($settings + {streamIntervalMs:$iv}),
		  summary:{interruptionMs:$intr, relaySwitchAfterCutMs:$sw, failbackAfterRestoreMs:$fb,
		           lostPackets:([$cuts[].lostPackets]|add), failbackInterruptionMaxMs:([$cuts[].failbackInterruptionMs]|max),
		           detectBound:(($settings.health // "") | detect_bound([$cuts[].preCut.rttMs // empty]; [$cuts[].preCut.jitterMs // empty]))},
		  cuts:$cuts}' >"$PERF_RESULTS/$name.json"
	log "wrote $PERF_RESULTS/$name.json"
	jq -c '.summary | {interruptionMs, failbackAfterRestoreMs:.failbackAfterRestoreMs.p50, lostPackets}' "$PERF_RESULTS/$name.json"
	have_gnuplot || return 0
	local t0 n
	n=$(wc -l <"$W/cuts")
	t0=$(head -1 "$W/samples" | awk '{print $2}')
	awk -v t0="$t0" '{printf "%.3f %.3f\n", $2 - t0, $4}' "$W/samples" >"$W/rtt.dat"
	local tmax
	tmax=$(sort -n "$W/rtt.dat" | tail -1 | awk '{print $1}')
	awk -v t0="$t0" '{printf "%.3f %.3f\n", $2 - t0, $3 - t0}' "$W/cuts" >"$W/cuts.dat"
	jq -r '"\(.cut) \(.interruptionMs)"' "$W/percut.jsonl" >"$W/intr.dat"
	gnuplot <<GP
set terminal pngcairo size 1100,700 font ",10"
set output "$PERF_RESULTS/$name.png"
set multiplot layout 2,1 title "liqo-relay failover: $n cuts of the $path path ($name)"
set xlabel "time (s)"; set ylabel "stream RTT (ms)"; set grid
set xrange [0:$tmax]
set style fill transparent solid 0.15 noborder
plot "$W/cuts.dat" using (\$1+\$2)/2:(0):(\$1):(\$2):(0):(200) with boxxyerror lc rgb "red" title "$path path cut", \
     "$W/rtt.dat" using 1:2 with dots lc rgb "blue" title "ping RTT (gaps = lost)"
set xlabel "cut"; set ylabel "interruption (ms)"; set yrange [0:*]
set xrange [0.5:$n+0.5]; set xtics 1; set boxwidth 0.8
set style fill solid 0.6
plot "$W/intr.dat" using 1:2 with boxes lc rgb "dark-orange" title "interruption per cut", \
     $(jq '.summary.interruptionMs.p50' "$PERF_RESULTS/$name.json") with lines lw 2 lc rgb "black" title "median"
unset multiplot
GP
	log "wrote $PERF_RESULTS/$name.png"
}
