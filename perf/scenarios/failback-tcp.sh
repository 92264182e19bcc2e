#!/usr/bin/env bash
# perf/scenarios/failback-tcp.sh: TCP across many restores.
# One iperf3 TCP flow pod-a → pod-b, goodput every 100 ms; after
# FB_LEAD seconds on the direct path, the direct A-B link is cut (both
# directions) for FB_CUT seconds and restored, FB_RESTORES times, each
# restore followed by FB_SETTLE seconds (the failback comes ~4 s after a
# restore at default probes). Per restore:
#
#   cutDipMs     the same at the cut before it: the longest run below 10%
#                from the cut to the restore (detection and failover
#                without redundant sending; with `redundancy: duplicate`
#                the cut should pass unfelt); cutMinMbps, the lowest
#                100 ms of goodput in that window;
#   dipMs        the longest run of 100 ms intervals below 10% of the
#                pre-cut median goodput, from the restore to half a second
#                before the next cut (goodput-dip.awk), and where it
#                starts after the restore;
#   retransmits  the sender's retransmitted segments in the FB_SETTLE s
#                after the restore, against the baseline: the same span
#                before the first cut, on one path (scaled to FB_SETTLE);
#   failback     when relay A and relay B each moved back to direct, ms
#                after the restore, and their difference;
#   tcp          the sender's TCP counters (nstat in pod-a) over the
#                restore window: reordering seen, DSACKs, undos, fast
#                retransmits, timeouts.
#
# The flow is paced (FB_RATE, default 30 Mbit/s, below what either path
# and the emulator carry on a busy 2-core machine): an unpaced flow fills
# the emulator's queues and retransmits thousands of segments per window
# on one path, which hides what a restore adds.
#
# FB_CONTROL=1 runs the same flow and windows without cutting anything:
# the one-path reference for the dips and retransmits (what the machine
# and the emulator do to a flow that never moves).
#
# The sender's congestion control is set, not inherited from the machine
# (FB_CC, default cubic, Linux's default): BBR (v1) keeps the smallest RTT
# it saw for 10 s and caps what it has in flight at twice the bandwidth
# times that RTT, so after a move from the 20 ms direct path to the 100 ms
# consumer path its goodput decays until it fails back, and that decay,
# not the restore, is what a dip measured with BBR shows (docs/failover.md,
# "A restore TCP does not feel"). FB_CC=bbr measures it.
#
# Env: FB_RESTORES (20), FB_CUT (3), FB_SETTLE (7), FB_LEAD (8), FB_RATE
# (socket pacing cap, --fq-rate; 0: unpaced), FB_CC (cubic), FB_CONTROL (0),
# PERF_HEALTH, RESULT name suffix.
# Writes perf/results/failback-tcp-$RESULT.json and .png.
source "$(dirname "$0")/../lib.sh"
source "$PERF_ROOT/analyze/common.sh"

N=${FB_RESTORES:-20}
CUT=${FB_CUT:-3}
SETTLE=${FB_SETTLE:-7}
LEAD=${FB_LEAD:-8}
RATE=${FB_RATE:-30M}
CC=${FB_CC:-cubic}
CONTROL=${FB_CONTROL:-0}
NAME=failback-tcp-${RESULT:-default}
SECS=$((LEAD + N * (CUT + SETTLE) + 1))
# The sender's TCP counters read around each restore.
TCP_COUNTERS="TcpRetransSegs TcpExtTCPSACKReorder TcpExtTCPTSReorder TcpExtTCPRenoReorder TcpExtTCPDSACKRecv TcpExtTCPDSACKOfoRecv TcpExtTCPFullUndo TcpExtTCPPartialUndo TcpExtTCPDSACKUndo TcpExtTCPLossUndo TcpExtTCPFastRetrans TcpExtTCPTimeouts TcpExtTCPSpuriousRTOs TcpExtTCPLostRetransmit TcpExtTCPSACKReneging"

perf_require iperf3
perf_trap
perf_up
W=$PERF_STATE/failback-tcp
mkdir -p "$W"
# tcp_counters: the sender namespace's counters as one JSON object.
tcp_counters() {
	# shellcheck disable=SC2086 # a list of names
	nsx pod-a nstat -asz $TCP_COUNTERS 2>/dev/null | awk 'NF >= 2 && $1 !~ /^#/ {printf "%s\"%s\":%s", n++ ? "," : "{", $1, $2} END {print n ? "}" : "{}"}'
}

start pod-b iperf3-server iperf3 -s -1 -B "$POD_B" -i 0.1 --json
wait_for 10 "iperf3 server in pod-b" nsx pod-b sh -c "ss -ltn | grep -q ':5201 '"
# A rate is a pacing cap on the socket (--fq-rate: the kernel's TCP
# pacing), not iperf3's -b, which sends in bursts to catch up after a
# stall and so makes losses of its own.
pace=()
[ "$RATE" = 0 ] || pace=(--fq-rate "$RATE")
nsx pod-a timeout -k 5 $((SECS + 30)) iperf3 -c "$POD_B" -t "$SECS" -i 0.1 -C "$CC" "${pace[@]}" --json >"$W/client.json" &
client=$!
t0=$(now)
rel() { awk -v a="$1" -v b="$t0" 'BEGIN{printf "%.3f", a-b}'; }
sleep "$LEAD"
: >"$W/cycles"
for i in $(seq "$N"); do
	[ "$CONTROL" = 1 ] || wan_set ab --cut
	tc=$(now)
	sleep "$CUT"
	before=$(tcp_counters)
	[ "$CONTROL" = 1 ] || wan_set ab --restore
	tr=$(now)
	sleep "$SETTLE"
	after=$(tcp_counters)
	printf '%s %s %s %s\n' "$(rel "$tc")" "$(rel "$tr")" "$before" "$after" >>"$W/cycles"
	log "restore $i/$N at $(rel "$tr") s"
done
wait "$client" || die "iperf3 client failed: $(head -c 400 "$W/client.json")"
for n in provider-a provider-b; do relay_status "$n" | jq -c '.events[]' >"$W/events-$n"; done
wan_show ab >"$W/wanem-ab.json" || true
wait_for 10 "the iperf3 server's report" sh -c "! kill -0 $(cat "$PERF_STATE/iperf3-server.pid")"
stop iperf3-server
cp "$PERF_STATE/iperf3-server.log" "$W/iperf.json"

jq -r '.intervals[].sum | "\(.start) \(.end) \(.bits_per_second / 1e6)"' "$W/iperf.json" >"$W/series.dat"
[ -s "$W/series.dat" ] || die "iperf3 reported no intervals"
jq -r '.intervals[].sum | "\(.start) \(.end) \(.retransmits // 0)"' "$W/client.json" >"$W/retr.dat"
# Switches to direct of each relay, seconds since t0.
for n in provider-a provider-b; do
	jq -r 'select(.to=="direct") | .at' "$W/events-$n" | sort -u | while read -r at; do rel "$(ts_epoch "$at")"; echo; done | sort -n >"$W/back-$n"
done
first_cut=$(awk 'NR==1{print $1}' "$W/cycles")
# Baseline: retransmits per second on one path before the first cut (the
# first second, slow start, left out), scaled to the restore window.
base=$(awk -v e="$first_cut" -v w="$SETTLE" '$1 >= 1 && $2 <= e {r += $3; s += $2 - $1} END {printf "%.1f", (s > 0 ? r / s * w : 0)}' "$W/retr.dat")
: >"$W/restores"
i=0
while read -r tc tr before after; do
	i=$((i + 1))
	next=$(awk -v i="$i" 'NR==i+1{print $1}' "$W/cycles")
	next=${next:-$SECS}
	# The dip window ends half a second before the next cut: the 100 ms
	# interval that straddles that cut (iperf3's clock starts a little
	# after the script's) belongs to the next cut, not to this restore.
	dip=$(awk -f "$ANALYZE/goodput-dip.awk" -v cut="$first_cut" -v from="$tr" -v to="$(awk -v n="$next" 'BEGIN{print n - 0.5}')" "$W/series.dat")
	# iperf3's interval clock runs 0.15-0.2 s behind the script's, so the
	# interval holding the cut starts up to 0.2 s before tc in the series:
	# the window starts at tc - 0.25 (goodput-dip.awk takes from - 0.15),
	# still after the previous restore's window (it ends at tc - 0.5).
	cdip=$(awk -f "$ANALYZE/goodput-dip.awk" -v cut="$first_cut" -v from="$(awk -v t="$tc" 'BEGIN{print t - 0.1}')" -v to="$tr" "$W/series.dat")
	retr=$(awk -v a="$tr" -v b="$next" '$1 >= a - 0.05 && $1 < b {r += $3} END {print r + 0}' "$W/retr.dat")
	fa=$(awk -v a="$tr" -v b="$next" '$1 >= a && $1 < b {printf "%d", ($1 - a) * 1000; exit}' "$W/back-provider-a")
	fb=$(awk -v a="$tr" -v b="$next" '$1 >= a && $1 < b {printf "%d", ($1 - a) * 1000; exit}' "$W/back-provider-b")
	jq -nc --argjson i "$i" --argjson tc "$tc" --argjson tr "$tr" --argjson dip "$dip" --argjson cdip "$cdip" --argjson retr "$retr" \
		--argjson fa "${fa:-null}" --argjson fb "${fb:-null}" --argjson before "$before" --argjson after "$after" \
		'{restore:$i, cutS:$tc, restoreS:$tr, cutDipMs:$cdip.durationMs, cutMinMbps:$cdip.minMbps, dipMs:$dip.durationMs, dipStartAfterRestoreMs:(if $dip.startS then (($dip.startS - $tr) * 1000 | round) else null end),
		  minMbps:$dip.minMbps, retransmits:$retr, failbackAMs:$fa, failbackBMs:$fb,
		  failbackSkewMs:(if $fa and $fb then $fb - $fa else null end),
		  tcp:($after | with_entries(.value -= ($before[.key] // 0)))}' >>"$W/restores"
done <"$W/cycles"
mkdir -p "$PERF_RESULTS/raw/$NAME"
cp "$W"/{iperf.json,client.json,events-provider-a,events-provider-b,series.dat,retr.dat,cycles,wanem-ab.json} "$PERF_RESULTS/raw/$NAME/" 2>/dev/null || true

dips=$(jq -r .dipMs "$W/restores" | awk -f "$ANALYZE/stats.awk")
cdips=$(jq -r .cutDipMs "$W/restores" | awk -f "$ANALYZE/stats.awk")
cmins=$(jq -r .cutMinMbps "$W/restores" | awk -f "$ANALYZE/stats.awk")
retrs=$(jq -r .retransmits "$W/restores" | awk -f "$ANALYZE/stats.awk")
skews=$(jq -r '.failbackSkewMs // empty' "$W/restores" | awk -f "$ANALYZE/stats.awk")
fbA=$(jq -r '.failbackAMs // empty' "$W/restores" | awk -f "$ANALYZE/stats.awk")
jq -n --arg name "$NAME" --argjson machine "$(machine_json)" --arg when "$(date -u +%FT%TZ)" \
	--arg cmd "${PERF_COMMAND:-$0}" --argjson n "$N" --argjson cut "$CUT" --argjson settle "$SETTLE" --argjson lead "$LEAD" \
	--arg health "$PERF_HEALTH" --arg rate "$RATE" --arg cc "$CC" --arg control "$CONTROL" --argjson base "$base" \
	--argjson dips "$dips" --argjson cdips "$cdips" --argjson cmins "$cmins" --argjson retrs "$retrs" --argjson skews "$skews" --argjson fbA "$fbA" \
	--slurpfile restores "$W/restores" \
	--argjson pre "$(awk -f "$ANALYZE/goodput-dip.awk" -v cut="$first_cut" -v from=1e9 "$W/series.dat")" \
	'{scenario:"failback-tcp", name:$name, when:$when, command:$cmd, machine:$machine,
	  settings:{restores:$n, control:($control == "1"), cutS:$cut, settleS:$settle, leadS:$lead, rate:$rate, congestionControl:$cc, health:$health,
	            cut:"direct A-B link, both directions (wanem)", wan:{ab:env.WAN_AB_DELAY, ac:env.WAN_AC_DELAY, cb:env.WAN_CB_DELAY}},
	  preCutMedianMbps:$pre.preCutMedianMbps,
	  summary:{cutDipMs:$cdips, cutMinMbps:$cmins, dipMs:$dips, retransmitsPerRestore:$retrs, baselineRetransmitsPerWindow:$base,
	           failbackAMs:$fbA, failbackSkewMs:$skews},
	  restores:$restores}' >"$PERF_RESULTS/$NAME.json"
log "wrote $PERF_RESULTS/$NAME.json"
jq -c '{cutDip:.summary.cutDipMs, dip:.summary.dipMs, retr:.summary.retransmitsPerRestore, base:.summary.baselineRetransmitsPerWindow, skew:.summary.failbackSkewMs}' "$PERF_RESULTS/$NAME.json"
jq -r '.restores[] | "restore \(.restore): cut dip \(.cutDipMs) ms, dip \(.dipMs) ms (+\(.dipStartAfterRestoreMs) ms), retr \(.retransmits), back A +\(.failbackAMs) B +\(.failbackBMs), tcp \(.tcp | tostring)"' "$PERF_RESULTS/$NAME.json" >&2

have_gnuplot || exit 0
# Per restore: the dip and the retransmits in the window after it.
jq -r '.restores[] | "\(.restore) \(.dipMs) \(.retransmits)"' "$PERF_RESULTS/$NAME.json" >"$W/plot.dat"
gnuplot <<GP
set terminal pngcairo size 1000,500 font ",10"
set output "$PERF_RESULTS/$NAME.png"
set title "liqo-relay: TCP after each of $N restores of the direct link ($NAME)"
set xlabel "restore"; set ylabel "goodput dip after the restore (ms, 100 ms steps)"; set y2label "retransmitted segments in the ${SETTLE} s after it"
set ytics nomirror; set y2tics; set grid; set yrange [0:*]; set y2range [0:*]
set style fill solid 0.6 noborder; set boxwidth 0.6
set key below
plot "$W/plot.dat" using 1:2 with boxes lc rgb "orange" title "dip below 10% of the pre-cut median", \
     100 with lines dt 2 lc rgb "red" title "target: p95 < 100 ms", \
     "$W/plot.dat" using 1:3 axes x1y2 with linespoints pt 7 lc rgb "blue" title "retransmits after the restore", \
     $base axes x1y2 with lines dt 3 lc rgb "blue" title "baseline: the same span on one path"
GP
log "wrote $PERF_RESULTS/$NAME.png"
