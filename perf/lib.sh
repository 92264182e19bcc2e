# shellcheck shell=bash
# perf/lib.sh: shared helpers of the liqo-relay WAN testbed. Source it.
#
# Everything lives in network namespaces named "$PERF_PREFIX-*" and a state
# directory "$PERF_STATE"; perf_down removes both, and every process we
# start runs under `timeout`, so nothing outlives PERF_TTL seconds even if
# the script is killed with SIGKILL. Traffic only ever goes to addresses
# inside the namespaces made here.

set -o errexit -o nounset -o pipefail

PERF_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$PERF_ROOT/.." && pwd)
RELAY=${RELAY:-$REPO_ROOT/bin/relay}
# The WAN emulator is test tooling with its own main (perf/cmd/wanem), not
# part of the relay binary; perf_build_tools builds it.
WANEM=${WANEM:-$REPO_ROOT/bin/wanem}
# A unique prefix per testbed, so it never collides with tests or another run.
PERF_PREFIX=${PERF_PREFIX:-lrp$(od -An -N2 -tx1 /dev/urandom | tr -d ' \n')}
PERF_STATE=${PERF_STATE:-/run/liqo-relay-perf/$PERF_PREFIX}
PERF_TTL=${PERF_TTL:-1800}          # hard bound on every process, seconds
PERF_RESULTS=${PERF_RESULTS:-$PERF_ROOT/results}

# WAN defaults, one way: A-B 10 ms, A-consumer 25 ms, consumer-B 25 ms.
WAN_AB_DELAY=${WAN_AB_DELAY:-10ms}
WAN_AC_DELAY=${WAN_AC_DELAY:-25ms}
WAN_CB_DELAY=${WAN_CB_DELAY:-25ms}
# Exported: results record them (settings.wan, jq's env).
export WAN_AB_DELAY WAN_AC_DELAY WAN_CB_DELAY

# Relay modes: tun (default) or netstack, per provider.
PERF_MODE_A=${PERF_MODE_A:-${PERF_MODE:-tun}}
PERF_MODE_B=${PERF_MODE_B:-${PERF_MODE:-tun}}
# Extra health settings for both relays, as a YAML flow mapping, e.g.
# PERF_HEALTH='{interval: 50ms, selector: naive}'.
PERF_HEALTH=${PERF_HEALTH:-}
# Relay device MTU (the config default is 1280).
PERF_MTU=${PERF_MTU:-1280}
# PERF_TRANSLATE=1: B sees A's pods 10.10.0.0/16 as 10.11.0.0/16 (seesUs),
# so every packet from pod-a is translated.
PERF_TRANSLATE=${PERF_TRANSLATE:-0}
# PERF_WAN_AB=veth joins A and B with a plain veth pair instead of a wanem
# bridge: no emulation on the direct link, no emulator ceiling (for the
# unlimited-throughput comparison).
PERF_WAN_AB=${PERF_WAN_AB:-wanem}
# PERF_AB_OFFLOADS, with PERF_WAN_AB=veth: the offloads of that veth pair,
# "off" (every offload off, as on every other veth of the testbed),
# "defaults" (as the kernel makes a veth) or "gso-off" (UDP segmentation
# off, GRO on: a real NIC without UDP GSO). ab_offloads changes them live.
PERF_AB_OFFLOADS=${PERF_AB_OFFLOADS:-off}
# Extra arguments of every `relay run` (e.g. "--sockets std").
PERF_RELAY_ARGS=${PERF_RELAY_ARGS:-}
# PERF_EMULATOR=netem shapes the WAN links with `tc qdisc ... netem` on
# plain veths instead of wanem bridges, where the kernel has sch_netem
# (perf/netem.sh).
PERF_EMULATOR=${PERF_EMULATOR:-wanem}

# Addresses. Underlay (the "WAN"): one /24 per link.
AB_A=192.168.10.1 AB_B=192.168.10.2   # direct A-B, bridged by wan-ab
AC_A=192.168.20.1 AC_C=192.168.20.2   # A-consumer, bridged by wan-ac
CB_C=192.168.30.1 CB_B=192.168.30.2   # consumer-B, bridged by wan-cb
# Pods and relay overlay addresses.
POD_A=10.10.1.2 POD_A_GW=10.10.1.1 PODS_A=10.10.0.0/16 PODS_A_AS=10.11.0.0/16
POD_B=10.20.1.2 POD_B_GW=10.20.1.1 PODS_B=10.20.0.0/16
OVL_A=100.80.0.1 OVL_B=100.80.0.2
RELAY_PORT=51900
ADMIN=127.0.0.1:9586

log() { printf '%s perf: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

ns() { printf '%s-%s' "$PERF_PREFIX" "$1"; }
# nsx NAME CMD...: run CMD in namespace NAME (short name, e.g. provider-a).
nsx() { local n=$1; shift; ip netns exec "$(ns "$n")" "$@"; }

perf_require() {
	[ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
	local missing=() c
	for c in ip ping jq awk "$@"; do command -v "$c" >/dev/null || missing+=("$c"); done
	[ ${#missing[@]} = 0 ] || die "missing commands: ${missing[*]} (make perf-deps installs them)"
	[ -x "$RELAY" ] || die "no relay binary at $RELAY (make build)"
	[ -x "$WANEM" ] || die "no WAN emulator at $WANEM (make perf-tools, or perf/testbed.sh up, builds it)"
}

# perf_build_tools builds the testbed's own tools into bin/: the WAN
# emulator (perf/cmd/wanem). Scenarios expect them built; run-all.sh and
# testbed.sh call this before anything is timed.
perf_build_tools() {
	log "building $WANEM"
	(cd "$REPO_ROOT" && go build -trimpath -o "$WANEM" ./perf/cmd/wanem) || die "building perf/cmd/wanem failed"
}

ns_add() {
	ip netns add "$(ns "$1")"
	nsx "$1" ip link set lo up
	# Only IPv4 in the testbed; no router solicitations or DAD noise.
	nsx "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
	nsx "$1" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
}

# veth NS1 IF1 NS2 IF2: a veth pair between two namespaces, both ends up,
# offloads off (frames cross AF_PACKET bridges as they are).
veth() {
	ip link add "$2" netns "$(ns "$1")" type veth peer name "$4" netns "$(ns "$3")"
	nsx "$1" ip link set dev "$2" up
	nsx "$3" ip link set dev "$4" up
	nsx "$1" "$WANEM" offloads-off "$2"
	nsx "$3" "$WANEM" offloads-off "$4"
}

# start NS NAME CMD...: start a bounded background process in a namespace,
# output to $PERF_STATE/NAME.log, pid to $PERF_STATE/NAME.pid.
start() {
	local n=$1 name=$2; shift 2
	ip netns exec "$(ns "$n")" timeout -s TERM -k 5 "$PERF_TTL" "$@" >"$PERF_STATE/$name.log" 2>&1 &
	echo $! >"$PERF_STATE/$name.pid"
}

# stop NAME: SIGTERM a process started by start and wait for it.
stop() {
	local f=$PERF_STATE/$1.pid pid
	[ -f "$f" ] || return 0
	pid=$(cat "$f")
	kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$pid" 2>/dev/null || true
	rm -f "$f"
}

# wan_link NAME LEFT_NS LEFT_IF LEFT_ADDR RIGHT_NS RIGHT_IF RIGHT_ADDR:
# LEFT --veth-- [wan-NAME: wanem bridging a and b] --veth-- RIGHT,
# one /24 across it. Direction ab is LEFT to RIGHT.
wan_link() {
	local name=$1 lns=$2 lif=$3 laddr=$4 rns=$5 rif=$6 raddr=$7 w="wan-$1"
	if [ "$name" = ab ] && [ "$PERF_WAN_AB" = veth ]; then
		veth "$lns" "$lif" "$rns" "$rif"
		[ "$PERF_AB_OFFLOADS" = off ] || ab_offloads "$PERF_AB_OFFLOADS"
		nsx "$lns" ip addr add "$laddr/24" dev "$lif"
		nsx "$rns" ip addr add "$raddr/24" dev "$rif"
		return
	fi
	if [ "$PERF_EMULATOR" = netem ]; then
		netem_link "$@"
		return
	fi
	ns_add "$w"
	veth "$lns" "$lif" "$w" port-a
	veth "$w" port-b "$rns" "$rif"
	nsx "$lns" ip addr add "$laddr/24" dev "$lif"
	nsx "$rns" ip addr add "$raddr/24" dev "$rif"
	start "$w" "wanem-$name" "$WANEM" run --a port-a --b port-b --control "$PERF_STATE/wanem/$name.sock" --seed "${PERF_SEED:-1}"
	wait_for 10 "wanem $name control socket" test -S "$PERF_STATE/wanem/$name.sock"
}

# AB_FEATURES: the veth offloads ab_offloads sets, as ethtool names them.
AB_FEATURES="rx-checksumming tx-checksumming scatter-gather tcp-segmentation-offload generic-segmentation-offload generic-receive-offload tx-udp-segmentation rx-gro-list rx-udp-gro-forwarding"
# ab_offloads off|defaults|gso-off: set the offloads of both ends of the
# plain A-B veth (PERF_WAN_AB=veth). "defaults" is what the kernel gives a
# new veth pair (read once, from a scratch pair, and kept in the state
# directory), so a testbed can move between the three without rebuilding.
ab_offloads() {
	local mode=$1 side dev feats
	[ "$PERF_WAN_AB" = veth ] || die "ab_offloads needs PERF_WAN_AB=veth"
	command -v ethtool >/dev/null || die "ab_offloads needs ethtool (make perf-deps installs it)"
	if [ ! -f "$PERF_STATE/veth-defaults" ]; then
		local tmp
		tmp=$(ns ethtool-probe)
		ip netns add "$tmp"
		ip -n "$tmp" link add va type veth peer name vb
		ip netns exec "$tmp" ethtool -k va | awk -v want=" $AB_FEATURES " \
			'$NF != "[fixed]" { f = $1; sub(/:$/, "", f); if (index(want, " " f " ")) printf "%s %s ", f, $2 }' >"$PERF_STATE/veth-defaults"
		ip netns del "$tmp"
	fi
	case $mode in
	off) feats=$(for f in $AB_FEATURES; do printf '%s off ' "$f"; done) ;;
	defaults) feats=$(cat "$PERF_STATE/veth-defaults") ;;
	gso-off) feats=$(sed -E 's/(tx-udp-segmentation|generic-receive-offload) (on|off) //g' "$PERF_STATE/veth-defaults")"tx-udp-segmentation off generic-receive-offload on" ;;
	*) die "PERF_AB_OFFLOADS must be off, defaults or gso-off, not $mode" ;;
	esac
	local want got
	want=$(echo "$feats" | awk '{ for (i = 1; i < NF; i += 2) w[$i] = $(i + 1) } END { for (f in w) print f "=" w[f] }' | sort | paste -sd' ')
	for side in provider-a provider-b; do
		# ethtool -K exits non-zero when one feature cannot change (a
		# [requested on] that the device refuses): what it did is checked
		# against what was asked instead.
		# shellcheck disable=SC2086
		nsx "$side" ethtool -K wan-ab $feats >/dev/null 2>&1 || true
		got=$(ab_offloads_show "$side" | tr ' ' '\n' | sort | paste -sd' ')
		[ "$got" = "$want" ] || die "A-B veth offloads in $side: asked for $mode ($want), the device has $got"
	done
	log "A-B veth offloads: $mode ($(ab_offloads_show provider-a))"
}
# ab_offloads_show NS: the offloads of NS's end of the A-B veth, one line.
ab_offloads_show() {
	nsx "$1" ethtool -k wan-ab | awk -v want=" $AB_FEATURES " \
		'{ f = $1; sub(/:$/, "", f); if (index(want, " " f " ")) printf "%s%s=%s", (n++ ? " " : ""), f, $2 }'
}

# wan_set NAME ARGS...: change a WAN link at runtime (wanem set flags).
wan_set() {
	local n=$1; shift
	if netem_has "$n"; then netem_set "$n" "$@"; return; fi
	if [ ! -S "$PERF_STATE/wanem/$n.sock" ]; then log "link $n has no emulator: ignoring wan_set $*"; return 0; fi
	"$WANEM" set --control "$PERF_STATE/wanem/$n.sock" "$@"
}
wan_show() { if netem_has "$1"; then netem_show "$1"; return; fi; "$WANEM" show --control "$PERF_STATE/wanem/$1.sock"; }

# wait_for SECONDS WHAT CMD...: poll CMD every 50 ms until it succeeds.
wait_for() {
	local secs=$1 what=$2; shift 2
	local end=$(( $(date +%s) + secs ))
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -lt "$end" ] || die "timed out after ${secs}s waiting for $what"
		sleep 0.05
	done
}

now() { date +%s.%N; }

# shellcheck source=perf/netem.sh
source "$PERF_ROOT/netem.sh"

# ---- relays ----------------------------------------------------------------

# relay_config NAME MODE KEY EXPORTS OVERLAY PEER PEER_PUB PEER_PREFIXES DIRECT_EP CONSUMER_EP [SEESUS]
relay_config() {
	local name=$1 mode=$2 key=$3 exports=$4 ovl=$5 peer=$6 pub=$7 prefixes=$8 direct=$9 consumer=${10} seesus=${11:-}
	cat <<YAML
# generated by perf/lib.sh for testbed $PERF_PREFIX
name: $name
privateKeyFile: $key
listenPort: $RELAY_PORT
mode: $mode
mtu: $PERF_MTU
tun: {name: relay0}
addresses: [$ovl/32]
exports: [$exports]
admin: $ADMIN
log: {level: info, format: text}
YAML
	[ -z "$PERF_HEALTH" ] || echo "health: $PERF_HEALTH"
	cat <<YAML
peers:
  - name: $peer
    publicKey: $pub
    prefixes: [$prefixes]
    paths:
      - {name: direct, endpoint: "$direct:$RELAY_PORT"}
      - {name: consumer, endpoint: "$consumer:$RELAY_PORT"}
YAML
	[ -z "$seesus" ] || echo "    seesUs: [$seesus]"
}

relays_configure() {
	local n
	for n in provider-a provider-b; do
		[ -f "$PERF_STATE/$n.key" ] || { "$RELAY" genkey >"$PERF_STATE/$n.key"; chmod 600 "$PERF_STATE/$n.key"; }
	done
	local pa pb
	pa=$("$RELAY" pubkey <"$PERF_STATE/provider-a.key")
	pb=$("$RELAY" pubkey <"$PERF_STATE/provider-b.key")
	local seesus="" pods_a_at_b=$PODS_A
	if [ "$PERF_TRANSLATE" = 1 ]; then
		seesus="{real: $PODS_A, as: $PODS_A_AS}"
		pods_a_at_b=$PODS_A_AS
	fi
	relay_config provider-a "$PERF_MODE_A" "$PERF_STATE/provider-a.key" "$PODS_A" "$OVL_A" \
		provider-b "$pb" "$PODS_B, $OVL_B/32" "$AB_B" "$CB_B" "$seesus" >"$PERF_STATE/provider-a.yaml"
	relay_config provider-b "$PERF_MODE_B" "$PERF_STATE/provider-b.key" "$PODS_B" "$OVL_B" \
		provider-a "$pa" "$pods_a_at_b, $OVL_A/32" "$AB_A" "$AC_A" >"$PERF_STATE/provider-b.yaml"
	for n in provider-a provider-b; do
		"$RELAY" check -c "$PERF_STATE/$n.yaml" >/dev/null || die "generated $n.yaml is invalid"
	done
}

relays_start() {
	# shellcheck disable=SC2086
	start provider-a relay-a "$RELAY" run -c "$PERF_STATE/provider-a.yaml" $PERF_RELAY_ARGS
	# shellcheck disable=SC2086
	start provider-b relay-b "$RELAY" run -c "$PERF_STATE/provider-b.yaml" $PERF_RELAY_ARGS
	wait_for 20 "relay A to reach B over the direct path" active_is provider-a direct
	wait_for 20 "relay B to reach A over the direct path" active_is provider-b direct
}

relays_stop() { stop relay-a; stop relay-b; }

# relay_status NS: the relay's /status document.
relay_status() { nsx "$1" "$RELAY" status --admin "$ADMIN" --json; }
# active_path NS: the active path of the relay's only peer ("" if none).
active_path() { relay_status "$1" | jq -r '.peers[0].activePath'; }
active_is() { [ "$(active_path "$1")" = "$2" ]; }
relay_metrics() { nsx "$1" "$RELAY" status --admin "$ADMIN" --json >/dev/null && nsx "$1" curl -fsS "http://$ADMIN/metrics"; }

# ---- topology --------------------------------------------------------------

# perf_up builds the federation:
#
#   pod-a --- provider-a ==wan-ab== provider-b --- pod-b
#                  \\                    //
#                 wan-ac              wan-cb
#                     \\              //
#                       consumer (routes)
#
# Each wan-X namespace bridges two veths through `wanem` (perf/cmd/wanem); the
# consumer forwards between 192.168.20.0/24 and 192.168.30.0/24, and also
# routes the pod CIDRs (Liqo's own consumer-centric path, which carries
# traffic when the relay withdraws its routes).
perf_up() {
	case $PERF_EMULATOR in
	wanem) ;;
	netem) netem_check ;;
	*) die "PERF_EMULATOR must be wanem or netem, not $PERF_EMULATOR" ;;
	esac
	mkdir -p "$PERF_STATE/wanem"
	echo "$PERF_PREFIX" >"$PERF_STATE/prefix"
	log "testbed $PERF_PREFIX: namespaces, WAN links, routes (state in $PERF_STATE)"
	local n
	for n in consumer provider-a provider-b pod-a pod-b; do ns_add "$n"; done
	for n in consumer provider-a provider-b; do nsx "$n" sysctl -qw net.ipv4.ip_forward=1; done

	wan_link ab provider-a wan-ab "$AB_A" provider-b wan-ab "$AB_B"
	wan_link ac provider-a wan-ac "$AC_A" consumer wan-a "$AC_C"
	wan_link cb consumer wan-b "$CB_C" provider-b wan-cb "$CB_B"
	# The consumer path between the providers' WAN addresses.
	nsx provider-a ip route add 192.168.30.0/24 via "$AC_C"
	nsx provider-b ip route add 192.168.20.0/24 via "$CB_C"
	# Pods: one namespace behind each provider.
	veth provider-a pod pod-a eth0
	nsx provider-a ip addr add "$POD_A_GW/24" dev pod
	nsx pod-a ip addr add "$POD_A/24" dev eth0
	nsx pod-a ip route add default via "$POD_A_GW"
	veth provider-b pod pod-b eth0
	nsx provider-b ip addr add "$POD_B_GW/24" dev pod
	nsx pod-b ip addr add "$POD_B/24" dev eth0
	nsx pod-b ip route add default via "$POD_B_GW"
	# Liqo's consumer path for pod traffic (used when the relay withdraws).
	nsx provider-a ip route add "$PODS_B" via "$AC_C"
	nsx provider-b ip route add "$PODS_A" via "$CB_C"
	nsx consumer ip route add "$PODS_A" via "$AC_A"
	nsx consumer ip route add "$PODS_B" via "$CB_B"

	wan_defaults
	log "relays: A $PERF_MODE_A, B $PERF_MODE_B"
	relays_configure
	relays_start
	log "testbed $PERF_PREFIX up"
}

# wan_defaults sets the default one-way delays, nothing else.
wan_defaults() {
	wan_set ab --reset --delay "$WAN_AB_DELAY"
	wan_set ac --reset --delay "$WAN_AC_DELAY"
	wan_set cb --reset --delay "$WAN_CB_DELAY"
}

# wan_zero removes every impairment.
wan_zero() { local l; for l in ab ac cb; do wan_set "$l" --reset; done; }

# perf_down stops everything of testbed PREFIX (default: ours) and removes
# its namespaces and state. Safe to call twice, and on a half-built testbed.
perf_down() {
	local p=${1:-$PERF_PREFIX} n pid
	for n in $(ip netns list | awk '{print $1}' | grep -E "^$p-" || true); do
		for pid in $(ip netns pids "$n" 2>/dev/null); do kill -TERM "$pid" 2>/dev/null || true; done
	done
	# Relays remove their routes on SIGTERM; give them a moment, then kill.
	for _ in $(seq 30); do
		local left=0
		for n in $(ip netns list | awk '{print $1}' | grep -E "^$p-" || true); do
			[ -z "$(ip netns pids "$n" 2>/dev/null)" ] || left=1
		done
		[ $left = 1 ] || break
		sleep 0.1
	done
	for n in $(ip netns list | awk '{print $1}' | grep -E "^$p-" || true); do
		for pid in $(ip netns pids "$n" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
		ip netns del "$n" 2>/dev/null || true
	done
	case "/run/liqo-relay-perf/$p" in
	/run/liqo-relay-perf/?*) rm -rf "/run/liqo-relay-perf/$p" ;;
	esac
	[ "$PERF_STATE" = "/run/liqo-relay-perf/$p" ] || [ "$p" != "$PERF_PREFIX" ] || rm -rf "$PERF_STATE"
}

# perf_trap: tear the testbed down when the calling script exits, however.
perf_trap() { trap 'rc=$?; trap - EXIT INT TERM; perf_down; exit $rc' EXIT INT TERM; }

# ---- stock wireguard-go, for comparison ------------------------------------

# wg_version prints the golang.zx2c4.com/wireguard version go.mod requires
# (read from the file: this runs whenever lib.sh is sourced).
wg_version() {
	awk '{ for (i = 1; i < NF; i++) if ($i == "golang.zx2c4.com/wireguard") { print $(i + 1); exit } }' "$REPO_ROOT/go.mod"
}

# The stock binary is named by that version, so a wireguard-go bump in
# go.mod builds a new one instead of comparing against a stale binary.
WG_GO=${WG_GO:-$PERF_ROOT/.bin/wireguard-go-$(wg_version)}
WG_PORT=51820

# wg_build installs stock wireguard-go at the version go.mod pins, from the
# module proxy, as $WG_GO, unless that binary is there already.
wg_build() {
	[ -x "$WG_GO" ] && return 0
	local v tmp
	v=$(wg_version)
	[ -n "$v" ] || die "go.mod requires no golang.zx2c4.com/wireguard"
	log "building stock wireguard-go $v into $WG_GO"
	tmp=$(mktemp -d)
	(cd /tmp && GOBIN=$tmp go install "golang.zx2c4.com/wireguard@$v")
	mkdir -p "$(dirname "$WG_GO")"
	mv "$tmp/wireguard" "$WG_GO"
	rmdir "$tmp"
}

# wg names its interfaces per testbed: all namespaces share wireguard-go's
# socket directory (/var/run/wireguard), so names must differ.
wg_if() { printf 'wg%s%s' "$1" "${PERF_PREFIX: -4}"; }

# wg_up: stock wireguard-go in provider-a and provider-b over the direct
# link, pod CIDRs routed into it (stop the relays first: their rules would
# take the pod traffic).
wg_up() {
	local ia ib ka kb
	ia=$(wg_if a) ib=$(wg_if b)
	ka=$PERF_STATE/wg-a.key kb=$PERF_STATE/wg-b.key
	[ -f "$ka" ] || (umask 077 && wg genkey >"$ka")
	[ -f "$kb" ] || (umask 077 && wg genkey >"$kb")
	start provider-a wg-a env WG_PROCESS_FOREGROUND=1 "$WG_GO" -f "$ia"
	start provider-b wg-b env WG_PROCESS_FOREGROUND=1 "$WG_GO" -f "$ib"
	wait_for 10 "wireguard-go $ia" test -S "/var/run/wireguard/$ia.sock"
	wait_for 10 "wireguard-go $ib" test -S "/var/run/wireguard/$ib.sock"
	nsx provider-a wg set "$ia" private-key "$ka" listen-port $WG_PORT \
		peer "$(wg pubkey <"$kb")" endpoint "$AB_B:$WG_PORT" allowed-ips "$PODS_B"
	nsx provider-b wg set "$ib" private-key "$kb" listen-port $WG_PORT \
		peer "$(wg pubkey <"$ka")" endpoint "$AB_A:$WG_PORT" allowed-ips "$PODS_A"
	nsx provider-a ip link set dev "$ia" mtu "$PERF_MTU" up
	nsx provider-b ip link set dev "$ib" mtu "$PERF_MTU" up
	nsx provider-a ip route replace "$PODS_B" dev "$ia"
	nsx provider-b ip route replace "$PODS_A" dev "$ib"
}

wg_down() {
	stop wg-a
	stop wg-b
	pods_via_consumer
}

# pods_via_direct / pods_via_consumer: plain routing of the pod CIDRs, no
# tunnel (the veth baseline, and Liqo's consumer path).
pods_via_direct() {
	nsx provider-a ip route replace "$PODS_B" via "$AB_B"
	nsx provider-b ip route replace "$PODS_A" via "$AB_A"
}
pods_via_consumer() {
	nsx provider-a ip route replace "$PODS_B" via "$AC_C"
	nsx provider-b ip route replace "$PODS_A" via "$CB_C"
}
