#!/usr/bin/env bash
# perf/soak-leak-check.sh: proof that the soak (perf/scenarios/soak.sh)
# catches a leak. It copies the committed tree (git archive HEAD) into a
# temporary directory, patches a deliberate leak into the relay's reload
# path there (every SIGHUP reload opens the configuration file and starts a
# goroutine that holds it forever: one goroutine and one FD per reload,
# 120 of each per hour at the soak's reload every 30 s), builds that relay,
# runs the soak of this tree against it (RELAY=the leaky binary) and
# succeeds only if the soak's leak verdict is "leak", for goroutines or
# FDs. The patch exists only in the temporary copy; nothing of it is in the
# product code.
#
# Needs root (the soak does). Env: LEAK_MINUTES (3), PERF_RESULTS (default:
# the temporary directory, removed at the end; give a directory to keep
# soak-leak-check.json and its plot).
set -o errexit -o nounset -o pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MINUTES=${LEAK_MINUTES:-3}
log() { printf '%s soak-leak-check: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (the soak runs in network namespaces)"

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir "$T/src"
git -C "$ROOT" archive HEAD | tar -x -C "$T/src"
log "committed tree $(git -C "$ROOT" rev-parse --short HEAD) in $T/src"

# The leak, in the copy only.
cat >"$T/src/internal/agent/soakleak.go" <<'GO'
package agent

import (
	"os"
	"time"
)

// leaked keeps the files reachable: an unreachable *os.File is closed by
// its finalizer at the next GC, which would hide the FD leak.
var leaked []*os.File

// leakOnReload leaks one goroutine and one open file per call, on purpose:
// perf/soak-leak-check.sh patches it into a throwaway copy of the tree.
func leakOnReload(path string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	leaked = append(leaked, f)
	go func() {
		for {
			time.Sleep(time.Hour)
		}
	}()
}
GO
sed -i 's/^func (a \*Agent) ReloadFile(ctx context.Context, path string) error {$/&\n\tleakOnReload(path)/' "$T/src/internal/agent/live.go"
grep -q '^	leakOnReload(path)$' "$T/src/internal/agent/live.go" || die "the patch did not apply: internal/agent/live.go has no ReloadFile of the expected form"
log "building the leaky relay"
(cd "$T/src" && go build -trimpath -o "$T/relay" ./cmd/relay) || die "building the leaky relay failed"

OUT=${PERF_RESULTS:-$T/results}
mkdir -p "$OUT"
log "soak of ${MINUTES} min against the leaky relay"
rc=0
RELAY=$T/relay SOAK_MINUTES=$MINUTES SOAK_LEAK=1 RESULT=leak-check PERF_RESULTS=$OUT \
	PERF_COMMAND="perf/soak-leak-check.sh" "$ROOT/perf/scenarios/soak.sh" || rc=$?
J=$OUT/soak-leak-check.json
[ -f "$J" ] || die "the soak wrote no result (exit status $rc)"
jq -c '.summary' "$J" >&2
verdict=$(jq -r .summary.leakVerdict "$J")
[ "$verdict" = leak ] || die "the soak's leak verdict is \"$verdict\", not \"leak\": it missed a goroutine and an FD leaked on every reload"
jq -e '.summary.leaks | any(test(" (goroutines|fds) "))' "$J" >/dev/null || die "the soak found a leak, but not in goroutines or FDs: $(jq -c .summary.leaks "$J")"
[ "$rc" != 0 ] || die "the soak found the leak but exited 0"
log "ok: the soak caught the leak: $(jq -r '.summary.leaks | join(", ")' "$J")"
