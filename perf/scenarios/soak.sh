#!/usr/bin/env bash
# perf/scenarios/soak.sh: the soak. For SOAK_MINUTES the
# testbed carries traffic while everything that can happen to a relay
# happens to it, over and over, and the relays are sampled for leaks:
#
#   traffic  a bulk TCP flow pod-a -> pod-b (iperf3, paced at
#            SOAK_TCP_RATE) and a UDP stream pod-a -> pod-b, one datagram
#            every 5 ms with a sequence number (perf/cmd/udpstream), the
#            whole time;
#   cuts     the direct link cut at every SOAK_CUT_EVERY (10) s and
#            restored SOAK_CUT_HOLD (5) s later (wanem, both directions);
#   reloads  SIGHUP to both relays every SOAK_RELOAD_EVERY (30) s, 6 s into
#            the period (the relay re-reads its unchanged configuration);
#   kills    every SOAK_KILL_EVERY (120) s one relay SIGKILLed (first at
#            half a period plus 7 s: 67 s, 187 s, ..., so that a 2-minute
#            run has one) and restarted SOAK_RESTART_DELAY (1) s later on
#            whatever it left behind. SOAK_KILL_WHO (b) is the relay
#            killed each time, or "alternate" for A, B, A...: with B the
#            one killed, A lives the whole soak through its peer's kills,
#            the reloads and the cuts, and its series are the ones a slow
#            leak shows in (a process that lives a few minutes has not
#            reached the high-water mark of its memory; B's lives are
#            judged too, where they are long enough);
#   samples  every SOAK_SAMPLE_EVERY (10) s, 2.5 s into the period, per
#            relay: goroutines (go_goroutines on /metrics), open FDs
#            (/proc/PID/fd), RSS (VmRSS), routes (`ip route show table
#            all`) and policy rules (`ip rule`) in its namespace, nft
#            objects (`nft -a list ruleset`: tables, chains, rules, sets),
#            conntrack entries (nf_conntrack_count in the namespace; null
#            where the namespace has no such file), the probes' schedule
#            delay (relay_probe_schedule_delay_seconds, cumulative count
#            and sum, so the mean per interval follows), the reloads
#            counted by the relay (relay_config_reloads_total), the Go
#            heap in use (go_memstats_heap_inuse_bytes: recorded and
#            plotted, not judged) and the heap live at the last GC
#            (go_memstats_next_gc_bytes / (1 + GOGC/100)): to tell memory
#            the relay holds from RSS the runtime keeps.
#
# The bulk flow is paced, not unlimited: on 2 cores an unpaced iperf3 keeps
# both cores busy with the two userspace relays and the three wanem bridges,
# the relays' probe timers then run late, and paths go down for want of CPU
# rather than because of the cuts: the stream's losses would say nothing
# about reloads and kills. 50 Mbit/s leaves them room (the schedule delay
# samples show whether it did). The kernel paces it (--fq-rate, the
# socket's pacing cap), not only iperf3 (-b holds the average alone): with
# -b alone, BBR (this machine's default) paced at up to 1 Gbit/s after its
# ProbeRTT phase and dumped a backlog of a megabyte or more at once, 36 000
# packets a second into relay A's TUN queue (500 packets), which the kernel
# dropped, the stream's datagrams among them, outside any cut. The
# congestion control is SOAK_TCP_CC (cubic, Linux's default, as
# failback-tcp.sh has it).
#
# It passes when all of these hold:
#
#   - No datagram is lost outside a window. A cut window runs from the
#     moment the cut is ordered to the restore plus SOAK_CUT_GRACE_MS (500):
#     the relay fails over to the consumer path within its detection time
#     (3 x 100 ms, about 300 ms, all inside the cut), and fails back to the
#     direct path without loss (the failover scenario's failback
#     interruption is 0), so nothing should be lost after the restore; the
#     500 ms cover the restore taking effect late (the `wanem set` it runs
#     is a process start and a unix-socket call on a busy 2-core machine).
#     A kill window runs from SOAK_KILL_LEAD_MS (100) before the SIGKILL
#     (datagrams in flight towards the killed relay, on the wire and in its
#     socket and TUN queues, die with it: up to 45 ms before the kill in a
#     10-minute run, where the stream's one-way delay under the bulk flow
#     is reported as stream.oneWayMs) to the moment both relays carry the
#     peer's traffic again after the restart (/status: an active path, and
#     a WireGuard handshake no older than the restart; not necessarily the
#     direct path: cut every 10 s, it is dampened on the relay that lives
#     through the soak part of the time, as RFC 2439 penalties should),
#     plus SOAK_KILL_GRACE_MS (1000): /status is polled every 50 ms with a
#     process start per poll, and the handshake time has a resolution of
#     1 s; 1 s covers a poll on the consumer path under load.
#     A reload has no window: it must lose nothing. Each window's
#     lastLossAfterRefMs in the result says how close the losses came to
#     the end of it.
#   - The TCP connection is never reset: iperf3 exits 0, reports no error,
#     and its sender reports the whole SOAK_MINUTES (at least all but 1 s).
#   - Every restart comes up (both relays carrying traffic, as above,
#     within 60 s) and no reload is rejected (relay_config_reloads_total
#     {result="error"} stays 0).
#   - Every sampled count is flat (SOAK_LEAK=1, the default): per relay and
#     series, a least-squares slope over the samples after the first
#     SOAK_WARMUP (60) s of each relay process (SOAK_RSS_WARMUP, 180 s, for
#     the memory series: they climb to the high-water mark of the
#     buffer pools over the first few GC cycles, about 100 s apart at this
#     load), one intercept per process
#     (a restart that resets a count is no slope), by
#     perf/analyze/soak-slope.awk. Allowed, per hour:
#         goroutines  SOAK_MAX_GOROUTINES_H (15)  one leaked per reload is
#                     120/h, one per kill of the peer 30/h, one per cut 360/h
#         fds         SOAK_MAX_FDS_H (15)         the same
#         liveHeapMB  SOAK_MAX_LIVE_HEAP_MB_H (30)  memory the relay holds:
#                     the heap live at the last GC
#         routes, rules, nftObjects  SOAK_MAX_NET_H (6)  the relay's own
#                     state: one left per kill is 30/h, per reload 120/h
#         conntrack   SOAK_MAX_CONNTRACK_H (60)   entries come and go with
#                     the probes and handshakes, and expire on their own
#     One memory series is judged by a bound, not a slope:
#         outsideRuntimeMB  SOAK_MAX_OUTSIDE_MB (8)  the anonymous RSS
#                     (RssAnon) less what the Go runtime holds from the OS
#                     (go_memstats_sys_bytes less
#                     go_memstats_heap_released_bytes), at its highest
#                     after the warm-up: memory no Go allocation accounts
#                     for. It is negative while the runtime holds pages it
#                     has not touched yet, and climbs towards 0 as it
#                     touches them (relay A at 6eee05d: -7.6 to -0.5 MB
#                     over 10 minutes), so its slope says nothing; a leak
#                     outside the runtime takes it above 0 and on up.
#     RSS itself (rssMB) is recorded, fitted and plotted, but not judged
#     (SOAK_MAX_RSS_MB_H sets an allowance if wanted): between the live
#     heap and what lies outside the runtime, RSS adds the GC's slack, which
#     climbs towards the heap goal (twice the live heap at GOGC=100) over
#     minutes, as the runtime touches pages at each heap peak and returns
#     them slowly. Relay A in a 10-minute run at 0a1237a rose from 36 to 77
#     MB by 272 s and stayed at 75-79 MB to the end, its live heap flat at
#     31-42 MB (a heap goal of about 84 MB); a 7-minute fit after a 3-minute
#     warm-up read that approach as 88 MB/h. A leak of Go memory shows in
#     the live heap, a leak of anything else outside the runtime.
#     A series with fewer than 6 samples or 60 s after its warm-up is
#     "insufficient" and not judged; the verdict needs goroutines and FDs
#     judged on both relays ("skipped" otherwise). SOAK_LEAK=0 (the smoke)
#     skips the verdict: leakVerdict "skipped".
#   - Nothing is left: after the last stop (SIGTERM), the routes (table
#     all), policy rules, nft ruleset and links of both providers'
#     namespaces are as they were before the relays first started.
#
# Env: SOAK_MINUTES (10), SOAK_LEAK (1), SOAK_TCP_RATE (50M), SOAK_TCP_CC
# (cubic), SOAK_KILL_WHO (b), the periods
# above, SOAK_STREAM_INTERVAL (5ms), RESULT name suffix (default),
# RELAY (the relay binary; perf/soak-leak-check.sh points it at a leaky
# build), PERF_HEALTH and the rest of perf/lib.sh.
#
# Writes $PERF_RESULTS/soak-$RESULT.json (summary: passed,
# lostOutsideWindows, tcpReset, leakVerdict, leftovers) and, with gnuplot,
# soak-$RESULT.png (one panel per series, both relays); raw logs under
# $PERF_RESULTS/raw/soak-$RESULT/. Exits 1 when the soak did not pass.
#
# Smoke: SOAK_MINUTES=2 SOAK_LEAK=0 (one kill, no leak verdict).
SOAK_MINUTES=${SOAK_MINUTES:-10}
# Every process of the testbed lives at most PERF_TTL seconds: cover the run.
: "${PERF_TTL:=$((SOAK_MINUTES * 60 + 600))}"
export PERF_TTL
source "$(dirname "$0")/../lib.sh"
source "$PERF_ROOT/analyze/common.sh"

SECS=$((SOAK_MINUTES * 60))
LEAK=${SOAK_LEAK:-1}
TCP_RATE=${SOAK_TCP_RATE:-50M}
TCP_CC=${SOAK_TCP_CC:-cubic}
CUT_EVERY=${SOAK_CUT_EVERY:-10} CUT_HOLD=${SOAK_CUT_HOLD:-5}
RELOAD_EVERY=${SOAK_RELOAD_EVERY:-30}
KILL_EVERY=${SOAK_KILL_EVERY:-120} RESTART_DELAY=${SOAK_RESTART_DELAY:-1} KILL_WHO=${SOAK_KILL_WHO:-b}
case $KILL_WHO in a | b | alternate) ;; *) echo "SOAK_KILL_WHO must be a, b or alternate, not $KILL_WHO" >&2; exit 2 ;; esac
SAMPLE_EVERY=${SOAK_SAMPLE_EVERY:-10}
WARMUP=${SOAK_WARMUP:-60}
CUT_GRACE_MS=${SOAK_CUT_GRACE_MS:-500} KILL_GRACE_MS=${SOAK_KILL_GRACE_MS:-1000} KILL_LEAD_MS=${SOAK_KILL_LEAD_MS:-100}
STREAM_INTERVAL=${SOAK_STREAM_INTERVAL:-5ms}
STREAM_PORT=9100
UDPSTREAM=${UDPSTREAM:-$REPO_ROOT/bin/udpstream}
NAME=soak-${RESULT:-default}
# Allowed slopes, per hour (header comment); null: fitted, not judged.
declare -A ALLOWED=(
	[goroutines]=${SOAK_MAX_GOROUTINES_H:-15} [fds]=${SOAK_MAX_FDS_H:-15} [rssMB]=${SOAK_MAX_RSS_MB_H:-null}
	[routes]=${SOAK_MAX_NET_H:-6} [rules]=${SOAK_MAX_NET_H:-6} [nftObjects]=${SOAK_MAX_NET_H:-6}
	[conntrack]=${SOAK_MAX_CONNTRACK_H:-60} [liveHeapMB]=${SOAK_MAX_LIVE_HEAP_MB_H:-30}
	[outsideRuntimeMB]=null
)
SERIES="goroutines fds rssMB liveHeapMB outsideRuntimeMB routes rules nftObjects conntrack"
# Warm-up per series: RSS and the live heap climb to the high-water mark of
# the buffer pools over a few GC cycles (header comment).
# Bounds on a series' highest value after its warm-up (header comment).
declare -A BOUND=([outsideRuntimeMB]=${SOAK_MAX_OUTSIDE_MB:-8})
declare -A SWARMUP=([rssMB]=${SOAK_RSS_WARMUP:-180} [liveHeapMB]=${SOAK_RSS_WARMUP:-180} [outsideRuntimeMB]=${SOAK_RSS_WARMUP:-180})

perf_require iperf3 curl nft
# The stream's own tool (test tooling, like bin/wanem), built before
# anything is timed.
log "building $UDPSTREAM"
(cd "$REPO_ROOT" && go build -trimpath -o "$UDPSTREAM" ./perf/cmd/udpstream) || die "building perf/cmd/udpstream failed"
W=$PERF_STATE/soak
mkdir -p "$PERF_RESULTS"

# ---- namespace state and leftovers ----------------------------------------

# snapshot NS DIR: the namespace's routes, rules, nft ruleset and links,
# one file each, sorted.
snapshot() {
	local n=$1 d=$2
	mkdir -p "$d"
	nsx "$n" ip route show table all | sort >"$d/routes"
	nsx "$n" ip rule show | sort >"$d/rules"
	nsx "$n" nft list ruleset | sed '/^[[:space:]]*$/d' | sort >"$d/nft"
	nsx "$n" ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' | sort >"$d/links"
}

# leftovers BEFORE_DIR AFTER_DIR NS: JSON lines {ns, kind, line, change}
# for every line in AFTER that BEFORE lacks ("left") or the other way
# round ("missing").
leftovers() {
	local b=$1 a=$2 n=$3 k
	for k in routes rules nft links; do
		comm -13 "$b/$k" "$a/$k" | jq -Rc --arg ns "$n" --arg k "$k" '{ns:$ns, kind:$k, line:., change:"left"}'
		comm -23 "$b/$k" "$a/$k" | jq -Rc --arg ns "$n" --arg k "$k" '{ns:$ns, kind:$k, line:., change:"missing"}'
	done
}

# relays_start runs once per relay start by perf_up: the first time, the
# state of both namespaces before any relay ran is recorded.
eval "lib_$(declare -f relays_start)"
relays_start() {
	[ -d "$W/before" ] || { snapshot provider-a "$W/before/provider-a"; snapshot provider-b "$W/before/provider-b"; }
	lib_relays_start
}

# ---- the relays' processes ------------------------------------------------

relay_ns() { case $1 in a) echo provider-a ;; b) echo provider-b ;; esac; }
# relay_pid R: the pid of relay R (a or b), "" if none runs. `start` runs
# `ip netns exec` (which execs) -> timeout -> the relay: the pid file holds
# timeout's pid, the relay is its child.
relay_pid() {
	local t
	t=$(cat "$PERF_STATE/relay-$1.pid" 2>/dev/null) || return 0
	pgrep -P "$t" 2>/dev/null | head -1 || true
}

# relay_start R: start relay R, keeping the log of the previous process.
relay_start() {
	local r=$1 n
	n=$(relay_ns "$r")
	if [ -f "$PERF_STATE/relay-$r.log" ]; then
		local i=1
		while [ -f "$PERF_STATE/relay-$r.$i.log" ]; do i=$((i + 1)); done
		mv "$PERF_STATE/relay-$r.log" "$PERF_STATE/relay-$r.$i.log"
	fi
	start "$n" "relay-$r" "$RELAY" run -c "$PERF_STATE/$n.yaml"
}

# carrying NS SINCE: the relay in NS carries its peer's traffic: it has an
# active path (any: with the link cut every 10 s, the relay that lives
# through the whole soak finds its direct path dampened part of the time,
# RFC 2439 penalties, and rightly keeps to the consumer path) over a
# WireGuard session made at or after SINCE (epoch seconds).
carrying() {
	local st
	st=$(relay_status "$1" 2>/dev/null) || return 1
	jq -e --argjson t "$2" '.peers[0] | .activePath != "" and .lastHandshake != "" and
		((.lastHandshake | sub("\\.[0-9]+"; "") | fromdateiso8601) >= ($t | floor))' <<<"$st" >/dev/null
}
both_carrying() { carrying provider-a "$1" && carrying provider-b "$1"; }

# at T: sleep until T (epoch seconds); at once if T is past.
at() {
	local d
	d=$(awk -v t="$1" -v n="$(now)" 'BEGIN { d = t - n; print (d > 0 ? d : 0) }')
	sleep "$d"
}
rel() { awk -v t="$1" -v t0="$T0" 'BEGIN { printf "%.3f", t - t0 }'; }

# ---- the loops, each in the background ------------------------------------

cut_loop() {
	local k=1 tc tr
	while [ $((k * CUT_EVERY + CUT_HOLD)) -le "$SECS" ]; do
		at "$((T0 + k * CUT_EVERY))"
		tc=$(now)
		wan_set ab --cut >/dev/null || log "warning: cut $k failed"
		at "$((T0 + k * CUT_EVERY + CUT_HOLD))"
		tr=$(now)
		wan_set ab --restore >/dev/null || log "warning: restore $k failed"
		echo "$k $(rel "$tc") $(rel "$tr")" >>"$W/cuts"
		k=$((k + 1))
	done
}

reload_loop() {
	local k=1 r pid t
	while [ $((k * RELOAD_EVERY + 6)) -lt "$SECS" ]; do
		at "$((T0 + k * RELOAD_EVERY + 6))"
		t=$(now)
		for r in a b; do
			pid=$(relay_pid "$r")
			if [ -n "$pid" ] && kill -HUP "$pid" 2>/dev/null; then
				echo "$k $(rel "$t") $r sent" >>"$W/reloads"
			else
				echo "$k $(rel "$t") $r skipped" >>"$W/reloads" # killed just now
			fi
		done
		k=$((k + 1))
	done
}

kill_loop() {
	local k=1 r n pid tk ts tu left due
	while :; do
		due=$(((k - 1) * KILL_EVERY + KILL_EVERY / 2 + 7))
		# Leave the restart time to come up before the end.
		[ $((due + 30)) -le "$SECS" ] || break
		case $KILL_WHO in
		alternate) r=$([ $((k % 2)) = 1 ] && echo a || echo b) ;;
		*) r=$KILL_WHO ;;
		esac
		n=$(relay_ns "$r")
		at "$((T0 + due))"
		pid=$(relay_pid "$r")
		[ -n "$pid" ] || { log "warning: kill $k: relay $r is not running"; k=$((k + 1)); continue; }
		tk=$(now)
		kill -KILL "$pid"
		while kill -0 "$pid" 2>/dev/null; do sleep 0.01; done
		# What the killed relay left behind, for the record: the restart
		# must cope with it.
		snapshot "$n" "$W/kill-$k"
		leftovers "$W/before/$n" "$W/kill-$k" "$n" >"$W/kill-$k.left"
		sleep "$RESTART_DELAY"
		ts=$(now)
		relay_start "$r"
		disown -a # no "Killed" note when the next kill comes
		tu=""
		local end=$(($(date +%s) + 60))
		while [ "$(date +%s)" -lt "$end" ]; do
			if both_carrying "$ts"; then tu=$(now); break; fi
			pid=$(relay_pid "$r")
			[ -n "$pid" ] || { sleep 0.5; pid=$(relay_pid "$r"); [ -n "$pid" ] || break; }
			sleep 0.05
		done
		[ -n "$tu" ] || log "error: kill $k: relay $r and its peer did not carry traffic again (an active path, a new session) within 60 s (see $PERF_STATE/relay-$r.log)"
		jq -nc --argjson k "$k" --arg r "$r" --argjson tk "$(rel "$tk")" --argjson ts "$(rel "$ts")" \
			--arg tu "$([ -z "$tu" ] || rel "$tu")" --argjson pid "$(relay_pid "$r" | grep . || echo null)" \
			--slurpfile left "$W/kill-$k.left" \
			'{kill:$k, relay:$r, killAt:$tk, restartAt:$ts, upAt:(if $tu == "" then null else ($tu|tonumber) end),
			  upAfterRestartS:(if $tu == "" then null else (($tu|tonumber) - $ts) * 1000 | round / 1000 end),
			  newPid:$pid, leftAfterKill:{count:($left|length), lines:$left}}' >>"$W/kills"
		log "kill $k: relay $r, $(jq -s -r 'last | "\(.leftAfterKill.count) lines left behind, carrying again \(.upAfterRestartS) s after the restart"' "$W/kills")"
		k=$((k + 1))
	done
}

# sample R T: one JSON line of relay R's figures at T (seconds since T0).
sample() {
	local r=$1 t=$2 n pid m="" up=null g=null fds=null rss=null ct=null
	n=$(relay_ns "$r")
	pid=$(relay_pid "$r")
	if [ -n "$pid" ]; then
		m=$(nsx "$n" curl -fsS --max-time 3 "http://$ADMIN/metrics" 2>/dev/null) || m=""
		fds=$(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
		rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
		anon=$(awk '/^RssAnon:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
		# Seconds the process has been running: its start time (field 22 of
		# /proc/PID/stat, clock ticks since boot) against the uptime.
		up=$(awk -v hz="$(getconf CLK_TCK)" -v u="$(cut -d' ' -f1 /proc/uptime)" '{ sub(/.*\) /, ""); printf "%.1f", u - $20 / hz }' "/proc/$pid/stat" 2>/dev/null)
		[ -n "$rss" ] || rss=null
		[ -n "$anon" ] || anon=null
		[ -n "$up" ] || up=null
		kill -0 "$pid" 2>/dev/null || { fds=null rss=null anon=null up=null; }
	fi
	local heap=null live=null kept=null
	if [ -n "$m" ]; then
		g=$(awk '$1 == "go_goroutines" { print $2 }' <<<"$m")
		heap=$(awk '$1 == "go_memstats_heap_inuse_bytes" { printf "%.2f", $2 / 1048576 }' <<<"$m")
		# What the Go runtime holds from the OS: all it obtained less what
		# it returned.
		kept=$(awk '$1 == "go_memstats_sys_bytes" { s = $2 } $1 == "go_memstats_heap_released_bytes" { r = $2 } END { if (s != "") printf "%.2f", (s - r) / 1048576 }' <<<"$m")
		# The heap live at the last GC: the GC goal over 1 + GOGC/100.
		live=$(awk '$1 == "go_memstats_next_gc_bytes" { n = $2 } $1 == "go_gc_gogc_percent" { p = $2 } END { if (n != "" && p > 0) printf "%.2f", n / (1 + p / 100) / 1048576 }' <<<"$m")
	fi
	[ -n "$g" ] || g=null
	[ -n "$heap" ] || heap=null
	[ -n "$live" ] || live=null
	[ -n "$kept" ] || kept=null
	if nsx "$n" test -r /proc/sys/net/netfilter/nf_conntrack_count; then ct=$(nsx "$n" cat /proc/sys/net/netfilter/nf_conntrack_count); fi
	local routes rules nft sched
	routes=$(nsx "$n" ip route show table all | wc -l)
	rules=$(nsx "$n" ip rule show | wc -l)
	nft=$(nsx "$n" nft -a list ruleset | grep -c '# handle' || true)
	sched=$(awk '
		/^relay_probe_schedule_delay_seconds_(sum|count)\{/ { match($0, /stage="[a-z]+"/); st = substr($0, RSTART + 7, RLENGTH - 8); k = ($1 ~ /_sum/) ? "Sum" : "Count"; v[st k] = $NF }
		/^relay_stalls_total / { stalls = $NF }
		/^relay_config_reloads_total\{result="ok"\}/ { ok = $NF }
		/^relay_config_reloads_total\{result="error"\}/ { er = $NF }
		END { printf "{\"wakeCount\":%d,\"wakeSum\":%.6f,\"sendCount\":%d,\"sendSum\":%.6f,\"stalls\":%d,\"reloadsOk\":%d,\"reloadsError\":%d}", v["wakeCount"], v["wakeSum"], v["sendCount"], v["sendSum"], stalls, ok, er }' <<<"$m")
	[ -n "$m" ] || sched=null
	jq -nc --argjson t "$t" --arg r "$r" --argjson pid "${pid:-null}" --argjson up "$up" --argjson g "$g" \
		--argjson fds "$fds" --argjson rss "$rss" --argjson routes "$routes" --argjson rules "$rules" \
		--argjson nft "$nft" --argjson ct "$ct" --argjson s "$sched" --argjson heap "$heap" --argjson live "$live" --argjson kept "$kept" --argjson anon "${anon:-null}" \
		'(if $rss == null then null else ($rss / 1024 * 100 | round / 100) end) as $rssMB
		 | {t:$t, relay:$r, pid:$pid, up:$up, goroutines:$g, fds:$fds, rssMB:$rssMB,
		  heapInuseMB:$heap, liveHeapMB:$live, runtimeKeptMB:$kept,
		  rssAnonMB:(if $anon == null then null else ($anon / 1024 * 100 | round / 100) end),
		  outsideRuntimeMB:(if $anon == null or $kept == null then null else (($anon / 1024 - $kept) * 100 | round / 100) end), routes:$routes, rules:$rules, nftObjects:$nft, conntrack:$ct, sched:$s}'
}

sample_loop() {
	local k=0 t
	while [ $((k * SAMPLE_EVERY * 10 + 25)) -le $((SECS * 10)) ]; do
		t=$(awk -v t0="$T0" -v k="$k" -v e="$SAMPLE_EVERY" 'BEGIN { printf "%.1f", t0 + k * e + 2.5 }')
		at "$t"
		t=$(rel "$(now)")
		sample a "$t" >>"$W/samples" || log "warning: sample of A at $t failed"
		sample b "$t" >>"$W/samples" || log "warning: sample of B at $t failed"
		k=$((k + 1))
	done
}

# ---- the run --------------------------------------------------------------

# The loops run outside the namespaces: end them too, however we exit.
pids=()
trap 'rc=$?; trap - EXIT INT TERM; for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wan_set ab --restore >/dev/null 2>&1 || true; perf_down; exit $rc' EXIT INT TERM
perf_up
# The kill loop SIGKILLs the relays perf_up started here: no "Killed" notes.
disown -a
mkdir -p "$W"
: >"$W/cuts"
: >"$W/reloads"
: >"$W/kills"
: >"$W/samples"
start pod-b stream-recv "$UDPSTREAM" recv --listen "$POD_B:$STREAM_PORT"
start pod-b iperf-server iperf3 -s -1 -B "$POD_B"
sleep 0.5
start pod-a stream-send "$UDPSTREAM" send --to "$POD_B:$STREAM_PORT" --interval "$STREAM_INTERVAL"
sleep 1
T0=$(date +%s)
at "$T0"
log "soak: ${SOAK_MINUTES} min: TCP at $TCP_RATE, a datagram every $STREAM_INTERVAL, cut every ${CUT_EVERY}s for ${CUT_HOLD}s, SIGHUP every ${RELOAD_EVERY}s, a SIGKILL every ${KILL_EVERY}s"
start pod-a iperf-client iperf3 -c "$POD_B" -t "$SECS" -b "$TCP_RATE" --fq-rate "$TCP_RATE" -C "$TCP_CC" -J --connect-timeout 5000
iperf_pid=$(cat "$PERF_STATE/iperf-client.pid")
cut_loop & pids+=($!)
reload_loop & pids+=($!)
kill_loop & pids+=($!)
sample_loop & pids+=($!)
for p in "${pids[@]}"; do wait "$p" || log "warning: a loop ended with status $?"; done
wan_set ab --restore >/dev/null
iperf_rc=0
wait "$iperf_pid" || iperf_rc=$?
stop stream-send
sleep 1
stop stream-recv
stop iperf-server
log "traffic done (iperf3 exit status $iperf_rc); stopping the relays"
# Drop counters along the path, for a second look at any loss (raw only).
{
	for n in pod-a provider-a provider-b pod-b consumer; do
		echo "== $n"
		nsx "$n" ip -s -o link show 2>/dev/null || true
		nsx "$n" nstat -az 2>/dev/null | grep -E 'UdpRcvbufErrors|UdpSndbufErrors|UdpInErrors|UdpNoPorts|TcpExtTCPBacklogDrop|IpOutDiscards|IpInDiscards' || true
	done
	for l in ab ac cb; do echo "== wanem $l"; wan_show "$l" 2>/dev/null || true; echo; done
	for n in provider-a provider-b; do echo "== $n relay drops"; relay_metrics "$n" | grep -E '^relay_packets_dropped_total' || true; done
} >"$W/drops.txt" 2>&1
# Final figures of the running processes, then the last stop.
sa=$(relay_metrics provider-a | awk -f "$ANALYZE/schedule.awk") || sa=null
sb=$(relay_metrics provider-b | awk -f "$ANALYZE/schedule.awk") || sb=null
# Each relay gets SIGTERM and 10 s to remove what it made (it stopped
# cleanly if it exited by then); only then is the namespace compared.
clean=()
for r in a b; do
	pid=$(relay_pid "$r")
	c=false
	if [ -n "$pid" ]; then
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || { c=true; break; }; sleep 0.1; done
	fi
	stop "relay-$r"
	clean+=("$c")
done
snapshot provider-a "$W/after/provider-a"
snapshot provider-b "$W/after/provider-b"
{ leftovers "$W/before/provider-a" "$W/after/provider-a" provider-a; leftovers "$W/before/provider-b" "$W/after/provider-b" provider-b; } >"$W/leftovers"

# ---- analysis -------------------------------------------------------------

RAW=$PERF_RESULTS/raw/$NAME
rm -rf "$RAW"
mkdir -p "$RAW"
cp "$PERF_STATE"/relay-*.log "$PERF_STATE/iperf-client.log" "$W/drops.txt" "$W/cuts" "$W/reloads" "$W/kills" "$W/samples" "$W/leftovers" "$RAW/"
# The sender's and receiver's logs, times made relative to T0.
awk -v t0="$T0" '/^#/ { next } { printf "%s %.6f\n", $1, $2 - t0 }' "$PERF_STATE/stream-send.log" >"$W/sent"
awk -v t0="$T0" '{ printf "%s %.6f %.6f\n", $1, $2 - t0, $3 - t0 }' "$PERF_STATE/stream-recv.log" >"$W/received"
[ -s "$W/sent" ] || die "the UDP sender logged nothing ($PERF_STATE/stream-send.log)"
# Windows: "kind start end ref", seconds since T0.
{
	awk -v g="$CUT_GRACE_MS" '{ printf "cut %s %.3f %s\n", $2, $3 + g / 1000, $3 }' "$W/cuts"
	# A restart that never came up: its window runs to the end.
	jq -r --argjson g "$KILL_GRACE_MS" --argjson l "$KILL_LEAD_MS" --argjson fin "$SECS" '"kill \(.killAt - $l / 1000) \(if .upAt == null then $fin + 60 else .upAt + $g / 1000 end) \(.upAt // $fin)"' "$W/kills"
} >"$W/windows"
cp "$W/windows" "$RAW/"
loss=$(awk -f "$ANALYZE/soak-loss.awk" "$W/windows" "$W/sent" "$W/received")
# The stream's one-way delay (ms): how long a datagram is in flight, which
# the kill window's lead must cover.
# (Sorted first: stats.awk's insertion sort is linear on sorted input.)
owd=$(awk '{ printf "%.3f\n", ($3 - $2) * 1000 }' "$W/received" | sort -n | awk -f "$ANALYZE/stats.awk")
loss=$(jq -c --argjson owd "$owd" '. + {oneWayMs:$owd}' <<<"$loss")
gzip -c "$W/sent" >"$RAW/sent.gz"
gzip -c "$W/received" >"$RAW/received.gz"

# TCP: iperf3's JSON report.
tcp=$(jq -c --argjson rc "$iperf_rc" --argjson secs "$SECS" \
	'{exitStatus:$rc, error:(.error // null), seconds:(.end.sum_sent.seconds // null), bytes:(.end.sum_sent.bytes // null),
	  mbps:((.end.sum_received.bits_per_second // 0) / 1e6 * 10 | round / 10), retransmits:(.end.sum_sent.retransmits // null),
	  reset:($rc != 0 or .error != null or ((.end.sum_sent.seconds // 0) < $secs - 1))}' "$PERF_STATE/iperf-client.log" 2>/dev/null) ||
	tcp=$(jq -nc --argjson rc "$iperf_rc" '{exitStatus:$rc, error:"no JSON report from iperf3", reset:true}')

# Slopes: per relay and series.
: >"$W/slopes"
for r in a b; do
	for s in $SERIES; do
		f=$(jq -r --arg r "$r" --arg s "$s" 'select(.relay == $r) | "\(.t) \(.pid // "none") \(.up // -1) \(.[$s] // "null")"' "$W/samples" |
			awk -f "$ANALYZE/soak-slope.awk" -v warmup="${SWARMUP[$s]:-$WARMUP}" -v allowed="${ALLOWED[$s]}")
		if [ -n "${BOUND[$s]:-}" ]; then
			# Judged by its highest value after the warm-up, not its slope.
			f=$(jq -c --argjson f "$f" --argjson b "${BOUND[$s]}" --argjson wu "${SWARMUP[$s]:-$WARMUP}" --arg r "$r" --arg s "$s" -s \
				'[.[] | select(.relay == $r and .up != null and .up >= $wu and .[$s] != null) | .[$s]] as $v
				 | $f + {bound:$b, max:($v | max)} | .verdict = (if ($v | length) < 6 then "insufficient" elif .max > $b then "leak" else "flat" end)' "$W/samples")
		fi
		[ "$LEAK" = 1 ] || f=$(jq -c '.verdict = "skipped"' <<<"$f")
		jq -c --arg r "$r" --arg s "$s" '{relay:$r, series:$s} + .' <<<"$f" >>"$W/slopes"
	done
done
if [ "$LEAK" != 1 ]; then
	verdict=skipped
else
	# A series without enough samples after its warm-up is not judged (a
	# memory series when every process of a relay lived under 4 minutes);
	# goroutines and FDs must be judged on both relays for a verdict.
	verdict=$(jq -rs 'if any(.[]; .verdict == "leak") then "leak"
		elif all(.[] | select(.series == "goroutines" or .series == "fds"); .verdict == "flat") and all(.[]; .verdict != "leak") then "flat"
		else "skipped" end' "$W/slopes")
fi

settings=$(jq -n --argjson min "$SOAK_MINUTES" --argjson leak "$LEAK" --arg rate "$TCP_RATE" --arg cc "$TCP_CC" --argjson ce "$CUT_EVERY" --argjson ch "$CUT_HOLD" \
	--argjson re "$RELOAD_EVERY" --argjson ke "$KILL_EVERY" --arg kw "$KILL_WHO" --argjson rd "$RESTART_DELAY" --argjson se "$SAMPLE_EVERY" \
	--argjson wu "$WARMUP" --argjson rwu "${SWARMUP[rssMB]}" --argjson cg "$CUT_GRACE_MS" --argjson kg "$KILL_GRACE_MS" --argjson kl "$KILL_LEAD_MS" --arg si "$STREAM_INTERVAL" \
	--arg health "$PERF_HEALTH" --arg a "$PERF_MODE_A" --arg b "$PERF_MODE_B" --arg relay "$RELAY" --argjson t0 "$T0" \
	--argjson allowed "$(for s in $SERIES; do echo "{\"$s\":${ALLOWED[$s]}}"; done | jq -s add)" \
	'{minutes:$min, leakCheck:($leak == 1), tcpRate:$rate, tcpPacing:"iperf3 -b and --fq-rate", tcpCongestionControl:$cc, cutEverySeconds:$ce, cutHoldSeconds:$ch, reloadEverySeconds:$re,
	  killEverySeconds:$ke, killWho:$kw, restartDelaySeconds:$rd, sampleEverySeconds:$se, warmupSeconds:$wu, rssWarmupSeconds:$rwu, cutGraceMs:$cg, killGraceMs:$kg, killLeadMs:$kl,
	  streamInterval:$si, allowedSlopePerHour:$allowed, health:$health, modeA:$a, modeB:$b, relay:$relay, startedAt:$t0,
	  conntrack:"nf_conntrack_count in each provider namespace, null where the namespace has none",
	  wan:{ab:env.WAN_AB_DELAY, ac:env.WAN_AC_DELAY, cb:env.WAN_CB_DELAY}}')

jq -n --arg name "$NAME" --argjson machine "$(machine_json)" --arg when "$(date -u +%FT%TZ)" \
	--arg cmd "${PERF_COMMAND:-perf/scenarios/soak.sh}" --argjson settings "$settings" \
	--slurpfile samples "$W/samples" --slurpfile kills "$W/kills" --slurpfile slopes "$W/slopes" \
	--slurpfile left "$W/leftovers" --argjson loss "$loss" --argjson tcp "$tcp" --arg verdict "$verdict" \
	--argjson sa "$sa" --argjson sb "$sb" --argjson clean "$(printf '%s\n' "${clean[@]}" | jq -s '{a:.[0], b:.[1]}')" \
	--rawfile cuts "$W/cuts" --rawfile reloads "$W/reloads" \
	'($cuts | split("\n") | map(select(. != "") | split(" ") | {cut:(.[0]|tonumber), cutAt:(.[1]|tonumber), restoreAt:(.[2]|tonumber)})) as $cuts
	 | ($reloads | split("\n") | map(select(. != "") | split(" ") | {reload:(.[0]|tonumber), at:(.[1]|tonumber), relay:.[2], signal:.[3]})) as $reloads
	 | ([$samples[] | .sched.reloadsError // 0] | max // 0) as $rerr
	 | ([$kills[] | select(.upAt == null)] | length) as $noup
	 | ([$left[] | select(.change == "left")] | length) as $nleft
	 | {scenario:"soak", name:$name, when:$when, command:$cmd, machine:$machine, settings:$settings,
	    samples:$samples, cuts:$cuts, reloads:$reloads, kills:$kills, windows:$loss.windows,
	    stream:($loss | del(.windows)), tcp:$tcp, slopes:$slopes, schedule:{a:$sa, b:$sb},
	    stoppedOnSigterm:$clean, leftovers:$left,
	    summary:{passed:($loss.lostOutsideWindows == 0 and ($tcp.reset | not) and $verdict != "leak" and ($verdict == "flat" or ($settings.leakCheck | not))
	                     and $nleft == 0 and $noup == 0 and $rerr == 0),
	             lostOutsideWindows:$loss.lostOutsideWindows, lostInWindows:$loss.lostInWindows, sent:$loss.sent,
	             tcpReset:$tcp.reset, tcpSeconds:$tcp.seconds, leakVerdict:$verdict,
	             leaks:[$slopes[] | select(.verdict == "leak") | "\(.relay) \(.series) \(.slopePerHour)/h"],
	             leftovers:$nleft, kills:($kills|length), restartsNotUp:$noup, reloads:($reloads | map(select(.signal == "sent")) | length),
	             reloadErrors:$rerr, cuts:($cuts|length)}}' >"$PERF_RESULTS/$NAME.json"
log "wrote $PERF_RESULTS/$NAME.json"
jq -c .summary "$PERF_RESULTS/$NAME.json"

# ---- plot -----------------------------------------------------------------

if have_gnuplot; then
	# Per relay: t and every series, NaN where none; the schedule delay is
	# the mean send delay since the previous sample of the same process, ms.
	for r in a b; do
		jq -r --arg r "$r" 'select(.relay == $r) | [.t, .pid, .goroutines, .fds, .rssMB, .routes, .rules, .nftObjects, .conntrack, .sched.sendCount, .sched.sendSum, .heapInuseMB, .liveHeapMB, .outsideRuntimeMB] | map(. // "NaN") | @tsv' "$W/samples" |
			awk -F'\t' 'BEGIN { OFS = "\t" } { d = "NaN"; if ($2 == lp && $10 != "NaN" && $10 > lc) d = ($11 - ls) / ($10 - lc) * 1000; lp = $2; lc = $10; ls = $11; $10 = d; $11 = $12; $12 = $13; $13 = $14; NF = 13; print }' >"$W/plot-$r"
	done
	awk '{ print $2 }' "$W/cuts" >"$W/plot-cuts"
	jq -r '.killAt' "$W/kills" | tr '\n' ' ' >"$W/plot-kills"
	gnuplot <<GP || log "warning: gnuplot failed"
set terminal pngcairo size 1400,1300 font ",9"
set output "$PERF_RESULTS/$NAME.png"
set multiplot layout 4,3 title "soak ($NAME): ${SOAK_MINUTES} min, cut every ${CUT_EVERY}s, SIGHUP every ${RELOAD_EVERY}s, SIGKILL every ${KILL_EVERY}s (grey: kills); leak verdict ${verdict}"
set xrange [0:$SECS]
set xlabel "seconds"
set grid
set key top left
set datafile separator "\t"
set datafile missing "NaN"
kills = "$(cat "$W/plot-kills")"
do for [i=1:words(kills)] { set arrow i from first word(kills, i)+0, graph 0 to first word(kills, i)+0, graph 1 nohead lc rgb "#bbbbbb" dt 2 }
array titles[11] = ["goroutines", "open FDs", "RSS (MB, not judged)", "routes (table all)", "policy rules", "nft objects", "conntrack entries", "probe send delay (ms, mean per interval)", "Go heap in use (MB, not judged)", "heap live at the last GC (MB)", "anonymous RSS outside the Go runtime (MB, bound)"]
do for [c=3:13] {
	set title titles[c-2]
	plot "$W/plot-a" using 1:c with linespoints pt 7 ps 0.4 title "A", "$W/plot-b" using 1:c with linespoints pt 7 ps 0.4 title "B"
}
unset multiplot
GP
	[ ! -f "$PERF_RESULTS/$NAME.png" ] || log "wrote $PERF_RESULTS/$NAME.png"
fi
jq -e .summary.passed "$PERF_RESULTS/$NAME.json" >/dev/null || { log "soak did not pass: $(jq -c .summary "$PERF_RESULTS/$NAME.json")"; exit 1; }
