#!/usr/bin/env bash
# perf/docs.sh [--check]: puts the generated figures into the docs, so that
# every table of figures comes from a committed script run and names its
# commit. Each generated block sits between two markers,
#
#   <!-- BEGIN generated: SOURCE -->  ...  <!-- END generated: SOURCE -->
#
# and is replaced whole by what SOURCE produces:
#
#   perf/results/table-full.md          perf/table.sh full (make perf writes it)
#   perf/table.sh full matrix           the throughput matrix's tables from
#                                       perf/results/matrix-full.json (and the
#                                       ceiling and profiles beside it)
#   perf/table.sh full cells            the matrix's cells alone
#   test/bench/rounds-table.sh          the raw rounds in perf/results/bench-rounds.txt
#                                       (test/bench/rounds.sh writes them)
#   test/bench/micro-table.sh           the raw runs in perf/results/bench-micro.txt
#                                       (test/bench/micro.sh writes them)
#
# --check changes nothing and exits 1 if a block differs from its source
# (make perf-check runs it, so a hand edit of a figure is caught).
set -o errexit -o nounset -o pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CHECK=0
[ "${1:-}" != --check ] || CHECK=1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
stale=0

# splice FILE SOURCE CONTENT_FILE: replace the block of SOURCE in FILE.
splice() {
	local file=$ROOT/$1 src=$2 content=$3
	grep -qF "<!-- BEGIN generated: $src -->" "$file" || { echo "perf/docs.sh: $1 has no block for $src" >&2; exit 1; }
	awk -v b="<!-- BEGIN generated: $src -->" -v e="<!-- END generated: $src -->" -v c="$content" '
		$0 == b { print; while ((getline l < c) > 0) print l; skip = 1; next }
		$0 == e { skip = 0 }
		!skip' "$file" >"$T/new"
	if cmp -s "$T/new" "$file"; then return; fi
	if [ $CHECK = 1 ]; then
		echo "perf/docs.sh: $1: the block from $src is not what $src gives (run perf/docs.sh):" >&2
		diff "$file" "$T/new" >&2 || true
		stale=1
	else
		cp "$T/new" "$file"
		echo "perf/docs.sh: updated $1 from $src"
	fi
}

splice perf/README.md perf/results/table-full.md "$ROOT/perf/results/table-full.md"
PERF_RESULTS=$ROOT/perf/results "$ROOT/perf/table.sh" full matrix >"$T/matrix.md"
splice docs/performance.md "perf/table.sh full matrix" "$T/matrix.md"
PERF_RESULTS=$ROOT/perf/results "$ROOT/perf/table.sh" full cells >"$T/cells.md"
splice README.md "perf/table.sh full cells" "$T/cells.md"
"$ROOT/test/bench/rounds-table.sh" "$ROOT/perf/results/bench-rounds.txt" >"$T/rounds.md"
splice docs/performance.md test/bench/rounds-table.sh "$T/rounds.md"
"$ROOT/test/bench/micro-table.sh" "$ROOT/perf/results/bench-micro.txt" >"$T/micro.md"
splice docs/performance.md test/bench/micro-table.sh "$T/micro.md"
exit $stale
