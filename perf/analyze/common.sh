# shellcheck shell=bash
# perf/analyze/common.sh: result files (JSON under perf/results/) and plots.

ANALYZE=$PERF_ROOT/analyze

# tree_commit: the commit of the working tree, "-dirty" if it has
# uncommitted changes to tracked files, like git describe --dirty, except
# under perf/results/: a full run writes its own results there, and they
# must not make the later results of the same run look dirty.
tree_commit() {
	local c
	c=$(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null) || { echo unknown; return; }
	git -C "$REPO_ROOT" diff --quiet HEAD -- . ':(exclude)perf/results' 2>/dev/null || c=$c-dirty
	echo "$c"
}

# results_committed: true if PERF_RESULTS is the committed perf/results/.
results_committed() { [ "$(cd "$PERF_RESULTS" 2>/dev/null && pwd -P)" = "$(cd "$PERF_ROOT/results" && pwd -P)" ]; }

# require_committed_tree COMMIT: dies when results written to the committed
# perf/results/ would come from a dirty tree (COMMIT from tree_commit).
require_committed_tree() {
	results_committed || return 0
	case $1 in
	*-dirty) die "the tree is dirty ($1): committed results (perf/results/) must come from a committed tree; commit first, or write elsewhere with PERF_RESULTS=DIR" ;;
	esac
}

# check_result_commit FILE COMMIT: dies when a result written to the
# committed perf/results/ was measured at another commit than the run
# started from (the tree changed during the run).
check_result_commit() {
	results_committed || return 0
	local c
	c=$(jq -r .machine.commit "$1")
	[ "$c" = "$2" ] || die "$1 was measured at $c, not $2: the tree changed during the run; its results cannot be committed"
}

# machine_json: where a result was measured.
machine_json() {
	jq -n --arg kernel "$(uname -r)" --arg cpu "$(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo)" \
		--argjson cpus "$(nproc)" --arg host "$(hostname)" --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" \
		--arg commit "$(tree_commit)" \
		'{kernel:$kernel, cpu:$cpu, cpus:$cpus, host:$host, loadavg:$load, commit:$commit}'
}

# stats_json FILE [COLUMN]: summary of a column of numbers.
stats_json() { awk -v c="${2:-1}" '{print $c}' "$1" | awk -f "$ANALYZE/stats.awk"; }

# ts_epoch RFC3339: seconds since the epoch, with fractions.
ts_epoch() { date -u -d "$1" +%s.%N; }

have_gnuplot() { command -v gnuplot >/dev/null; }
