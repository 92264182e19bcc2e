#!/usr/bin/env bash
# perf/wgbuild-test.sh: checks that wg_build (perf/lib.sh) builds stock
# wireguard-go again when go.mod's golang.zx2c4.com/wireguard version
# changes, and only then. No root, no network: lib.sh runs from a copy
# beside a synthetic go.mod, with a fake `go` that records what it installs.
# Exit 1 on the first wrong answer.
set -o errexit -o nounset -o pipefail
P=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir -p "$T/repo/perf" "$T/fakebin"
cp "$P/lib.sh" "$P/netem.sh" "$T/repo/perf/"
# The fake go: `go install golang.zx2c4.com/wireguard@V` writes a
# "binary" that prints V into $GOBIN and logs V; `go list -m` reads go.mod.
cat >"$T/fakebin/go" <<'FAKE'
#!/usr/bin/env bash
if [ "$1" = list ]; then # go list -m -f '{{.Version}}' MODULE, run in the repo
	awk -v m="${!#}" '$1 == m { print $2 }' go.mod
	exit
fi
[ "$1" = install ] || { echo "fake go: unexpected: $*" >&2; exit 1; }
v=${2#*@}
mkdir -p "$GOBIN" # as go install does
printf '#!/bin/sh\necho %s\n' "$v" >"$GOBIN/wireguard"
chmod +x "$GOBIN/wireguard"
echo "$v" >>"$INSTALLS"
FAKE
chmod +x "$T/fakebin/go"
export INSTALLS=$T/installs
: >"$INSTALLS"

gomod() {
	printf 'module example\n\ngo 1.25\n\nrequire (\n\tgolang.zx2c4.com/wireguard %s\n)\n' "$1" >"$T/repo/go.mod"
}
# built: run wg_build from a fresh shell (as each perf script sources
# lib.sh) and print the version the binary it leaves in WG_GO reports.
built() {
	env -u WG_GO PATH="$T/fakebin:$PATH" bash -c 'source "$1/perf/lib.sh"; wg_build 2>>"$2"; "$WG_GO"' _ "$T/repo" "$T/build.log"
}

gomod v0.0.0-20250101000000-aaaaaaaaaaaa
[ "$(built)" = v0.0.0-20250101000000-aaaaaaaaaaaa ] || fail "first build: wrong binary"
[ "$(built)" = v0.0.0-20250101000000-aaaaaaaaaaaa ] || fail "second call: wrong binary"
[ "$(wc -l <"$INSTALLS")" = 1 ] || fail "built $(wc -l <"$INSTALLS") times for one version, want once"
gomod v0.0.0-20260101000000-bbbbbbbbbbbb
[ "$(built)" = v0.0.0-20260101000000-bbbbbbbbbbbb ] || fail "after a wireguard bump in go.mod, WG_GO is still the old version's binary"
[ "$(wc -l <"$INSTALLS")" = 2 ] || fail "built $(wc -l <"$INSTALLS") times for two versions, want twice"
echo "wgbuild-test: ok"
