#!/usr/bin/env bash
# perf/scenarios/tcp-path-move.sh: what the sender's congestion control
# does when its flow moves to a slower path and stays there (docs/
# failover.md, "A restore TCP does not feel"). Not part of `make perf`: it
# explains a figure, it is not one to gate on.
#
# Two flows pod-a → pod-b, paced at PM_RATE (30 Mbit/s) with congestion
# control PM_CC (default bbr), one after the other:
#
#   moved    starts on the direct path (RTT 20 ms); after PM_LEAD s the
#            direct link is cut, so both relays move it to the consumer
#            path (RTT 100 ms), where it stays for PM_STAY s;
#   started  starts on the consumer path (the direct link cut before it)
#            and runs as long: the reference.
#
# Every 0.5 s the sender's socket is read with `ss -ti`: RTT, and for BBR
# its bandwidth estimate and minimum RTT (`bbr:(bw:…,mrtt:…)`), the
# delivery rate and cwnd. Writes perf/results/tcp-path-move-$RESULT.json
# (samples of both flows, seconds since each flow's start) and .png.
#
# Env: PM_CC (bbr), PM_RATE (30M), PM_LEAD (3, whole seconds), PM_STAY
# (14), RESULT name suffix (default: PM_CC).
source "$(dirname "$0")/../lib.sh"
source "$PERF_ROOT/analyze/common.sh"

CC=${PM_CC:-bbr}
RATE=${PM_RATE:-30M}
LEAD=${PM_LEAD:-3}
STAY=${PM_STAY:-14}
NAME=tcp-path-move-${RESULT:-$CC}
SECS=$((LEAD + STAY))
# The data connection's own port, so that ss reads it and not iperf3's
# control connection to the same server port.
DATA_PORT=5299

perf_require iperf3 ss
perf_trap
perf_up
W=$PERF_STATE/tcp-path-move
mkdir -p "$W"

# sample: one line of the flow's socket state as JSON (nulls where ss
# does not report a field, e.g. bw and mrtt for a flow that is not BBR).
sample() {
	nsx pod-a ss -tin dst "$POD_B" sport = :"$DATA_PORT" | tail -n 1 | awk -v t="$1" '
		function num(re,   m) { if (match($0, re)) { m = substr($0, RSTART, RLENGTH); sub(/^[^:]*:/, "", m); sub(/bps$/, "", m); return m + 0 } return "null" }
		{ rtt = num(" rtt:[0-9.]+"); bw = num("bw:[0-9]+bps"); mrtt = num("mrtt:[0-9.]+"); cwnd = num("cwnd:[0-9]+")
		  dr = "null"; if (match($0, /delivery_rate [0-9]+bps/)) { dr = substr($0, RSTART + 14, RLENGTH - 17) + 0 }
		  printf "{\"t\":%s,\"rttMs\":%s,\"bbrBwMbps\":%s,\"bbrMinRttMs\":%s,\"deliveryMbps\":%s,\"cwnd\":%s}\n", t, rtt,
		    (bw == "null" ? "null" : bw / 1e6), mrtt, (dr == "null" ? "null" : dr / 1e6), cwnd }'
}

# flow NAME CUT_AT: one flow for SECS s, the direct link cut CUT_AT s
# after it starts (0: cut before it starts), restored after it.
flow() {
	local name=$1 cut_at=$2 t0 i
	[ "$cut_at" != 0 ] || { wan_set ab --cut; sleep 2; }
	start pod-b "iperf3-$name" iperf3 -s -1 -B "$POD_B"
	wait_for 10 "iperf3 server in pod-b" nsx pod-b sh -c "ss -ltn | grep -q ':5201 '"
	nsx pod-a timeout -k 5 $((SECS + 20)) iperf3 -c "$POD_B" -t "$SECS" -C "$CC" --fq-rate "$RATE" --cport "$DATA_PORT" --json >"$W/$name.json" &
	local client=$!
	t0=$(now)
	: >"$W/$name.samples"
	for i in $(seq $((SECS * 2))); do
		sleep 0.5
		if [ "$cut_at" != 0 ] && [ "$i" = $((cut_at * 2)) ]; then wan_set ab --cut; fi
		sample "$(awk -v a="$(now)" -v b="$t0" 'BEGIN{printf "%.2f", a-b}')" >>"$W/$name.samples" || true
	done
	wait "$client" || die "iperf3 client ($name) failed: $(head -c 400 "$W/$name.json")"
	stop "iperf3-$name"
	wan_set ab --restore
	wait_for 30 "direct path again" active_is provider-a direct
}

flow moved "$LEAD"
flow started 0
jq -n --arg name "$NAME" --argjson machine "$(machine_json)" --arg when "$(date -u +%FT%TZ)" \
	--arg cmd "${PERF_COMMAND:-$0}" --arg cc "$CC" --arg rate "$RATE" --argjson lead "$LEAD" --argjson stay "$STAY" \
	--slurpfile moved "$W/moved.samples" --slurpfile started "$W/started.samples" \
	--argjson movedMbps "$(jq '.end.sum_sent.bits_per_second / 1e6 | . * 10 | round / 10' "$W/moved.json")" \
	--argjson startedMbps "$(jq '.end.sum_sent.bits_per_second / 1e6 | . * 10 | round / 10' "$W/started.json")" \
	'{scenario:"tcp-path-move", name:$name, when:$when, command:$cmd, machine:$machine,
	  settings:{congestionControl:$cc, rate:$rate, leadS:$lead, stayS:$stay,
	            wan:{ab:env.WAN_AB_DELAY, ac:env.WAN_AC_DELAY, cb:env.WAN_CB_DELAY}},
	  meanMbps:{moved:$movedMbps, started:$startedMbps},
	  samples:{moved:$moved, started:$started}}' >"$PERF_RESULTS/$NAME.json"
log "wrote $PERF_RESULTS/$NAME.json"
jq -r '.samples.moved[] | "moved   t=\(.t) rtt=\(.rttMs) bw=\(.bbrBwMbps) mrtt=\(.bbrMinRttMs) delivery=\(.deliveryMbps) cwnd=\(.cwnd)"' "$PERF_RESULTS/$NAME.json" >&2
jq -c '.meanMbps' "$PERF_RESULTS/$NAME.json"

have_gnuplot || exit 0
jq -r '.samples.moved[] | "\(.t) \(.deliveryMbps // "NaN") \(.rttMs // "NaN")"' "$PERF_RESULTS/$NAME.json" >"$W/moved.dat"
jq -r '.samples.started[] | "\(.t) \(.deliveryMbps // "NaN") \(.rttMs // "NaN")"' "$PERF_RESULTS/$NAME.json" >"$W/started.dat"
gnuplot <<GP
set terminal pngcairo size 1000,500 font ",10"
set output "$PERF_RESULTS/$NAME.png"
set title "A $CC flow paced at $RATE: moved from direct to consumer at ${LEAD} s, and started on consumer ($NAME)"
set xlabel "seconds since the flow started"; set ylabel "delivery rate (Mbit/s, ss -ti)"; set y2label "RTT (ms)"
set ytics nomirror; set y2tics; set grid; set yrange [0:*]; set y2range [0:*]
set key below
set arrow from $LEAD, graph 0 to $LEAD, graph 1 nohead dt 3 lc rgb "black"
plot "$W/moved.dat" using 1:2 with linespoints pt 7 lc rgb "red" title "moved: delivery rate", \
     "$W/started.dat" using 1:2 with linespoints pt 5 lc rgb "blue" title "started on consumer: delivery rate", \
     "$W/moved.dat" using 1:3 axes x1y2 with lines dt 2 lc rgb "red" title "moved: RTT"
GP
log "wrote $PERF_RESULTS/$NAME.png"
