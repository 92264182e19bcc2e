#!/usr/bin/env bash
# perf/scenarios/ceiling.sh: the physical limit of a tunnel pair on this
# machine, from two benchmarks in test/bench:
#
#   BenchmarkCeilingAEAD  ChaCha20-Poly1305 as wireguard-go calls it, one
#                         core (-cpu 1): seal one 1400-byte packet and open
#                         it again (sub-benchmark seal-open; seal and open
#                         alone too). No root needed.
#   BenchmarkCeilingTUN   one TUN write and one TUN read of the same
#                         1400-byte packet, with one pass through the
#                         kernel's forwarding between them, no crypto, in a
#                         namespace of its own: plain TUN, the relay's
#                         device (virtio-net header) one packet per call,
#                         and the same device with 128-packet batches that
#                         its GRO coalesces. Needs root; without it the
#                         benchmark skips and the tun figures are null.
#
# Each CEIL_COUNT times (3 quick, 5 full), medians kept. nsPerPacket is
# wall time per packet (ns/op); cpuNsPerPacket the benchmark process's CPU
# time per packet, steadier on a shared machine, and fromCpuTime the
# ceilings made from it. The ceilings, with
# both ends of the pair on this one machine, so that every delivered packet
# costs one seal (sender) and one open (receiver) of this machine's CPU,
# and the cores work in parallel:
#
#   ceilingMbps        = cores x 1400 x 8 bits / aead.nsPerPacket            (x 1000: Mbit/s)
#   ceilingWithTunMbps = cores x 1400 x 8 bits / (aead.nsPerPacket + tun.nsPerPacket)
#
# Per delivered packet the sending relay reads it from its TUN, seals it
# and sends it on UDP; the receiving relay receives it on UDP, opens it and
# writes it into its TUN. tun.nsPerPacket is one TUN write plus one TUN
# read, so aead + tun is the crypto and TUN cost of one delivered packet.
# tun.nsPerPacket is the relay's device one packet per call (nothing
# coalesces); ceilingWithTunBatchedMbps uses the 128-packet batches (the
# best case of the offload path) instead. These are upper bounds from
# crypto and TUN alone: the UDP sockets (sendmmsg/recvmmsg, the kernel's
# UDP and veth path), wireguard-go's queues and goroutine hand-offs, the
# pods' own TCP and iperf3 are all excluded, and the payload counted is
# the whole 1400-byte inner packet (TCP goodput would be 1360 of it).
#
# Env: CEIL_COUNT (5), CEIL_BENCHTIME per benchmark run (1s), RESULT
# (default). Writes $PERF_RESULTS/ceiling-$RESULT.json.
source "$(dirname "$0")/../lib.sh"
source "$PERF_ROOT/analyze/common.sh"

COUNT=${CEIL_COUNT:-5}
BT=${CEIL_BENCHTIME:-1s}
NAME=ceiling-${RESULT:-default}
PKT=1400
command -v go >/dev/null || die "needs go"
command -v jq >/dev/null || die "needs jq"
[ "$(id -u)" = 0 ] || log "warning: not root: BenchmarkCeilingTUN skips, the tun figures are null"
mkdir -p "$PERF_RESULTS"
W=$(mktemp -d /tmp/liqo-relay-ceiling.XXXXXX)
trap 'rm -rf "$W"' EXIT

BENCH='^BenchmarkCeiling(AEAD|TUN)$'
GOCMD="go test -run '^\$' -bench '$BENCH' -benchtime $BT -cpu 1 -count $COUNT ./test/bench/"
log "running: $GOCMD"
(cd "$REPO_ROOT" && go test -run '^$' -bench "$BENCH" -benchtime "$BT" -cpu 1 -count "$COUNT" ./test/bench/) \
	>"$W/bench.txt" 2>&1 || { cat "$W/bench.txt" >&2; die "the benchmarks failed"; }
grep -E '^(Benchmark|--- SKIP|    )' "$W/bench.txt" >&2 || true

# metric SUB UNIT: the UNIT values (ns/op, ns/packet, packets/read) of
# sub-benchmark SUB (e.g. CeilingAEAD/seal-open), one per run, then their
# summary (stats.awk: n, p50, ...).
metric() {
	awk -v sub_="Benchmark$1" -v unit="$2" '
		{ name = $1; sub(/-[0-9]+$/, "", name) }
		name == sub_ { for (i = 3; i <= NF; i++) if ($i == unit) print $(i - 1) }' "$W/bench.txt" >"$W/m"
	awk -f "$ANALYZE/stats.awk" "$W/m"
}
aead=$(metric CeilingAEAD/seal-open ns/op)
[ "$(jq .n <<<"$aead")" -gt 0 ] || die "no BenchmarkCeilingAEAD/seal-open figure in the output"

jq -n --arg name "$NAME" --arg when "$(date -u +%FT%TZ)" --argjson machine "$(machine_json)" \
	--arg cmd "${PERF_COMMAND:-perf/scenarios/ceiling.sh}" --arg gocmd "$GOCMD" \
	--argjson count "$COUNT" --arg bt "$BT" --argjson pkt "$PKT" --argjson cores "$(nproc)" \
	--argjson aead "$aead" --argjson seal "$(metric CeilingAEAD/seal ns/op)" --argjson open "$(metric CeilingAEAD/open ns/op)" \
	--argjson plain "$(metric CeilingTUN/plain ns/packet)" --argjson vnet "$(metric CeilingTUN/vnethdr ns/packet)" \
	--argjson batch "$(metric CeilingTUN/vnethdr-batch ns/packet)" --argjson bppr "$(metric CeilingTUN/vnethdr-batch packets/read)" \
	--argjson caead "$(metric CeilingAEAD/seal-open cpu-ns/packet)" --argjson cplain "$(metric CeilingTUN/plain cpu-ns/packet)" \
	--argjson cvnet "$(metric CeilingTUN/vnethdr cpu-ns/packet)" --argjson cbatch "$(metric CeilingTUN/vnethdr-batch cpu-ns/packet)" \
	--arg skipped "$(grep -A1 -- '--- SKIP: BenchmarkCeilingTUN' "$W/bench.txt" | tail -1 | sed 's/^ *//')" '
	def mbps(ns): if ns == null then null else ($cores * $pkt * 8 * 1000 / ns | round) end;
	def add(a; b): if a == null or b == null then null else a + b end;
	{scenario: "ceiling", name: $name, when: $when, command: $cmd, machine: $machine,
	 settings: {benchmarks: $gocmd, count: $count, benchtime: $bt, cpu: 1, packetBytes: $pkt, tunMTU: 1420,
	            statistic: "median of count runs (p50, nearest rank)"},
	 aead: {nsPerPacket: $aead.p50, bytesPerSecondPerCore: ($pkt * 1e9 / $aead.p50 | round), packetBytes: $pkt,
	        sealNsPerPacket: $seal.p50, openNsPerPacket: $open.p50, cpuNsPerPacket: $caead.p50,
	        what: "golang.org/x/crypto/chacha20poly1305 Seal then Open of one 1400-byte packet, in place, 12-byte counter nonce, no additional data, one core",
	        runs: $aead},
	 tun: {nsPerPacket: $vnet.p50,
	       what: "one TUN write + one TUN read (+ one IPv4 forward) per packet, no crypto; nsPerPacket is the relay device (virtio-net header) one packet per call",
	       skipped: (if $skipped == "" then null else $skipped end),
	       cpuNsPerPacket: $cvnet.p50,
	       variants: {plain: {nsPerPacket: $plain.p50, cpuNsPerPacket: $cplain.p50, runs: $plain},
	                  vnethdr: {nsPerPacket: $vnet.p50, cpuNsPerPacket: $cvnet.p50, runs: $vnet},
	                  vnethdrBatch: {nsPerPacket: $batch.p50, cpuNsPerPacket: $cbatch.p50, packetsPerWrite: 128, packetsPerRead: $bppr.p50, runs: $batch}}},
	 cores: $cores,
	 ceilingMbps: mbps($aead.p50),
	 ceilingWithTunMbps: mbps(add($aead.p50; $vnet.p50)),
	 ceilingWithTunBatchedMbps: mbps(add($aead.p50; $batch.p50)),
	 fromCpuTime: {ceilingMbps: mbps($caead.p50), ceilingWithTunMbps: mbps(add($caead.p50; $cvnet.p50)),
	               ceilingWithTunBatchedMbps: mbps(add($caead.p50; $cbatch.p50))},
	 formula: {
	   ceilingMbps: "cores * packetBytes * 8 * 1000 / aead.nsPerPacket",
	   ceilingWithTunMbps: "cores * packetBytes * 8 * 1000 / (aead.nsPerPacket + tun.nsPerPacket)",
	   ceilingWithTunBatchedMbps: "cores * packetBytes * 8 * 1000 / (aead.nsPerPacket + tun.variants.vnethdrBatch.nsPerPacket)",
	   fromCpuTime: "the same three with cpuNsPerPacket (the benchmark process CPU time per packet, which other tenants inflate less than wall time) for nsPerPacket",
	   perDeliveredPacket: "sender: TUN read + seal + UDP send; receiver: UDP receive + open + TUN write; both on this machine, cores in parallel",
	   excluded: "UDP sockets and the kernel UDP/veth path, wireguard-go queues and hand-offs, the pods TCP stack and iperf3: an upper bound from crypto and TUN alone; payload counted is the whole 1400-byte inner packet"}}' \
	>"$PERF_RESULTS/$NAME.json"
log "wrote $PERF_RESULTS/$NAME.json"
jq -c '{aeadNs: .aead.nsPerPacket, aeadMBpsPerCore: (.aead.bytesPerSecondPerCore / 1e6 | round), tunNs: .tun.nsPerPacket,
	tunBatchNs: .tun.variants.vnethdrBatch.nsPerPacket, cores, ceilingMbps, ceilingWithTunMbps, ceilingWithTunBatchedMbps, fromCpuTime}' "$PERF_RESULTS/$NAME.json"
