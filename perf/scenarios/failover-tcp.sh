#!/usr/bin/env bash
# perf/scenarios/failover-tcp.sh: scenario 3 with a TCP flow. iperf3 TCP
# from pod-a to pod-b for FT_SECONDS, goodput reported every 100 ms; the
# direct A-B link is cut (both directions, like failover.sh) at FT_CUT_AT
# and restored at FT_RESTORE_AT. The dip is the longest run of intervals
# below 10% of the median goodput before the cut.
#
# The sender's congestion control is FT_CC (default cubic), not the
# machine's (see failback-tcp.sh for why BBR is measured apart).
#
# Env: FT_SECONDS (25), FT_CUT_AT (8), FT_RESTORE_AT (16), FT_RATE (iperf3
# -b, default unlimited), FT_CC (cubic), PERF_HEALTH, RESULT name suffix
# (default).
# Writes perf/results/failover-tcp-$RESULT.json and .png.
source "$(dirname "$0")/../lib.sh"
source "$PERF_ROOT/analyze/common.sh"

SECS=${FT_SECONDS:-25}
CUT_AT=${FT_CUT_AT:-8}
RESTORE_AT=${FT_RESTORE_AT:-16}
RATE=${FT_RATE:-0}
CC=${FT_CC:-cubic}
NAME=failover-tcp-${RESULT:-default}

perf_require iperf3
perf_trap
perf_up
W=$PERF_STATE/failover-tcp
mkdir -p "$W"
# The receiver's intervals are the goodput (the sender's count bytes
# written into its socket buffer): a one-off server reporting every 100 ms,
# whose JSON (in its log) comes at the end of the test.
start pod-b iperf3-server iperf3 -s -1 -B "$POD_B" -i 0.1 --json
wait_for 10 "iperf3 server in pod-b" nsx pod-b sh -c "ss -ltn | grep -q ':5201 '"

nsx pod-a timeout -k 5 $((SECS + 30)) iperf3 -c "$POD_B" -t "$SECS" -i 0.1 -b "$RATE" -C "$CC" --json >"$W/client.json" &
client=$!
t0=$(now)
sleep "$CUT_AT"
t_cut=$(now)
wan_set ab --cut
log "direct link cut at $(awk -v a="$t_cut" -v b="$t0" 'BEGIN{printf "%.2f", a-b}') s"
sleep "$(awk -v r="$RESTORE_AT" -v c="$CUT_AT" 'BEGIN{print r-c}')"
t_restore=$(now)
wan_set ab --restore
log "direct link restored at $(awk -v a="$t_restore" -v b="$t0" 'BEGIN{printf "%.2f", a-b}') s"
wait "$client" || die "iperf3 client failed: $(head -c 400 "$W/client.json")"
relay_status provider-a | jq -c '.events[]' >"$W/events"
wait_for 10 "the iperf3 server's report" sh -c "! kill -0 $(cat "$PERF_STATE/iperf3-server.pid")"
stop iperf3-server
cp "$PERF_STATE/iperf3-server.log" "$W/iperf.json"

# Time 0 is when we started the client: iperf3's own start timestamp has
# whole seconds only; the test starts within a few ms of it.
jq -r '.intervals[].sum | "\(.start) \(.end) \(.bits_per_second / 1e6)"' "$W/iperf.json" >"$W/series.dat"
[ -s "$W/series.dat" ] || die "iperf3 reported no intervals"
cut_s=$(awk -v a="$t_cut" -v b="$t0" 'BEGIN{printf "%.3f", a-b}')
restore_s=$(awk -v a="$t_restore" -v b="$t0" 'BEGIN{printf "%.3f", a-b}')
# Switch events of relay A, seconds since t0.
jq -r 'select(.peer=="provider-b") | [.at, (.from // "" | if . == "" then "-" else . end), (.to // "-"), (.reason // "-")] | join(" ")' "$W/events" | sort -u |
	while read -r at from to reason; do
		awk -v a="$(ts_epoch "$at")" -v b="$t0" -v f="$from" -v t="$to" -v r="$reason" 'BEGIN{printf "%.3f %s %s %s\n", a-b, f, t, r}'
	done | sort -n >"$W/switches"
awk -f "$ANALYZE/goodput-dip.awk" -v cut="$cut_s" -v to="$restore_s" "$W/series.dat" >"$W/dip.json"
awk -f "$ANALYZE/goodput-dip.awk" -v cut="$cut_s" -v from="$restore_s" "$W/series.dat" >"$W/dip-failback.json"
mkdir -p "$PERF_RESULTS/raw/$NAME"
cp "$W/iperf.json" "$W/client.json" "$W/events" "$W/series.dat" "$W/switches" "$PERF_RESULTS/raw/$NAME/"

jq -n --arg name "$NAME" --argjson machine "$(machine_json)" --arg when "$(date -u +%FT%TZ)" \
	--arg cmd "${PERF_COMMAND:-$0}" --argjson dip "$(cat "$W/dip.json")" --argjson fbdip "$(cat "$W/dip-failback.json")" \
	--argjson secs "$SECS" --argjson cut "$cut_s" --argjson restore "$restore_s" --arg health "$PERF_HEALTH" \
	--arg a "$PERF_MODE_A" --arg b "$PERF_MODE_B" --arg rate "$RATE" --arg cc "$CC" \
	--rawfile series "$W/series.dat" --rawfile switches "$W/switches" \
	--argjson retr "$(jq '.end.sum_sent.retransmits // null' "$W/client.json")" \
	--argjson mbps "$(jq '.end.sum_received.bits_per_second / 1e6 | . * 10 | round / 10' "$W/iperf.json")" \
	'{scenario:"failover-tcp", name:$name, when:$when, command:$cmd, machine:$machine,
	  settings:{seconds:$secs, intervalMs:100, rate:$rate, congestionControl:$cc, health:$health, modeA:$a, modeB:$b,
	            cut:"direct A-B link, both directions (wanem)", wan:{ab:env.WAN_AB_DELAY, ac:env.WAN_AC_DELAY, cb:env.WAN_CB_DELAY}},
	  cutAtS:$cut, restoreAtS:$restore, dip:$dip, failbackDip:$fbdip, meanMbps:$mbps, retransmits:$retr,
	  switches:[$switches | splits("\n") | select(length > 0) | split(" ") | {atS:(.[0]|tonumber), from:.[1], to:.[2], reason:.[3]}],
	  series:[$series | splits("\n") | select(length > 0) | split(" ") | {startS:(.[0]|tonumber), endS:(.[1]|tonumber), mbps:(.[2]|tonumber * 10 | round / 10)}]}' \
	>"$PERF_RESULTS/$NAME.json"
log "wrote $PERF_RESULTS/$NAME.json"
jq -c '{dip, failbackDip, meanMbps, retransmits, switches}' "$PERF_RESULTS/$NAME.json"

have_gnuplot || exit 0
awk '{printf "%.3f %.3f\n", ($1 + $2) / 2, $3}' "$W/series.dat" >"$W/plot.dat"
ymax=$(awk 'BEGIN{m=0} $2>m{m=$2} END{print m * 1.15 + 1}' "$W/plot.dat")
# dip_box FILE TITLE: a gnuplot plot element shading the dip in FILE, if any.
dip_box() {
	local a b ms
	a=$(jq -r '.startS // empty' "$1") b=$(jq -r '.endS // empty' "$1") ms=$(jq -r '.durationMs' "$1")
	[ -n "$a" ] || return 0
	printf '"+" using ((%s+%s)/2):(0):(%s):(%s):(0):(%s) every ::0::0 with boxxyerror fs solid 0.45 noborder lc rgb "dark-orange" title "%s: %s ms below 10%% of the pre-cut median", ' \
		"$a" "$b" "$a" "$b" "$ymax" "$2" "$ms"
}
dip_plot="$(dip_box "$W/dip.json" "dip at the cut")$(dip_box "$W/dip-failback.json" "dip after the restore" | sed 's/dark-orange/orange/')"
thr=$(jq '.dip.thresholdMbps // 0' "$W/dip.json")
: >"$W/sw.dat"
awk '{print $1, $3}' "$W/switches" >"$W/sw.dat"
gnuplot <<GP
set terminal pngcairo size 1100,550 font ",10"
set output "$PERF_RESULTS/$NAME.png"
set title "liqo-relay: TCP goodput pod-a → pod-b (iperf3, 100 ms intervals) while the direct link is cut and restored ($NAME)"
set xlabel "time (s)"; set ylabel "goodput (Mbit/s)"; set grid
set xrange [0:$SECS]; set yrange [0:$ymax]
set style fill transparent solid 0.15 noborder
set arrow from $cut_s, graph 0 to $cut_s, graph 1 nohead front lc rgb "red" lw 2 dt 2
set arrow from $restore_s, graph 0 to $restore_s, graph 1 nohead front lc rgb "dark-green" lw 2 dt 2
set label "cut" at $cut_s, graph 0.95 offset 0.5,0 front tc rgb "red"
set label "restore" at $restore_s, graph 0.95 offset 0.5,0 front tc rgb "dark-green"
set key below
plot "+" using (($cut_s+$restore_s)/2):(0):($cut_s):($restore_s):(0):($ymax) every ::0::0 with boxxyerror lc rgb "red" title "direct path cut", \
     $dip_plot"$W/plot.dat" using 1:2 with linespoints pt 7 ps 0.4 lc rgb "blue" title "goodput per 100 ms", \
     $thr with lines dt 2 lw 1.5 lc rgb "gray30" title "10% of the pre-cut median", \
     "$W/sw.dat" using 1:($ymax*0.85):(sprintf("→ %s", stringcolumn(2))) with labels point pt 9 ps 1.2 lc rgb "black" offset 0,1 notitle
GP
log "wrote $PERF_RESULTS/$NAME.png"
