#!/usr/bin/env bash
# cluster.sh: real Kubernetes API servers for tests, one per named cluster.
#
#   cluster.sh build          build kube-apiserver, etcd, kubectl and helm once,
#                             and kube-controller-manager, kube-scheduler and
#                             kube-proxy for test/liqo/lab.sh (cached under
#                             $K8S_CACHE, ~6 min on 2 cores)
#   cluster.sh bin            print the directory that holds (or will hold) them
#   cluster.sh up NAME        start etcd + kube-apiserver for cluster NAME, wait
#                             until ready, print the admin kubeconfig path last
#   cluster.sh down NAME|all  stop it (or every cluster) and remove its state
#   cluster.sh restart NAME [SECONDS]
#                             stop NAME's kube-apiserver, wait SECONDS (default
#                             0), start it again on the same address and port
#                             with the same etcd, wait until ready; run it in
#                             the network namespace `up` ran in
#   cluster.sh list           the clusters that run
#
# Only etcd and kube-apiserver run: no controller-manager, scheduler or
# kubelet. So nothing garbage-collects, no ServiceAccount token controller
# runs (TokenRequest works), namespaces never finish deleting, Services get
# no LoadBalancer status and no EndpointSlices appear. Tests create or patch
# what they need, and register webhooks by url.
#
# Environment:
#   K8S_ADDRESS   address to listen on (default 127.0.0.1, in the network
#                 namespace the script runs in); it is in the serving
#                 certificate and the kubeconfig
#   K8S_STATE     state directory (default /tmp/liqo-relay-k8s)
#   K8S_CACHE     binary cache (default ${XDG_CACHE_HOME:-$HOME/.cache}/liqo-relay);
#                 a build is reused only while the tools module (go.mod, go.sum,
#                 sources) hashes to its .tools-hash
#   K8S_TTL       seconds after which a watchdog stops the cluster (default 3600)
#   K8S_APISERVER_ARGS
#                 extra kube-apiserver flags, split on white space, kept for
#                 restart (e.g. --allow-privileged=true for pods with
#                 privileged containers, as Liqo's gateway has)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
K8S_VERSION=v1.37.2
K8S_CACHE=${K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/liqo-relay}
BIN=$K8S_CACHE/k8s-$K8S_VERSION/bin
K8S_STATE=${K8S_STATE:-/tmp/liqo-relay-k8s}
K8S_ADDRESS=${K8S_ADDRESS:-127.0.0.1}
K8S_TTL=${K8S_TTL:-3600}

die() { echo "cluster.sh: $*" >&2; exit 1; }

# K8S_LDFLAGS stamp the binaries with the version a release build has:
# without them kube-apiserver reports v0.0.0-master (a chart's kubeVersion
# then refuses it), and helm renders for Kubernetes 1.20 by default.
K8S_MINOR=${K8S_VERSION#v1.}
K8S_MINOR=${K8S_MINOR%%.*}
K8S_LDFLAGS="-X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 \
-X k8s.io/component-base/version.gitMinor=$K8S_MINOR -X k8s.io/component-base/version.gitTreeState=clean \
-X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION -X k8s.io/client-go/pkg/version.gitMajor=1 \
-X k8s.io/client-go/pkg/version.gitMinor=$K8S_MINOR \
-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$K8S_MINOR"

# tools_hash identifies what the binaries are built from: the tools
# module's go.mod, go.sum and sources, and the link flags. A change to any
# of them rebuilds.
tools_hash() {
	(cd "$HERE/tools" && cat go.mod go.sum $(find . -name '*.go' | LC_ALL=C sort) && echo "$K8S_LDFLAGS") |
		sha256sum | cut -c1-16
}

have_bins() {
	for b in kube-apiserver etcd kubectl helm kube-controller-manager kube-scheduler kube-proxy; do [ -x "$BIN/$b" ] || return 1; done
	[ "$(cat "$BIN/.tools-hash" 2>/dev/null)" = "$(tools_hash)" ]
}

# build compiles the binaries from the Go module proxy in the tools module
# (test/k8s/tools, its own go.mod), into a temporary directory that is moved
# into place only when everything built, so an interrupted build is redone.
build() {
	have_bins && return 0
	echo "cluster.sh: building kube-apiserver $K8S_VERSION, kube-controller-manager, kube-scheduler, kube-proxy, etcd, kubectl and helm into $BIN (once per machine, about 6 minutes on 2 cores with the module cache filled)" >&2
	mkdir -p "$K8S_CACHE"
	local tmp
	tmp=$(mktemp -d "$K8S_CACHE/build.XXXXXX")
	(cd "$HERE/tools" && GOFLAGS=-mod=mod go build -trimpath -ldflags "$K8S_LDFLAGS" -o "$tmp/" \
		k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
		k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kube-proxy ./etcd \
		k8s.io/kubernetes/cmd/kubectl helm.sh/helm/v3/cmd/helm) >&2 ||
		{ rm -rf "$tmp"; die "building the test binaries failed"; }
	tools_hash >"$tmp/.tools-hash"
	mkdir -p "$(dirname "$BIN")"
	rm -rf "$BIN"
	mv "$tmp" "$BIN"
	echo "cluster.sh: built into $BIN" >&2
}

# free_port prints a TCP port nobody listens on at $K8S_ADDRESS.
free_port() {
	local p
	for _ in $(seq 200); do
		p=$((20000 + RANDOM % 40000))
		if ! ss -Htln "sport = :$p" | grep -q .; then echo "$p"; return; fi
	done
	die "no free port found"
}

pki() {
	local d=$1 addr=$2
	mkdir -p "$d/pki"
	cd "$d/pki"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj "/CN=liqo-relay-test-ca" -keyout ca.key -out ca.crt 2>/dev/null
	local san="IP:$addr,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:10.96.0.1"
	case $addr in 127.0.0.1) ;; *) san="$san,IP:127.0.0.1" ;; esac
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-subj "/CN=kube-apiserver" -keyout serving.key -out serving.csr 2>/dev/null
	openssl x509 -req -in serving.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
		-extfile <(printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth' "$san") -out serving.crt 2>/dev/null
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-subj "/O=system:masters/CN=admin" -keyout admin.key -out admin.csr 2>/dev/null
	openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
		-extfile <(printf 'extendedKeyUsage=clientAuth') -out admin.crt 2>/dev/null
	openssl genrsa -out sa.key 2048 2>/dev/null
	openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
	cd - >/dev/null
}

kubeconfig() {
	local d=$1 name=$2 url=$3
	cat >"$d/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: $name
  cluster:
    server: $url
    certificate-authority-data: $(base64 -w0 <"$d/pki/ca.crt")
users:
- name: admin
  user:
    client-certificate-data: $(base64 -w0 <"$d/pki/admin.crt")
    client-key-data: $(base64 -w0 <"$d/pki/admin.key")
contexts:
- name: $name
  context: {cluster: $name, user: admin}
current-context: $name
EOF
}

wait_ready() {
	local d=$1
	for _ in $(seq 600); do
		if "$BIN/kubectl" --kubeconfig "$d/kubeconfig" get --raw /readyz >/dev/null 2>&1; then
			return 0
		fi
		kill -0 "$(cat "$d/apiserver.pid")" 2>/dev/null || { tail -20 "$d/apiserver.log" >&2; die "kube-apiserver of $2 exited"; }
		sleep 0.2
	done
	tail -20 "$d/apiserver.log" >&2
	die "kube-apiserver of $2 not ready after 120 s"
}

stop_pid() {
	local f=$1
	[ -f "$f" ] || return 0
	local pid
	pid=$(cat "$f")
	kill "$pid" 2>/dev/null || true
	for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
	kill -9 "$pid" 2>/dev/null || true
}

down_one() {
	local name=$1 d=$K8S_STATE/$1
	[ -d "$d" ] || return 0
	if [ -z "${K8S_WATCHDOG:-}" ] && [ -f "$d/watchdog.pid" ]; then
		kill -- "-$(cat "$d/watchdog.pid")" 2>/dev/null || true
	fi
	stop_pid "$d/apiserver.pid"
	stop_pid "$d/etcd.pid"
	rm -rf "$d"
	echo "cluster.sh: $name down" >&2
}

# start_apiserver starts the kube-apiserver of the cluster in $1 on the
# address and ports recorded there (by up).
start_apiserver() {
	local d=$1 addr host api_port etcd_port extra=()
	addr=$(cat "$d/address")
	[ ! -s "$d/apiserver_args" ] || read -r -a extra <"$d/apiserver_args"
	api_port=$(cat "$d/port")
	etcd_port=$(cat "$d/etcd_port")
	host=$addr
	[[ $addr == *:* ]] && host="[$addr]"
	"$BIN/kube-apiserver" --etcd-servers "http://$host:$etcd_port" \
		--bind-address "$addr" --secure-port "$api_port" \
		--advertise-address "$addr" --endpoint-reconciler-type none \
		--tls-cert-file "$d/pki/serving.crt" --tls-private-key-file "$d/pki/serving.key" \
		--client-ca-file "$d/pki/ca.crt" \
		--service-account-issuer "https://kubernetes.default.svc" \
		--service-account-key-file "$d/pki/sa.pub" --service-account-signing-key-file "$d/pki/sa.key" \
		--service-cluster-ip-range 10.96.0.0/16 --authorization-mode RBAC \
		--cert-dir "$d/certs" --profiling=false --enable-priority-and-fairness=false \
		--v 0 "${extra[@]}" >>"$d/apiserver.log" 2>&1 &
	echo $! >"$d/apiserver.pid"
}

# restart stops the cluster's kube-apiserver, waits $2 seconds and starts
# it again as it was (etcd keeps running, so every object stays).
restart() {
	local name=$1 down=${2:-0} d=$K8S_STATE/$1
	[ -f "$d/etcd_port" ] || die "cluster $name does not run (no state in $d)"
	stop_pid "$d/apiserver.pid"
	sleep "$down"
	start_apiserver "$d"
	wait_ready "$d" "$name"
	echo "cluster.sh: $name kube-apiserver restarted" >&2
}

up() {
	local name=$1
	[[ $name =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ ]] || die "cluster name $name: use lower-case letters, digits and -"
	build
	local d=$K8S_STATE/$name
	[ ! -d "$d" ] || die "cluster $name already runs (state in $d); cluster.sh down $name first"
	mkdir -p "$d"
	local addr=$K8S_ADDRESS host=$K8S_ADDRESS
	[[ $addr == *:* ]] && host="[$addr]"
	pki "$d" "$addr"
	local etcd_port peer_port api_port
	etcd_port=$(free_port)
	peer_port=$(free_port)
	api_port=$(free_port)
	"$BIN/etcd" --name "$name" --data-dir "$d/etcd" --log-level error --unsafe-no-fsync \
		--listen-client-urls "http://$host:$etcd_port" --advertise-client-urls "http://$host:$etcd_port" \
		--listen-peer-urls "http://$host:$peer_port" --initial-advertise-peer-urls "http://$host:$peer_port" \
		--initial-cluster "$name=http://$host:$peer_port" >"$d/etcd.log" 2>&1 &
	echo $! >"$d/etcd.pid"
	echo "$addr" >"$d/address"
	echo "$api_port" >"$d/port"
	echo "$etcd_port" >"$d/etcd_port"
	echo "${K8S_APISERVER_ARGS:-}" >"$d/apiserver_args"
	start_apiserver "$d"
	# The watchdog stops the cluster after K8S_TTL seconds, so a test that
	# dies without cleaning up leaves nothing running for long.
	K8S_STATE=$K8S_STATE K8S_WATCHDOG=1 setsid bash -c 'sleep "$1"; exec "$2" down "$3"' watchdog \
		"$K8S_TTL" "$HERE/cluster.sh" "$name" </dev/null >/dev/null 2>&1 &
	echo $! >"$d/watchdog.pid"
	kubeconfig "$d" "$name" "https://$host:$api_port"
	wait_ready "$d" "$name"
	echo "cluster.sh: $name up at https://$host:$api_port" >&2
	echo "$d/kubeconfig"
}

case ${1:-} in
build) build ;;
bin) echo "$BIN" ;;
up) up "${2:?usage: cluster.sh up NAME}" ;;
down)
	n=${2:?usage: cluster.sh down NAME|all}
	if [ "$n" = all ]; then
		for d in "$K8S_STATE"/*/; do if [ -d "$d" ]; then down_one "$(basename "$d")"; fi; done
	else
		down_one "$n"
	fi
	;;
restart) restart "${2:?usage: cluster.sh restart NAME [SECONDS]}" "${3:-0}" ;;
list) for d in "$K8S_STATE"/*/; do if [ -f "$d/port" ]; then echo "$(basename "$d") https://$(cat "$d/address"):$(cat "$d/port")"; fi; done ;;
*)
	echo "usage: $0 build | bin | up NAME | down NAME|all | restart NAME [SECONDS] | list" >&2
	exit 2
	;;
esac
