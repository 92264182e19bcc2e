#!/usr/bin/env bash
# perf/ab-scenarios.sh ROUNDS OLD_REV NEW_REV SCENARIO...: runs perf
# scenarios on the relays of two commits side by side, rotated: round 1
# runs OLD then NEW, round 2 NEW then OLD, and so on, each in its own
# testbed, so that the machine's drift over the run falls on both alike.
# Both relays (and, for the scale scenarios, which measure relays inside
# one process, perf/cmd/scale) are built from `git archive` of their
# commit; the scenarios and the testbed are this tree's. A SCENARIO is a script name under
# perf/scenarios with its settings, e.g. "failover FAILOVER_CUTS=5
# FAILOVER_SPACING=8" (one argument, quoted). Results go to
# $AB_RESULTS (default /tmp/perf-ab)/<rev>/<round>/; the last lines printed
# are a table of each scenario's headline figures per variant and round
# (perf/analyze/ab-table.jq).
source "$(dirname "$0")/lib.sh"
[ $# -ge 4 ] || die "usage: $0 ROUNDS OLD_REV NEW_REV SCENARIO..."
ROUNDS=$1 OLD=$2 NEW=$3
shift 3
[ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
OUT=${AB_RESULTS:-/tmp/perf-ab}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

build() { # build REV: the relay of REV at $T/REV/relay, its scale tool at $T/REV/scale
	local rev=$1
	mkdir -p "$T/$rev/src"
	git -C "$REPO_ROOT" archive "$rev" | tar -x -C "$T/$rev/src" || die "no commit $rev"
	log "building the relay of $rev"
	(cd "$T/$rev/src" && go build -trimpath -o "$T/$rev/relay" ./cmd/relay) || die "building $rev failed"
	# The scale scenarios measure relays in one process of perf/cmd/scale,
	# not the relay binary: each commit's own.
	if [ -d "$T/$rev/src/perf/cmd/scale" ]; then
		(cd "$T/$rev/src" && go build -trimpath -o "$T/$rev/scale" ./perf/cmd/scale) || die "building $rev's perf/cmd/scale failed"
	fi
}
build "$OLD"
build "$NEW"
perf_build_tools
wg_build

for r in $(seq "$ROUNDS"); do
	order="$OLD $NEW"
	[ $((r % 2)) = 1 ] || order="$NEW $OLD"
	for rev in $order; do
		for sc in "$@"; do
			read -r name env <<<"$sc"
			dir=$OUT/$rev/$r
			mkdir -p "$dir"
			log "=== round $r, $rev: $sc ==="
			# shellcheck disable=SC2086 # env is a list of NAME=VALUE words
			case $name in scale*)
				[ -x "$T/$rev/scale" ] || { log "warning: $rev has no perf/cmd/scale: $name skipped"; continue; } ;;
			esac
			env RESULT=ab $env RELAY="$T/$rev/relay" SCALE_BIN="$T/$rev/scale" PERF_RESULTS="$dir" \
				PERF_COMMAND="perf/ab-scenarios.sh ($rev)" \
				"$PERF_ROOT/scenarios/$name.sh" || log "warning: $name on $rev failed in round $r"
		done
	done
done
for rev in "$OLD" "$NEW"; do
	for f in "$OUT/$rev"/*/*.json; do
		[ -f "$f" ] || continue
		jq -r --arg rev "$rev" --arg round "$(basename "$(dirname "$f")")" -f "$PERF_ROOT/analyze/ab-table.jq" "$f"
	done
done | sort
