#!/usr/bin/env bash
# perf/scenarios/scale.sh: scenario 5, scale. One process runs N netstack
# relays in a full mesh, two paths per peer (direct on loopback, consumer
# through a zero-delay in-process linkem hop), and measures over
# SCALE_SECONDS what they cost: CPU, memory (RSS and Go heap) and probe
# traffic per relay, per peer and per path. The measurement is
# `scale mesh` (perf/cmd/scale); this script runs it for each N in
# SCALE_RELAYS and merges the results. It takes the binary from SCALE_BIN
# (run-all.sh builds bin/scale before any budget starts), or builds it.
# No namespaces and no root: everything is on loopback in one process.
#
# Env: SCALE_RELAYS (a list of N, "5 10 20"; the last is the headline),
# SCALE_SECONDS per N (20), SCALE_HEALTH (a YAML flow mapping for the
# relays' health: block, default none), RESULT (default).
source "$(dirname "$0")/../lib.sh"
source "$PERF_ROOT/analyze/common.sh"

NS=${SCALE_RELAYS:-5 10 20}
SECS=${SCALE_SECONDS:-20}
NAME=scale-${RESULT:-default}

command -v go >/dev/null || die "scale needs the go tool"
command -v jq >/dev/null || die "missing commands: jq (make perf-deps installs it)"
mkdir -p "$PERF_STATE" "$PERF_RESULTS"
W=$PERF_STATE/scale
mkdir -p "$W"
trap 'rc=$?; trap - EXIT INT TERM; case $PERF_STATE in /run/liqo-relay-perf/?*) rm -rf "$PERF_STATE";; esac; exit $rc' EXIT INT TERM

SCALE_BIN=${SCALE_BIN:-}
if [ -z "$SCALE_BIN" ]; then
	SCALE_BIN=$W/scale
	log "building $SCALE_BIN"
	(cd "$REPO_ROOT" && go build -trimpath -o "$SCALE_BIN" ./perf/cmd/scale) || die "building perf/cmd/scale failed"
fi
runs=()
for n in $NS; do
	log "scale: $n relays for ${SECS}s"
	"$SCALE_BIN" mesh --relays "$n" --seconds "$SECS" --health "${SCALE_HEALTH:-}" --out "$W/run-$n.json" 2>&1 |
		tee "$W/run-$n.log" >&2 || die "scale mesh with $n relays failed (log: $W/run-$n.log)"
	runs+=("$W/run-$n.json")
done

jq -s --arg name "$NAME" --argjson machine "$(machine_json)" --arg when "$(date -u +%FT%TZ)" \
	--arg cmd "${PERF_COMMAND:-perf/scenarios/scale.sh}" --arg ns "$NS" --argjson secs "$SECS" \
	--arg health "${SCALE_HEALTH:-}" \
	'{scenario:"scale", name:$name, when:$when, command:$cmd, machine:$machine,
	  settings:{relays:($ns|split(" ")|map(select(.!="")|tonumber)), seconds:$secs, health:$health,
	    paths:"direct: loopback; consumer: one zero-delay linkem hop (in-process)"},
	  summary:.[-1], runs:.}' "${runs[@]}" >"$PERF_RESULTS/$NAME.json"
log "wrote $PERF_RESULTS/$NAME.json"
jq -c '.runs[] | {relays, cpuPctPerRelay:(.cpuPercentPerRelay*100|round/100), rssMBPerRelay:(.rssPerRelayMB*100|round/100),
	probeBpsPerPath:(.wireBytesPerSecondPerPath|round), pathsUp, paths}' "$PERF_RESULTS/$NAME.json"

if have_gnuplot; then
	jq -r '.runs[] | "\(.relays) \(.cpuPercentPerRelay) \(.rssPerRelayMB) \(.wireBytesPerSecondPerRelay/1000)"' "$PERF_RESULTS/$NAME.json" >"$W/plot.dat"
	gnuplot <<GP
set terminal pngcairo size 800,450 font ",10"
set output "$PERF_RESULTS/$NAME.png"
set title "cost per relay, N netstack relays in one process, full mesh, 2 paths per peer ($NAME)"
set xlabel "relays (N)"; set grid; set yrange [0:*]; set y2range [0:*]
set ylabel "CPU % of one core / MB RSS"; set y2label "probe traffic, kB/s (wire, both ways)"; set y2tics
plot "$W/plot.dat" using 1:2 with linespoints title "CPU % per relay", \
     "" using 1:3 with linespoints title "MB RSS per relay", \
     "" using 1:4 axes x1y2 with linespoints title "probe kB/s per relay"
GP
	log "wrote $PERF_RESULTS/$NAME.png"
fi
