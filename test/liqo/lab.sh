#!/usr/bin/env bash
# test/liqo/lab.sh: Liqo v1.2.0, its own code, on this machine. Three
# Kubernetes clusters (consumer, provider-a, provider-b), each one node that
# is a network namespace on a routed underlay, each with etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler and kube-proxy
# (nftables mode) built from k8s.io/kubernetes v1.37.2 (test/k8s/cluster.sh
# build), a pod runner in place of the kubelet (test/liqo/podrunner) and the
# lab's cluster services (test/liqo/labservices: LoadBalancer addresses and
# the cluster DNS). Liqo is installed into each from its own chart, with its
# own binaries built from its Go module (test/liqo/tools), and peered with
# liqoctl.
#
#   lab.sh build        build everything (cached: Kubernetes under
#                       $K8S_CACHE/k8s-*, Liqo under $K8S_CACHE/liqo-*, each
#                       keyed by its tools module's hash; from an empty Go
#                       build cache on 2 cores, about 6 and then 3 minutes)
#   lab.sh up           underlay, three control planes, nodes Ready
#   lab.sh install      Liqo from its chart into every cluster (helm install)
#   lab.sh peer         liqoctl peer: the consumer with each provider
#   lab.sh all          build, up, install, peer
#   lab.sh down         stop everything and remove all the lab made
#   lab.sh kubeconfig CLUSTER   the admin kubeconfig's path
#   lab.sh exec CLUSTER NS POD CONTAINER -- ARGV...
#                       run ARGV in a container's network and mount namespaces
#   lab.sh logs CLUSTER NS POD CONTAINER
#   lab.sh liqoctl CLUSTER ARGS...   Liqo's liqoctl against CLUSTER
#   lab.sh inventory    every Liqo object, pod and Liqo namespace's object
#   lab.sh diagnose     pods, events, Liqo networking objects, log tails
#   lab.sh bin          the directory of every binary the lab runs
#
# The underlay (laid out for NAT between clusters later): a router
# namespace ll-wan; cluster k (consumer 1, provider-a 2, provider-b 3) is
# the subnet 10.210.k.0/24 behind it, the router at .1, the node ll-CLUSTER-n1
# at .11 (its API server at https://10.210.k.11:6443), LoadBalancer addresses
# .200-.250 routed by the router to the node, where kube-proxy forwards them
# to the endpoints. The host reaches the underlay over ll-host
# (10.210.0.1/30, the router at .2) and a route to 10.210.0.0/16: kubectl,
# helm and liqoctl run on the host. A node masquerades its pods' traffic to
# the underlay (nft table lab-egress), as a cloud node does. Every cluster's pods are 10.244.1.0/24
# (node 1 of 10.244.0.0/16) and its Services 10.96.0.0/16: the clusters
# overlap, and Liqo's IPAM remaps them.
#
# One lab runs on a machine at a time: its namespaces, links and route have
# fixed names. Run everything as root (K8S_CACHE defaults to root's cache).
#
# Exit status: 0 done; 1 failed; 3 a lab already runs (up); 4 this machine
# cannot run the lab (not root, a tool or a build missing): lab_test.go
# skips on 3 and 4 outside CI and fails in CI.
#
# Environment: LAB_STATE (/tmp/liqo-relay-lab), K8S_CACHE (as cluster.sh),
# LAB_TTL (seconds after which a watchdog takes the lab down, 5400),
# LAB_FORCE=1 (down removes the lab's namespaces, links and route even when
# LAB_STATE holds no lab: one left behind by a lost state directory).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
LIQO_VERSION=v1.2.0
K8S_CACHE=${K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/liqo-relay}
LIQO_BIN=$K8S_CACHE/liqo-$LIQO_VERSION/bin
LAB_STATE=${LAB_STATE:-/tmp/liqo-relay-lab}
LAB_TTL=${LAB_TTL:-5400}
CLUSTERS=(consumer provider-a provider-b)
ROUTER=ll-wan
POD_CIDR=10.244.0.0/16
NODE_POD_CIDR=10.244.1.0/24
POD_GATEWAY=10.244.1.1
SERVICE_CIDR=10.96.0.0/16
export GONOSUMDB=github.com/liqotech/virtual-kubelet

log() { printf '%s lab: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }
# unable MESSAGE: the machine cannot run the lab (exit status 4).
unable() { log "cannot run the lab here: $*"; exit 4; }

# check_cluster CLUSTER: dies unless the lab has CLUSTER.
check_cluster() {
	local c
	for c in "${CLUSTERS[@]}"; do [ "$c" != "$1" ] || return 0; done
	die "no cluster \"$1\" (the lab has ${CLUSTERS[*]})"
}

# index CLUSTER: its number k on the underlay (10.210.k.0/24); callers
# check the name first (check_cluster).
index() {
	local i
	for i in "${!CLUSTERS[@]}"; do [ "${CLUSTERS[$i]}" != "$1" ] || { echo $((i + 1)); return; }; done
	echo 0
}
node() { echo "ll-$1-n1"; }
node_ip() { echo "10.210.$(index "$1").11"; }
k8s_bin() { bash "$ROOT/test/k8s/cluster.sh" bin; }
kc() { echo "$LAB_STATE/$1/kubeconfig"; }
kubectl_() { local c=$1; shift; "$(k8s_bin)/kubectl" --kubeconfig "$(kc "$c")" "$@"; }

# ---- build ------------------------------------------------------------------

liqo_hash() {
	(cd "$HERE/tools" && cat go.mod go.sum $(find . -name '*.go' | LC_ALL=C sort)) | sha256sum | cut -c1-16
}

have_liqo() {
	local b
	for b in liqo-controller-manager ipam gateway wireguard webhook crd-replicator proxy liqoctl geneve-standin; do
		[ -x "$LIQO_BIN/$b" ] || return 1
	done
	[ "$(cat "$LIQO_BIN/.tools-hash" 2>/dev/null)" = "$(liqo_hash)" ] && [ -d "$LIQO_BIN/chart" ]
}

# build_liqo compiles Liqo's binaries from its module (and our geneve
# stand-in, which imports Liqo's packages) into a temporary directory
# moved into place only when all built, and copies Liqo's chart from the
# module beside them. Liqo's fabric is not built: the stand-in's fabric role
# runs in its place, Liqo's own controllers for everything but the geneve
# devices (test/liqo/GENEVE.md). The stand-in picks its role from the name
# it is run by: liqo-geneve (the gateway pod's geneve container) or
# liqo-fabric (the fabric DaemonSet).
build_liqo() {
	have_liqo && return 0
	log "building Liqo $LIQO_VERSION from its Go module into $LIQO_BIN (once per machine, about 3 minutes on 2 cores after the Kubernetes tools)"
	mkdir -p "$K8S_CACHE"
	local tmp dir
	tmp=$(mktemp -d "$K8S_CACHE/liqo-build.XXXXXX")
	(cd "$HERE/tools" && GOFLAGS=-mod=mod go build -trimpath -o "$tmp/" \
		github.com/liqotech/liqo/cmd/liqo-controller-manager github.com/liqotech/liqo/cmd/ipam \
		github.com/liqotech/liqo/cmd/gateway github.com/liqotech/liqo/cmd/gateway/wireguard \
		github.com/liqotech/liqo/cmd/webhook \
		github.com/liqotech/liqo/cmd/crd-replicator github.com/liqotech/liqo/cmd/proxy \
		github.com/liqotech/liqo/cmd/liqoctl ./cmd/geneve-standin) >&2 ||
		{ rm -rf "$tmp"; die "building Liqo failed"; }
	dir=$(cd "$HERE/tools" && GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' github.com/liqotech/liqo) ||
		{ rm -rf "$tmp"; die "finding Liqo's module directory failed"; }
	ln -s geneve-standin "$tmp/liqo-geneve"
	ln -s geneve-standin "$tmp/liqo-fabric"
	cp -r "$dir/deployments/liqo" "$tmp/chart"
	chmod -R u+w "$tmp/chart"
	liqo_hash >"$tmp/.tools-hash"
	rm -rf "$LIQO_BIN"
	mkdir -p "$(dirname "$LIQO_BIN")"
	mv "$tmp" "$LIQO_BIN"
	log "built Liqo into $LIQO_BIN"
}

# build_lab compiles the lab's own tools from this repository (quick when
# nothing changed).
build_lab() {
	mkdir -p "$LAB_STATE/bin"
	(cd "$ROOT" && go build -trimpath -o "$LAB_STATE/bin/" ./test/cmd/podrunner ./test/cmd/labservices) ||
		die "building the lab's tools failed"
}

build() {
	bash "$ROOT/test/k8s/cluster.sh" build
	build_liqo
	build_lab
}

# images writes the pod runner's image map: every image Liqo's chart names,
# without its tag, to the binary that stands for its entrypoint.
images() {
	local b=$LIQO_BIN
	jq -n --arg b "$b" '{
		"ghcr.io/liqotech/liqo-controller-manager": "\($b)/liqo-controller-manager",
		"ghcr.io/liqotech/ipam": "\($b)/ipam",
		"ghcr.io/liqotech/gateway": "\($b)/gateway",
		"ghcr.io/liqotech/gateway/wireguard": "\($b)/wireguard",
		"ghcr.io/liqotech/gateway/geneve": "\($b)/liqo-geneve",
		"ghcr.io/liqotech/fabric": "\($b)/liqo-fabric",
		"ghcr.io/liqotech/webhook": "\($b)/webhook",
		"ghcr.io/liqotech/crd-replicator": "\($b)/crd-replicator",
		"ghcr.io/liqotech/proxy": "\($b)/proxy"
	}' >"$LAB_STATE/images.json"
}

# ---- processes --------------------------------------------------------------

# start CLUSTER NAME CMD...: runs CMD in the cluster's node namespace, in
# its own session, logging to $LAB_STATE/CLUSTER/NAME.log.
start() {
	local c=$1 name=$2
	shift 2
	local d=$LAB_STATE/$c
	setsid ip netns exec "$(node "$c")" "$@" >>"$d/$name.log" 2>&1 </dev/null &
	echo $! >"$d/$name.pid"
}

# stop_pid PIDFILE [SECONDS]: SIGTERM, then SIGKILL after SECONDS (10).
stop_pid() {
	local f=$1 secs=${2:-10} pid
	[ -f "$f" ] || return 0
	pid=$(cat "$f")
	kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq $((secs * 10))); do kill -0 "$pid" 2>/dev/null || { rm -f "$f"; return 0; }; sleep 0.1; done
	kill -KILL "$pid" 2>/dev/null || true
	rm -f "$f"
}

# wait_for WHAT SECONDS LOG CMD...: runs CMD until it succeeds; after
# SECONDS it dies, with the tail of LOG (the log of the process waited for).
wait_for() {
	local what=$1 secs=$2 logf=$3
	shift 3
	for _ in $(seq $((secs * 5))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
	[ ! -f "$logf" ] || { log "the last lines of $logf:"; tail -15 "$logf" >&2; }
	die "$what: not after ${secs} s"
}

# alive CLUSTER NAME...: dies when one of the cluster's processes exited.
alive() {
	local c=$1 n
	shift
	for n in "$@"; do
		kill -0 "$(cat "$LAB_STATE/$c/$n.pid")" 2>/dev/null ||
			{ tail -15 "$LAB_STATE/$c/$n.log" >&2; die "$n of $c exited (log: $LAB_STATE/$c/$n.log)"; }
	done
}

# ---- network ----------------------------------------------------------------

# net_up makes the underlay; up has made the router namespace.
net_up() {
	ip -n "$ROUTER" link set lo up
	ip netns exec "$ROUTER" sysctl -qw net.ipv4.ip_forward=1
	ip link add ll-host type veth peer name up0 netns "$ROUTER"
	ip addr add 10.210.0.1/30 dev ll-host
	ip link set ll-host up
	ip -n "$ROUTER" addr add 10.210.0.2/30 dev up0
	ip -n "$ROUTER" link set up0 up
	ip route add 10.210.0.0/16 via 10.210.0.2
	local c k n
	for c in "${CLUSTERS[@]}"; do
		k=$(index "$c") n=$(node "$c")
		ip netns add "$n"
		ip -n "$n" link set lo up
		ip link add "c$k" netns "$ROUTER" type veth peer name eth0 netns "$n"
		ip -n "$ROUTER" addr add "10.210.$k.1/24" dev "c$k"
		ip -n "$ROUTER" link set "c$k" up
		ip -n "$n" addr add "10.210.$k.11/24" dev eth0
		ip -n "$n" link set eth0 up
		ip -n "$n" route add default via "10.210.$k.1"
		ip netns exec "$n" sysctl -qw net.ipv4.ip_forward=1
		# Pods reach the underlay from the node's address, as a cloud node
		# masquerades them: every cluster's pods share one range.
		ip netns exec "$n" nft -f - <<EOF
table ip lab-egress {
	chain postrouting {
		type nat hook postrouting priority srcnat; policy accept;
		oifname "eth0" ip saddr $POD_CIDR masquerade
	}
}
EOF
	done
}

net_down() {
	local c
	for c in "${CLUSTERS[@]}"; do ip netns del "$(node "$c")" 2>/dev/null || true; done
	ip route del 10.210.0.0/16 via 10.210.0.2 2>/dev/null || true
	ip link del ll-host 2>/dev/null || true
	ip netns del "$ROUTER" 2>/dev/null || true
}

# ---- control planes -------------------------------------------------------

pki() {
	local d=$1/pki ip=$2
	mkdir -p "$d"
	(
		cd "$d"
		openssl req -x509 -newkey rsa:2048 -nodes -days 3 -subj "/CN=liqo-lab-ca" -keyout ca.key -out ca.crt 2>/dev/null
		openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" -keyout serving.key -out serving.csr 2>/dev/null
		openssl x509 -req -in serving.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3 -out serving.crt \
			-extfile <(printf 'subjectAltName=IP:%s,IP:10.96.0.1,IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\nextendedKeyUsage=serverAuth' "$ip") 2>/dev/null
		openssl req -newkey rsa:2048 -nodes -subj "/O=system:masters/CN=admin" -keyout admin.key -out admin.csr 2>/dev/null
		openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3 -out admin.crt \
			-extfile <(printf 'extendedKeyUsage=clientAuth') 2>/dev/null
		openssl genrsa -out sa.key 2048 2>/dev/null
		openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
	)
}

kubeconfig_write() {
	local c=$1 d=$LAB_STATE/$1
	cat >"$d/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: $c
  cluster:
    server: https://$(node_ip "$c"):6443
    certificate-authority-data: $(base64 -w0 <"$d/pki/ca.crt")
users:
- name: admin-$c
  user:
    client-certificate-data: $(base64 -w0 <"$d/pki/admin.crt")
    client-key-data: $(base64 -w0 <"$d/pki/admin.key")
contexts:
- name: $c
  context: {cluster: $c, user: admin-$c}
current-context: $c
EOF
}

cluster_up() {
	local c=$1 d=$LAB_STATE/$1 ip b n
	ip=$(node_ip "$c") b=$(k8s_bin) n=$(node "$c")
	mkdir -p "$d"
	pki "$d" "$ip"
	kubeconfig_write "$c"
	start "$c" etcd "$b/etcd" --name "$c" --data-dir "$d/etcd" --log-level error --unsafe-no-fsync \
		--listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
		--listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
		--initial-cluster "$c=http://127.0.0.1:2380"
	# --enable-aggregator-routing: webhooks and APIServices are called at
	# their endpoints' pod addresses (the node namespace reaches them on
	# cbr0), not through a Service address.
	start "$c" apiserver "$b/kube-apiserver" --etcd-servers http://127.0.0.1:2379 \
		--bind-address 0.0.0.0 --secure-port 6443 --advertise-address "$ip" \
		--tls-cert-file "$d/pki/serving.crt" --tls-private-key-file "$d/pki/serving.key" \
		--client-ca-file "$d/pki/ca.crt" \
		--service-account-issuer https://kubernetes.default.svc \
		--service-account-key-file "$d/pki/sa.pub" --service-account-signing-key-file "$d/pki/sa.key" \
		--service-cluster-ip-range "$SERVICE_CIDR" --authorization-mode Node,RBAC \
		--allow-privileged=true --enable-aggregator-routing=true \
		--cert-dir "$d/apiserver-certs" --profiling=false --v 0
	wait_for "the API server of $c" 120 "$d/apiserver.log" kubectl_ "$c" get --raw /readyz
	start "$c" controller-manager "$b/kube-controller-manager" --kubeconfig "$d/kubeconfig" \
		--authentication-kubeconfig "$d/kubeconfig" --authorization-kubeconfig "$d/kubeconfig" \
		--service-account-private-key-file "$d/pki/sa.key" --root-ca-file "$d/pki/ca.crt" \
		--cluster-signing-cert-file "$d/pki/ca.crt" --cluster-signing-key-file "$d/pki/ca.key" \
		--use-service-account-credentials --leader-elect=false --cluster-name "$c" \
		--allocate-node-cidrs=false --bind-address 127.0.0.1 --secure-port 10257 \
		--cert-dir "$d/controller-manager-certs" --profiling=false --v 0
	start "$c" scheduler "$b/kube-scheduler" --kubeconfig "$d/kubeconfig" \
		--authentication-kubeconfig "$d/kubeconfig" --authorization-kubeconfig "$d/kubeconfig" \
		--leader-elect=false --bind-address 127.0.0.1 --secure-port 10259 --profiling=false --v 0
	# --conntrack-max-per-core 0: nf_conntrack_max is the host's, not the
	# namespace's; kube-proxy leaves it alone.
	start "$c" kube-proxy "$b/kube-proxy" --kubeconfig "$d/kubeconfig" --proxy-mode nftables \
		--hostname-override "$n" --cluster-cidr "$POD_CIDR" --conntrack-max-per-core 0 \
		--metrics-bind-address 127.0.0.1:10249 --healthz-bind-address 127.0.0.1:10256 --v 0
	start "$c" podrunner "$LAB_STATE/bin/podrunner" run --kubeconfig "$d/kubeconfig" --node "$n" \
		--node-ip "$ip" --pod-cidr "$NODE_POD_CIDR" --state-dir "$d/runner" --images "$LAB_STATE/images.json" \
		--cluster-dns "$POD_GATEWAY"
	start "$c" labservices "$LAB_STATE/bin/labservices" --kubeconfig "$d/kubeconfig" \
		--lb-pool "10.210.$(index "$c").200-10.210.$(index "$c").250" --router-netns "$ROUTER" --next-hop "$ip"
}

cluster_ready() {
	local c=$1 d=$LAB_STATE/$1
	wait_for "node $(node "$c") Ready" 120 "$d/podrunner.log" kubectl_ "$c" wait --for=condition=Ready "node/$(node "$c")" --timeout=1s
	wait_for "the default ServiceAccount of $c" 120 "$d/controller-manager.log" kubectl_ "$c" get serviceaccount default -n default
	wait_for "the kube-root-ca.crt ConfigMap of $c" 120 "$d/controller-manager.log" kubectl_ "$c" get configmap kube-root-ca.crt -n default
	alive "$c" etcd apiserver controller-manager scheduler kube-proxy podrunner labservices
}

up() {
	[ "$(id -u)" = 0 ] || unable "needs root (network namespaces)"
	local t
	for t in ip nft openssl jq setsid sysctl; do command -v "$t" >/dev/null || unable "needs $t (Debian: iproute2, nftables, openssl, jq, util-linux, procps)"; done
	have_liqo || unable "Liqo is not built in $LIQO_BIN: lab.sh build"
	bash "$ROOT/test/k8s/cluster.sh" bin >/dev/null && [ -x "$(k8s_bin)/kube-proxy" ] || unable "the Kubernetes tools are not built: lab.sh build"
	# The router namespace is the machine's lock: ip netns add fails when
	# it exists.
	if [ -e "/run/netns/$ROUTER" ] || ! ip netns add "$ROUTER" 2>/dev/null; then
		log "a lab already runs on this machine (network namespace $ROUTER); lab.sh down first"
		exit 3
	fi
	mkdir -p "$LAB_STATE"
	touch "$LAB_STATE/up"
	trap 'log "up failed; what it made is still there (logs under $LAB_STATE): lab.sh down removes it"' ERR
	build_lab
	images
	net_up
	# The watchdog takes the lab down after LAB_TTL seconds, so a run that
	# dies without cleaning up leaves nothing running for long.
	LAB_STATE=$LAB_STATE setsid bash -c 'sleep "$1"; exec bash "$2" down' watchdog "$LAB_TTL" "$HERE/lab.sh" </dev/null >/dev/null 2>&1 &
	echo $! >"$LAB_STATE/watchdog.pid"
	local c
	for c in "${CLUSTERS[@]}"; do cluster_up "$c"; done
	for c in "${CLUSTERS[@]}"; do cluster_ready "$c"; done
	log "up: ${CLUSTERS[*]}"
}

down() {
	local c f
	if [ ! -e "$LAB_STATE/up" ]; then
		if [ -e "/run/netns/$ROUTER" ] && [ "${LAB_FORCE:-}" != 1 ]; then
			die "$LAB_STATE holds no lab, but network namespace $ROUTER exists: another LAB_STATE's lab, or one whose state is lost (LAB_FORCE=1 lab.sh down removes its namespaces, links and route)"
		fi
		net_down
		log "down (no lab in $LAB_STATE)"
		return 0
	fi
	if [ -f "$LAB_STATE/watchdog.pid" ] && [ "$$" != "$(cat "$LAB_STATE/watchdog.pid")" ]; then
		kill -- "-$(cat "$LAB_STATE/watchdog.pid")" 2>/dev/null || true
	fi
	# The pod runners first, all at once: each stops its pods (each within
	# its grace period) and removes what it made, while the API server
	# still answers.
	for c in "${CLUSTERS[@]}"; do stop_pid "$LAB_STATE/$c/podrunner.pid" 90 & done
	wait
	# Whatever a runner that did not finish left: its containers' processes
	# and its pods' namespaces, from its records.
	for c in "${CLUSTERS[@]}"; do
		for f in "$LAB_STATE/$c/runner/pods"/*/*.pid; do [ ! -f "$f" ] || kill -KILL "$(cat "$f")" 2>/dev/null || true; done
		for f in "$LAB_STATE/$c/runner/netns"/*; do [ ! -e "$f" ] || ip netns del "$(basename "$f")" 2>/dev/null || true; done
	done
	for c in "${CLUSTERS[@]}"; do
		for p in labservices kube-proxy scheduler controller-manager apiserver etcd; do stop_pid "$LAB_STATE/$c/$p.pid"; done
	done
	net_down
	# Only what the lab wrote: LAB_STATE may have been given as a
	# directory that holds other things.
	rm -rf "$LAB_STATE/bin" "$LAB_STATE/images.json" "$LAB_STATE"/peer-*.log "$LAB_STATE/watchdog.pid"
	for c in "${CLUSTERS[@]}"; do rm -rf "${LAB_STATE:?}/$c"; done
	rm -f "$LAB_STATE/up"
	rmdir "$LAB_STATE" 2>/dev/null || true
	log "down"
}

# ---- Liqo -----------------------------------------------------------------

# install CLUSTER: Liqo from its chart, with the values a user gives on a
# cluster whose CIDRs and API server address liqoctl install cannot
# discover (Liqo looks for a control-plane Node; the lab's node is not
# labelled one, as a managed cluster's nodes are not), plus what the lab
# needs: the image tag (the chart has no appVersion), userspace WireGuard
# (no kernel module here), the underlay reserved from Liqo's address pools,
# and no metric-agent APIService or telemetry CronJob.
install_one() {
	local c=$1 d=$LAB_STATE/$1
	cat >"$d/liqo-values.yaml" <<EOF
tag: $LIQO_VERSION
apiServer:
  address: https://$(node_ip "$c"):6443
discovery:
  config:
    clusterID: $c
ipam:
  podCIDRs: [$POD_CIDR]
  serviceCIDR: $SERVICE_CIDR
  reservedSubnets: [10.210.0.0/16]
networking:
  gatewayTemplates:
    wireguard:
      implementation: userspace
metricAgent:
  enabled: false
telemetry:
  enabled: false
EOF
	log "$c: helm install liqo"
	"$(k8s_bin)/helm" upgrade --install liqo "$LIQO_BIN/chart" --kubeconfig "$(kc "$c")" --namespace liqo --create-namespace \
		--values "$d/liqo-values.yaml" --wait --timeout 10m >"$d/helm-install.log" 2>&1 ||
		{ tail -20 "$d/helm-install.log" >&2; kubectl_ "$c" get pods -A -o wide >&2 || true; die "helm install liqo into $c failed (log: $d/helm-install.log)"; }
}

# require_up: dies unless this LAB_STATE's lab runs.
require_up() { [ -e "$LAB_STATE/up" ] || die "no lab runs in $LAB_STATE: lab.sh up first"; }

install() {
	require_up
	local c
	for c in "${CLUSTERS[@]}"; do install_one "$c"; done
	log "Liqo installed in ${CLUSTERS[*]}"
}

# peer: liqoctl peer from the consumer to each provider, as the Liqo docs
# give it (the gateway server in the provider, behind a LoadBalancer),
# without a ResourceSlice: offloading (the virtual node) is not in the lab
# yet, and liqoctl would wait for it.
peer() {
	require_up
	local p
	for p in provider-a provider-b; do
		log "liqoctl peer consumer -> $p"
		"$LIQO_BIN/liqoctl" peer --kubeconfig "$(kc consumer)" --remote-kubeconfig "$(kc "$p")" \
			--create-resource-slice=false --timeout 10m >"$LAB_STATE/peer-$p.log" 2>&1 ||
			{ tail -30 "$LAB_STATE/peer-$p.log" >&2; die "liqoctl peer with $p failed (log: $LAB_STATE/peer-$p.log)"; }
	done
	log "peered: consumer with provider-a and provider-b"
}

# inventory: what exists in every cluster, as "CLUSTER KIND NAMESPACE/NAME"
# lines: every object of Liqo's API groups (*.liqo.io), every pod, and
# the Deployments, DaemonSets, Services, Secrets, ConfigMaps and
# ServiceAccounts of the liqo and liqo-tenant-* namespaces.
inventory() {
	local c r ns
	for c in "${CLUSTERS[@]}"; do
		for r in $(kubectl_ "$c" api-resources -o name | grep '\.liqo\.io$' | sort) pods; do
			kubectl_ "$c" get "$r" -A --no-headers -o custom-columns=NS:.metadata.namespace,NAME:.metadata.name 2>/dev/null |
				awk -v c="$c" -v r="$r" '{ print c, r, ($1 == "<none>" ? "" : $1 "/") $2 }'
		done
		for ns in $(kubectl_ "$c" get namespaces -o name | sed 's|namespace/||' | grep -E '^liqo(-tenant-.*)?$'); do
			for r in deployments daemonsets services secrets configmaps serviceaccounts; do
				kubectl_ "$c" get "$r" -n "$ns" --no-headers -o custom-columns=NAME:.metadata.name 2>/dev/null |
					awk -v c="$c" -v r="$r" -v ns="$ns" '{ print c, r, ns "/" $1 }'
			done
		done
	done
}

# diagnose: what a failed run needs to be understood, before down removes
# it: per cluster the pods, the latest events, Liqo's networking objects,
# and the tails of every process's and container's log.
diagnose() {
	local c f
	for c in "${CLUSTERS[@]}"; do
		[ -f "$(kc "$c")" ] || continue
		echo "==== $c: pods"
		kubectl_ "$c" get pods -A -o wide 2>&1 || true
		echo "==== $c: events (latest 30)"
		kubectl_ "$c" get events -A --sort-by=.lastTimestamp 2>&1 | tail -30 || true
		echo "==== $c: Liqo networking"
		kubectl_ "$c" get foreignclusters,connections.networking.liqo.io,gatewayservers.networking.liqo.io,gatewayclients.networking.liqo.io,internalfabrics,genevetunnels -A 2>&1 || true
		for f in "$LAB_STATE/$c"/*.log "$LAB_STATE/$c/runner/pods"/*/*.log; do
			[ -f "$f" ] || continue
			echo "==== $f (last 15 lines)"
			tail -15 "$f"
		done
	done
}

usage() {
	echo "usage: $0 build | up | install | peer | all | down | kubeconfig CLUSTER | exec CLUSTER NS POD CONTAINER -- ARGV... | logs CLUSTER NS POD CONTAINER | liqoctl CLUSTER ARGS... | inventory | diagnose | bin" >&2
	exit 2
}

case ${1:-} in
build) build ;;
up) up ;;
install) install ;;
peer) peer ;;
all)
	build
	up
	install
	peer
	;;
down) down ;;
inventory) require_up && inventory ;;
diagnose) diagnose ;;
bin) echo "$LIQO_BIN $(k8s_bin) $LAB_STATE/bin" ;;
kubeconfig)
	[ $# -eq 2 ] || usage
	check_cluster "$2"
	kc "$2"
	;;
exec)
	[ $# -ge 6 ] || usage
	check_cluster "$2"
	c=$2 ns=$3 pod=$4 ctr=$5
	shift 5
	[ "${1:-}" != -- ] || shift
	[ $# -gt 0 ] || usage
	exec "$LAB_STATE/bin/podrunner" exec --state-dir "$LAB_STATE/$c/runner" --namespace "$ns" --pod "$pod" --container "$ctr" -- "$@"
	;;
logs)
	[ $# -eq 5 ] || usage
	check_cluster "$2"
	exec "$LAB_STATE/bin/podrunner" logs --state-dir "$LAB_STATE/$2/runner" --namespace "$3" --pod "$4" --container "$5"
	;;
liqoctl)
	[ $# -ge 2 ] || usage
	check_cluster "$2"
	c=$2
	shift 2
	exec "$LIQO_BIN/liqoctl" --kubeconfig "$(kc "$c")" "$@"
	;;
*) usage ;;
esac
