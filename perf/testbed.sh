#!/usr/bin/env bash
# perf/testbed.sh up|down|status|env: the liqo-relay WAN testbed in network
# namespaces. `up` prints the prefix; `down [PREFIX]` removes a testbed (all
# testbeds if PREFIX is "all"). A testbed left up removes itself after
# PERF_TTL seconds (default 1800). `up` builds the WAN emulator into
# bin/wanem first (perf/cmd/wanem: test tooling, not in the relay binary).
source "$(dirname "$0")/lib.sh"

case "${1:-}" in
up)
	perf_build_tools
	perf_require
	trap 'rc=$?; [ $rc = 0 ] || perf_down; exit $rc' EXIT
	perf_up
	# Watchdog: tear down after PERF_TTL even if nobody calls down.
	setsid bash -c "sleep $PERF_TTL; PERF_PREFIX=$PERF_PREFIX PERF_STATE=$PERF_STATE '$PERF_ROOT/testbed.sh' down" >/dev/null 2>&1 < /dev/null &
	echo $! >"$PERF_STATE/watchdog.pid"
	echo "$PERF_PREFIX"
	;;
down)
	p=${2:-$PERF_PREFIX}
	if [ "$p" = all ]; then
		for p in $(ip netns list | awk '{print $1}' | sed -n 's/^\(lrp[0-9a-f]\{4\}\)-.*/\1/p' | sort -u); do
			wd=/run/liqo-relay-perf/$p/watchdog.pid
			[ ! -f "$wd" ] || kill -- "-$(cat "$wd")" 2>/dev/null || true
			PERF_STATE=/run/liqo-relay-perf/$p perf_down "$p"
		done
	else
		wd=/run/liqo-relay-perf/$p/watchdog.pid
		[ ! -f "$wd" ] || [ "$(cat "$wd")" = "$$" ] || kill -- "-$(cat "$wd")" 2>/dev/null || true
		PERF_STATE=/run/liqo-relay-perf/$p perf_down "$p"
	fi
	;;
status)
	PERF_PREFIX=${2:?usage: testbed.sh status PREFIX}
	for n in provider-a provider-b; do nsx "$n" "$RELAY" status --admin "$ADMIN"; done
	;;
*)
	echo "usage: $0 up | down [PREFIX|all] | status PREFIX" >&2
	exit 2
	;;
esac
