#!/usr/bin/env bash
# perf/scenarios/flapping.sh: scenario 4. The direct link gets bursty loss
# (Gilbert-Elliott) and heavy jitter for FLAP_SECONDS while the consumer
# path is clean and about as fast; relay A's path switches are counted
# (relay_path_switches_total, by reason) for our selector and for the
# naive one (`health: {selector: naive}`: always the lowest last RTT), with
# the same seeded impairments. A ping stream pod-a -> pod-b runs meanwhile,
# to show what the application saw.
#
# Env: FLAP_SECONDS (180), FLAP_DELAY/FLAP_JITTER of the direct link each
# way (20ms/15ms), FLAP_BURST (0.02,0.3: Good->Bad, Bad->Good), consumer
# links FLAP_CONSUMER_DELAY each (12ms), RESULT.
source "$(dirname "$0")/../lib.sh"
source "$PERF_ROOT/analyze/common.sh"

SECS=${FLAP_SECONDS:-180}
DELAY=${FLAP_DELAY:-20ms} JITTER=${FLAP_JITTER:-15ms}
BURST=${FLAP_BURST:-0.02,0.3}
CDELAY=${FLAP_CONSUMER_DELAY:-12ms}
NAME=flapping-${RESULT:-default}

perf_require curl
perf_trap
perf_up
W=$PERF_STATE/flap
mkdir -p "$W" "$PERF_RESULTS"

# switches NS: "reason count" lines of the relay's path switches.
switches() {
	nsx "$1" curl -fsS "http://$ADMIN/metrics" |
		awk '/^relay_path_switches_total\{/ { match($0, /reason="[^"]*"/); r = substr($0, RSTART+8, RLENGTH-9); c[r] += $NF }
		     END { for (r in c) print r, c[r] }'
}

for sel in lowest-cost naive; do
	log "selector $sel: ${SECS}s of bursty loss ($BURST) and jitter ($DELAY ± $JITTER) on the direct link"
	relays_stop
	wan_defaults
	PERF_HEALTH="{selector: $sel}" relays_configure
	relays_start
	switches provider-a >"$W/$sel.before"
	# Same seed, same impairment sequence for both selectors: restart the
	# bridges' randomness by re-applying the settings is not enough, so the
	# draws differ in detail; the statistics are what we compare.
	wan_set ac --reset --delay "$CDELAY" --jitter 1ms
	wan_set cb --reset --delay "$CDELAY" --jitter 1ms
	wan_set ab --reset --delay "$DELAY" --jitter "$JITTER" --burst "$BURST"
	start pod-a "ping-$sel" ping -D -n -i 0.02 "$POD_B"
	sleep "$SECS"
	stop "ping-$sel"
	switches provider-a >"$W/$sel.after"
	wan_show ab >"$W/$sel.wan.json"
	awk -f "$ANALYZE/ping.awk" "$PERF_STATE/ping-$sel.log" >"$W/$sel.samples"
	sent=$(awk '{s=$1} END{print s+0}' "$W/$sel.samples")
	got=$(wc -l <"$W/$sel.samples")
	# Switches during the run: after minus before, per reason.
	awk 'FNR==NR{b[$1]=$2; next} {d=$2-b[$1]; if (d>0) printf "{\"%s\":%d}\n", $1, d}' "$W/$sel.before" "$W/$sel.after" |
		jq -s 'add // {}' >"$W/$sel.switches.json"
	jq -n --arg sel "$sel" --slurpfile sw "$W/$sel.switches.json" --argjson rtt "$(stats_json "$W/$sel.samples" 4)" \
		--argjson sent "$sent" --argjson got "$got" --argjson secs "$SECS" \
		'{selector:$sel, switches:($sw[0]|add // 0), switchesByReason:$sw[0], switchesPerMinute:((($sw[0]|add // 0)/$secs*60)*10|round/10),
		  stream:{sent:$sent, answered:$got, loss:(if $sent>0 then ((1-$got/$sent)*10000|round/10000) else null end), rttMs:$rtt}}' >"$W/$sel.json"
	log "$sel: $(jq -c '{switches, switchesByReason}' "$W/$sel.json")"
done

jq -n --arg name "$NAME" --argjson machine "$(machine_json)" --arg when "$(date -u +%FT%TZ)" \
	--arg cmd "${PERF_COMMAND:-perf/scenarios/flapping.sh}" --argjson secs "$SECS" \
	--arg d "$DELAY" --arg j "$JITTER" --arg b "$BURST" --arg cd "$CDELAY" \
	--slurpfile ours "$W/lowest-cost.json" --slurpfile naive "$W/naive.json" \
	'{scenario:"flapping", name:$name, when:$when, command:$cmd, machine:$machine,
	  settings:{seconds:$secs, direct:{delay:$d, jitter:$j, burst:$b}, consumer:{delayPerLink:$cd, jitter:"1ms"}},
	  lowestCost:$ours[0], naive:$naive[0]}' >"$PERF_RESULTS/$NAME.json"
log "wrote $PERF_RESULTS/$NAME.json"
jq -c '{ours:.lowestCost.switches, naive:.naive.switches, oursLoss:.lowestCost.stream.loss, naiveLoss:.naive.stream.loss}' "$PERF_RESULTS/$NAME.json"

if have_gnuplot; then
	jq -r '"lowest-cost \(.lowestCost.switches)", "naive \(.naive.switches)"' "$PERF_RESULTS/$NAME.json" >"$W/bars.dat"
	gnuplot <<GP
set terminal pngcairo size 700,450 font ",10"
set output "$PERF_RESULTS/$NAME.png"
set title "path switches in ${SECS}s of a flapping direct link ($NAME)"
set ylabel "switches (relay A)"; set grid y; set yrange [0:*]
set style fill solid 0.6; set boxwidth 0.5
plot "$W/bars.dat" using 0:2:xtic(1) with boxes lc rgb "dark-orange" notitle, "" using 0:2:2 with labels offset 0,1 notitle
GP
	log "wrote $PERF_RESULTS/$NAME.png"
fi
