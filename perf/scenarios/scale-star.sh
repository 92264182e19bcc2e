#!/usr/bin/env bash
# perf/scenarios/scale-star.sh: scenario 5b, probing that scales. One hub
# relay with many peers: STAR_PEERS spokes, STAR_PATHS paths to each
# (direct on loopback, the others through a zero-delay in-process linkem
# hop), so the hub has STAR_PEERS x STAR_PATHS directed paths. The hub runs
# in its own process, so its CPU is measured alone (from /proc/PID/stat);
# the spokes run in the measuring process. Nothing carries traffic: every
# peer is idle (docs/failover.md, demand mode and idle peers). The
# measurement is `scale star` (perf/cmd/scale), which runs the hub as
# `scale hub`; this script runs it for each N in STAR_PEERS and plots the
# hub's CPU against its paths. It takes the binary from SCALE_BIN
# (run-all.sh builds bin/scale before any budget starts), or builds it.
# No namespaces and no root.
#
# Target: 1000 directed paths at default settings under 5 % of one core
# (perf/targets.sh, hub-cpu). Measure it on a quiet machine: CPU time on a
# loaded one is inflated by contention.
#
# Env: STAR_PEERS (a list, "25 50 125 250"; the last is the headline),
# STAR_PATHS (4), SCALE_SECONDS per N (20), SCALE_HEALTH (a YAML flow
# mapping for every relay's health: block, default none), RESULT (default);
# SCALE_HUB_PROFILE=FILE writes a CPU profile of the hub, from
# SCALE_HUB_PROFILE_DELAY (a Go duration, e.g. 8s: past the settle burst)
# after its start until it stops.
source "$(dirname "$0")/../lib.sh"
source "$PERF_ROOT/analyze/common.sh"

NS=${STAR_PEERS:-25 50 125 250}
K=${STAR_PATHS:-4}
SECS=${SCALE_SECONDS:-20}
NAME=scale-star-${RESULT:-default}

command -v go >/dev/null || die "scale-star needs the go tool"
command -v jq >/dev/null || die "missing commands: jq (make perf-deps installs it)"
mkdir -p "$PERF_STATE" "$PERF_RESULTS"
W=$PERF_STATE/scale-star
mkdir -p "$W"
trap 'rc=$?; trap - EXIT INT TERM; case $PERF_STATE in /run/liqo-relay-perf/?*) rm -rf "$PERF_STATE";; esac; exit $rc' EXIT INT TERM

SCALE_BIN=${SCALE_BIN:-}
if [ -z "$SCALE_BIN" ]; then
	SCALE_BIN=$W/scale
	log "building $SCALE_BIN"
	(cd "$REPO_ROOT" && go build -trimpath -o "$SCALE_BIN" ./perf/cmd/scale) || die "building perf/cmd/scale failed"
fi
profile=()
[ -z "${SCALE_HUB_PROFILE:-}" ] || profile=(--hub-profile "$SCALE_HUB_PROFILE" --hub-profile-delay "${SCALE_HUB_PROFILE_DELAY:-0s}")
runs=()
for n in $NS; do
	log "scale-star: hub with $n peers x $K paths ($((n * K)) directed paths) for ${SECS}s"
	"$SCALE_BIN" star --peers "$n" --paths "$K" --seconds "$SECS" --health "${SCALE_HEALTH:-}" \
		${profile[@]+"${profile[@]}"} --out "$W/run-$n.json" 2>&1 |
		tee "$W/run-$n.log" >&2 || die "scale star with $n peers failed (log: $W/run-$n.log)"
	runs+=("$W/run-$n.json")
done

jq -s --arg name "$NAME" --argjson machine "$(machine_json)" --arg when "$(date -u +%FT%TZ)" \
	--arg cmd "${PERF_COMMAND:-perf/scenarios/scale-star.sh}" --arg ns "$NS" --argjson k "$K" --argjson secs "$SECS" \
	--arg health "${SCALE_HEALTH:-}" \
	'{scenario:"scale-star", name:$name, when:$when, command:$cmd, machine:$machine,
	  settings:{peers:($ns|split(" ")|map(select(.!="")|tonumber)), pathsPerPeer:$k, seconds:$secs, health:$health,
	    paths:"direct: loopback; the others: one zero-delay linkem hop each (in the spokes process)", traffic:"none (idle peers)"},
	  summary:.[-1], runs:.}' "${runs[@]}" >"$PERF_RESULTS/$NAME.json"
log "wrote $PERF_RESULTS/$NAME.json"
jq -c '.runs[] | {hubPaths, hubPathsUp, hubCpuPercent:(.hubCpuPercent*100|round/100), per1000Paths:(.hubCpuPercentPer1000Paths*100|round/100),
	probesPerSecondPerPath:(.hubProbesPerSecondPerPath*1000|round/1000), hubRssMB:(.hubRssMB*10|round/10)}' "$PERF_RESULTS/$NAME.json"

if have_gnuplot; then
	jq -r '.runs[] | "\(.hubPaths) \(.hubCpuPercent)"' "$PERF_RESULTS/$NAME.json" >"$W/plot.dat"
	gnuplot <<GP
set terminal pngcairo size 800,450 font ",10"
set output "$PERF_RESULTS/$NAME.png"
set title "one relay with many idle peers: CPU of the hub process against its directed paths ($NAME)"
set xlabel "directed paths of the hub"; set ylabel "CPU, % of one core"; set grid; set yrange [0:*]; set xrange [0:*]
plot "$W/plot.dat" using 1:2 with linespoints title "hub CPU", 5 with lines dashtype 2 title "target at 1000 paths: 5 %"
GP
	log "wrote $PERF_RESULTS/$NAME.png"
fi
