#!/usr/bin/env bash
# perf/table.sh [MODE [PART]]: the results table (markdown) from
# perf/results/*-MODE.json (default: quick). PART all (the default) is the
# whole table; matrix is the throughput matrix's tables alone (its cells,
# flows, UDP rates and profiles), with the commit they were measured at;
# cells is its first table alone (perf/docs.sh puts them into
# docs/performance.md and README.md).
source "$(dirname "$0")/lib.sh"
source "$PERF_ROOT/targets.sh"
M=${1:-quick}
PERF_GATE_MODE=$M
PART=${2:-all}
case $PART in all | matrix | cells) ;; *) die "usage: $0 [MODE [all|matrix|cells]]" ;; esac
R=$PERF_RESULTS
f() { if [ -f "$R/$1-$M.json" ]; then echo "$R/$1-$M.json"; fi; }
na="not measured"
fmt() { jq -r "$1 // \"$na\"" "$2" 2>/dev/null || echo "$na"; }

lat=$(f latency) fo=$(f failover) tp=$(f throughput) fl=$(f flapping) ce=$(f wanem-ceiling) ft=$(f failover-tcp)
any=${lat:-${fo:-${tp:-${fl:-${ce:-$ft}}}}}
sc=$(f scale) red=$(f failover-redundant) redtcp=$(f failback-tcp-redundant) st=$(f scale-star)
fb=$(f failback-tcp) fbc=$(f failback-tcp-control) fbb=$(f failback-tcp-bbr)
tm=$(f timers) i20=$(f failover-interval-20ms) i10=$(f failover-interval-10ms)
mx=$(f matrix) cl=$(f ceiling) sk=$(f soak)
i20w=$(f failover-interval-20ms-wan) i10w=$(f failover-interval-10ms-wan)
any=${any:-${sc:-${red:-${redtcp:-${st:-${fb:-${tm:-${i20:-${i10:-${mx:-${cl:-$sk}}}}}}}}}}}
[ -n "$any" ] || die "no results for mode $M in $R"
# Every result names the commit it was measured at; list them all, so a
# table mixing commits, or dirty trees, says so.
commits=$(for x in "$R"/*-"$M".json "$R"/failover-probe-*.json; do
	[ -f "$x" ] || continue
	[ "$M" = full ] || [[ $x != */failover-probe-* ]] || continue
	jq -r '"\(.machine.commit) \(.name) at \(.when), load \(.machine.loadavg | tostring | split(" ")[0])"' "$x"
done | awk '{c = $1; $1 = ""; sub(/^ /, ""); n[c] = n[c] (n[c] == "" ? "" : ", ") $0} END {for (c in n) print c " (" n[c] ")"}' | sort | paste -sd';' | sed 's/;/; /g')
if [ "$PART" = all ]; then
	echo "Measured on $(jq -r '"\(.machine.cpus) vCPU \(.machine.cpu), kernel \(.machine.kernel)"' "$any"), with \`$(jq -r .command "$any")\`; commit, time and 1-minute load of each result: $commits."
	echo
	echo "| what | result | target |"
	echo "|---|---|---|"
	if [ -n "$lat" ]; then
		echo "| pod-to-pod RTT, direct path (A-B 10 ms one way) p50 / p99 | $(fmt '"\(.rttMs.podToPodDirect.p50) / \(.rttMs.podToPodDirect.p99) ms"' "$lat") | |"
		echo "| pod-to-pod RTT, consumer path (25 + 25 ms one way) p50 / p99 | $(fmt '"\(.rttMs.podToPodConsumer.p50) / \(.rttMs.podToPodConsumer.p99) ms"' "$lat") | |"
		echo "| relay's added RTT, no WAN delay, difference of medians / of means | $(fmt '"\(.zeroDelay.relayAddedMsP50) / \(.zeroDelay.relayAddedMsMean) ms"' "$lat") | |"
	fi
	if [ -n "$tp" ]; then
		for k in veth wireguard-go relay-tun relay-tun-translated relay-netstack wireguard-go-offload relay-tun-offload limited-direct limited-consumer; do
			jq -e ".mbps[\"$k\"]" "$tp" >/dev/null 2>&1 || continue
			case $k in
			limited-*) cond=$(jq -r '.settings.limited | "rate-limited WAN, ab \(.ab), ac \(.ac), cb \(.cb)"' "$tp") ;;
			*-offload) cond="plain veth, offloads off, sender in A's namespace, MTU $(jq -r .settings.unlimitedMtu "$tp")" ;;
			*) cond="plain veth, offloads off, sender in pod-a, MTU $(jq -r .settings.unlimitedMtu "$tp")" ;;
			esac
			echo "| TCP goodput $k ($cond), median | $(fmt ".mbps[\"$k\"] | if . then \"\(.p50|round) Mbit/s (n=\(.n), \(.min|round)..\(.max|round))\" else null end" "$tp") | |"
		done
	fi
	probes=()
	[ "$M" != full ] || probes=("$R"/failover-probe-*.json) # make perf runs the probe variants
	for fo in "$R/failover-$M.json" "${probes[@]}"; do
		[ -f "$fo" ] || continue
		echo "| failover $(jq -r '.name' "$fo") ($(jq -r '.settings.health | if . == "" then "default probes: 100ms x 3" else . end' "$fo")): interruption median / p95 / max over $(jq -r .settings.cuts "$fo") cuts | $(fmt '"\(.summary.interruptionMs.p50) / \(.summary.interruptionMs.p95) / \(.summary.interruptionMs.max) ms"' "$fo") | $(target_text failover) |"
		echo "| failover $(jq -r '.name' "$fo"): failback after restore, median | $(fmt '"\(.summary.failbackAfterRestoreMs.p50) ms; packets lost at failback: max gap \(.summary.failbackInterruptionMaxMs) ms"' "$fo") | |"
	done
	# The interval rows: on a direct link with no added delay against fixed
	# targets, and on the testbed's 10 ms WAN link against the detector's
	# physical limit (detect time + one RTT + jitter margin).
	for x in $i20 $i10 $(f failover-interval-20ms-wan) $(f failover-interval-10ms-wan); do
		echo "| failover at \`$(jq -r .settings.health "$x")\` (detect $(jq -r '.settings.health | capture("interval: (?<i>[0-9]+)ms").i | tonumber * 3' "$x") ms), direct link $(jq -r '.settings.wan.ab // "10ms"' "$x") one way: interruption median / p95 / max over $(jq -r .settings.cuts "$x") cuts$(jq -r 'if .summary.detectBound.ms then "; the limit: detect \(.summary.detectBound.detectMs) + RTT \(.summary.detectBound.rttMs) + jitter margin \(.summary.detectBound.jitterMarginMs) = \(.summary.detectBound.ms) ms" else "" end' "$x") | $(fmt '"\(.summary.interruptionMs.p50) / \(.summary.interruptionMs.p95) / \(.summary.interruptionMs.max) ms"' "$x") | $(jq -r 'if (.name|test("-wan-")) then "wan" elif (.settings.health|test("10ms")) then "10" else "20" end' "$x" | sed "s/^wan$/$(target_text detect-wan)/; s/^10$/$(target_text interval-10ms)/; s/^20$/$(target_text interval-20ms)/") |"
	done
	if [ -n "$tm" ]; then
		jq -r --arg na "$na" '.settings.secondsPerCase as $s | .cases | to_entries[] | .value |
			"| path switches at `interval: 20ms`, \(.case)\(if .load then " (\(.load))" else "" end), \($s) s: false (link in time) / with the link late; relay A wake delay over 5 ms, p99; stalls | \(.falseSwitches) / \(.linkLateSwitches); \(.schedule.a.wake.over5ms*1000|round/10) %, ≤ \(.schedule.a.wake.p99LeMs // "> 1000") ms; \(.schedule.a.stalls) (\(.schedule.a.stallSeconds) s) | '"$(target_text timers)"' |"' "$tm" 2>/dev/null ||
			echo "| timers | $na | |"
	fi
	if [ -n "$ft" ]; then
		echo "| TCP goodput dip at a cut ($(jq -r '.settings.congestionControl // "the machine'"'"'s congestion control"' "$ft")): duration, min (iperf3, 100 ms intervals; below 10% of the pre-cut median $(fmt '.dip.preCutMedianMbps|round' "$ft") Mbit/s) | $(fmt '"\(.dip.durationMs) ms, \(.dip.minMbps) Mbit/s; after the restore \(.failbackDip.durationMs) ms; relay A failed back \((.switches[] | select(.reason=="failback") | .atS) - .restoreAtS | . * 1000 | round) ms after it"' "$ft") | |"
	fi
	for x in $fb $fbc $fbb; do
		echo "| TCP after a restore$(jq -r 'if .settings.control then " (control: no cut, one path)" else "" end' "$x"), $(jq -r '"\(.settings.restores) windows of \(.settings.settleS) s, flow paced at \(.settings.rate), \(.settings.congestionControl // "the machine'"'"'s congestion control")"' "$x"): goodput dip p50 / p95 / max; retransmits per window p50 / max (one-path baseline); reordering seen by the sender | $(fmt '"\(.summary.dipMs.p50) / \(.summary.dipMs.p95) / \(.summary.dipMs.max) ms; \(.summary.retransmitsPerRestore.p50) / \(.summary.retransmitsPerRestore.max) (\(.summary.baselineRetransmitsPerWindow)); \([.restores[].tcp.TcpExtTCPSACKReorder // 0] | add) SACK reorder events"' "$x") | $(jq -r --arg t "$(target_text failback)" 'if .settings.congestionControl == "bbr" then "none (BBR decays on the slower path, docs/failover.md)" elif .settings.control then "" else $t end' "$x") |"
	done
	if [ -n "$fb" ]; then
		echo "| TCP goodput dip at a cut, one path at a time (no redundant sending), $(jq -r '"\(.settings.restores) cuts"' "$fb"): p50 / p95 / max | $(fmt '.summary.cutDipMs | if . then "\(.p50) / \(.p95) / \(.max) ms" else null end' "$fb") | |"
	fi
	if [ -n "$red" ]; then
		echo "| failover with \`redundancy: duplicate\` (a 5 ms ping stream over $(jq -r .settings.cuts "$red") cuts of direct): packets lost / interruption median, max | $(fmt '"\(.summary.lostPackets) / \(.summary.interruptionMs.p50), \(.summary.interruptionMs.max) ms"' "$red") | $(target_text redundant-lost) |"
	fi
	if [ -n "$redtcp" ]; then
		echo "| TCP goodput dip at a cut with \`redundancy: duplicate\`, $(jq -r '"\(.settings.restores) cuts, flow paced at \(.settings.rate), \(.settings.congestionControl)"' "$redtcp") (below 10% of the pre-cut median): p50 / p95 / max; after the restores p95; retransmits per window p95 | $(fmt '"\(.summary.cutDipMs.p50) / \(.summary.cutDipMs.p95) / \(.summary.cutDipMs.max) ms; \(.summary.dipMs.p95) ms; \(.summary.retransmitsPerRestore.p95)"' "$redtcp") | $(target_text redundant-dip) |"
	fi
	if [ -n "$st" ]; then
		jq -r '.runs[] | "| scale, one relay with \(.peers) idle peers x \(.pathsPerPeer) paths (\(.hubPaths) directed paths), hub process alone: CPU / per 1000 paths / probes per path | \(.hubCpuPercent*100|round/100) % of a core / \(.hubCpuPercentPer1000Paths*100|round/100) % / \(.hubProbesPerSecondPerPath*100|round/100) req/s | '"$(target_text hub-cpu)"' |"' "$st" 2>/dev/null ||
			echo "| scale-star | $na | |"
	fi
	if [ -n "$fl" ]; then
		echo "| path switches, flapping direct link ($(jq -r .settings.seconds "$fl") s): ours / naive | $(fmt '"\(.lowestCost.switches) / \(.naive.switches) (stream loss \(.lowestCost.stream.loss) / \(.naive.stream.loss))"' "$fl") | $(target_text flapping) |"
	fi
	if [ -n "$ce" ]; then
		echo "| wanem ceiling, TCP (veth for reference) | $(fmt '"\(.tcpMbps.wanem.p50|round) Mbit/s (\(.tcpMbps.veth.p50|round))"' "$ce") | above any emulated rate |"
		echo "| wanem ceiling, UDP 64-byte packets (veth) | $(fmt '"\(.udpPps.wanem.p50|round) pps (\(.udpPps.veth.p50|round))"' "$ce") | |"
	fi
	if [ -n "$sc" ]; then
		jq -r '.runs[] | "| scale, \(.relays) netstack relays in one process (full mesh, 2 paths per peer, \(.paths) directed paths): CPU per relay / RSS per relay / probe traffic per path | \(.cpuPercentPerRelay*100|round/100) % of a core / \(.rssPerRelayMB*10|round/10) MB / \(.wireBytesPerSecondPerPath|round) B/s (requests and replies on the wire) | |"' "$sc" 2>/dev/null ||
			echo "| scale | $na | |"
	fi
	if [ -n "$sk" ]; then
		echo "| soak, $(jq -r '"\(.settings.minutes) min: bulk TCP and a 5 ms UDP stream, the direct link cut every 10 s, a reload every 30 s, a relay killed every 2 min"' "$sk"): datagrams lost outside the cut and kill windows / TCP reset / left after the last stop / leak verdict | $(fmt '.summary | "\(.lostOutsideWindows) / \(.tcpReset) / \(.leftovers) / \(.leakVerdict)"' "$sk") | $(if [ "$M" = full ]; then target_text soak; else target_text soak-smoke; fi) |"
	fi
	if [ -n "$cl" ]; then
		echo "| this machine's ceiling for a tunnel pair on its $(jq -r .cores "$cl") cores: ChaCha20-Poly1305 seal + open of a 1400-byte packet, one core; TUN write + read per packet, no crypto, one packet per call / batched; goodput bound by the cipher alone / with one TUN crossing per packet / batched (perf/scenarios/ceiling.sh: UDP sockets and queues excluded) | $(fmt '"\(.aead.nsPerPacket | round) ns (\(.aead.bytesPerSecondPerCore / 1e6 | round) MB/s per core); \(.tun.nsPerPacket | round) / \(.tun.variants.vnethdrBatch.nsPerPacket // null | if . then round else "-" end) ns; \(.ceilingMbps | round) / \(.ceilingWithTunMbps | round) / \(.ceilingWithTunBatchedMbps // null | if . then round else "-" end) Mbit/s"' "$cl") | upper bound |"
	fi

fi
# The throughput matrix: a table of its own, one row per cell.
if [ "$PART" != all ] && [ -z "$mx" ]; then die "no matrix result for mode $M in $R"; fi
if [ -n "$mx" ]; then
	ceil=$( [ -n "$cl" ] && jq -r .ceilingMbps "$cl" || echo null)
	[ "$PART" != all ] || echo
	echo "Throughput matrix, measured at commit $(jq -r .machine.commit "$mx") on $(jq -r '"\(.machine.cpus) vCPU \(.machine.cpu)"' "$mx"), $(jq -r .when "$mx"), 1-minute load $(jq -r '.machine.loadavg | split(" ")[0]' "$mx") ($(jq -r '.settings | "\(.link), MTU \(.mtu), \(.rounds) rounds of \(.secondsPerRun) s, order rotated every round, each tunnel in processes of its own"' "$mx")): TCP goodput, median Mbit/s; the relay's ratio to stock wireguard-go in the same round, median (range); CPU seconds per GB received, tunnel processes at A + B, medians; goodput as a share of the ceiling ($( [ "$ceil" = null ] && echo "not measured" || echo "$(printf '%.0f' "$ceil") Mbit/s, the cipher alone")). $(jq -r 'if .noise.mbps == null then "No noise figure: the run had no second stock run." else "Two identical stock runs differed by up to \(.noise.mbps * 1000 | round / 10) % in goodput and \(.noise.cpu * 1000 | round / 10) % in CPU per GB (the noise)." end' "$mx")"
	echo
	echo "| underlay offloads | sender | stock wireguard-go | relay --sockets std | relay | relay / stock | relay --sockets std / stock | CPU s/GB stock / std / relay | share of ceiling stock / relay | target |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
	jq -r --argjson ceil "$ceil" --arg tgt "$(target_text matrix); CPU $(target_text matrix-cpu)" '
		def mb: if . == null then "-" else round | tostring end;
		def rr: if . == null or .p50 == null then "-" else "\(.p50) (\(.min)..\(.max))" end;
		def cs: if . == null then "-" else (.total / 1000 * 100 | round / 100 | tostring) end;
		def share: if . == null or $ceil == null then "-" else (. / $ceil * 100 | round | tostring) + " %" end;
		.cells[] | .tunnels as $t |
		"| \(.offloads) | \(.sender) | \($t["wireguard-go"].mbps.p50 | mb) | \($t["relay-std"].mbps.p50 | mb) | \($t.relay.mbps.p50 | mb) | \($t.relay.vsStock.mbps | rr) | \($t["relay-std"].vsStock.mbps | rr) | \($t["wireguard-go"].cpuMsPerGB | cs) / \($t["relay-std"].cpuMsPerGB | cs) / \($t.relay.cpuMsPerGB | cs) | \($t["wireguard-go"].mbps.p50 | share) / \($t.relay.mbps.p50 | share) | \($tgt) |"' "$mx" 2>/dev/null || echo "| matrix | $na |"
	if [ "$PART" != cells ] && jq -e '.flows | length > 0' "$mx" >/dev/null 2>&1; then
		echo
		echo "Parallel TCP flows from pod-a (underlay offloads at their defaults, $(jq -r .settings.sideRounds "$mx") rotated rounds): goodput, median Mbit/s (ratio to stock in the same round)."
		echo
		echo "| flows | stock wireguard-go | relay --sockets std | relay |"
		echo "|---|---|---|---|"
		jq -r '.flows[] | .tunnels as $t | "| \(.flows) | \($t["wireguard-go"].mbps.p50 | round) | \($t["relay-std"].mbps.p50 // 0 | round) (\($t["relay-std"].vsStock.mbps.p50 // "-")) | \($t.relay.mbps.p50 // 0 | round) (\($t.relay.vsStock.mbps.p50 // "-")) |"' "$mx"
	fi
	if [ "$PART" != cells ] && jq -e '.udp | length > 0' "$mx" >/dev/null 2>&1; then
		echo
		echo "UDP from pod-a at fixed offered rates (underlay offloads at their defaults, $(jq -r .settings.sideRounds "$mx") rotated rounds): packets per second delivered, median, and loss, median %."
		echo
		echo "| payload | offered pps | stock wireguard-go | relay --sockets std | relay |"
		echo "|---|---|---|---|---|"
		jq -r 'def c: if . == null then "-" else "\(.deliveredPps.p50 | round) (\(.lossPercent.p50 * 100 | round / 100) %)" end;
			.settings.mtu as $mtu |
			.udp[] | .tunnels as $t | "| \(.size) B\(if .size + 28 > $mtu then " (over the \($mtu)-byte MTU: each datagram goes as two IP fragments)" else "" end) | \(.pps) | \($t["wireguard-go"] | c) | \($t["relay-std"] | c) | \($t.relay | c) |"' "$mx"
	fi
fi
# Where the rest goes: perf/profile-throughput.sh's summaries, one run per
# variant, written by hand (PERF_AB_OFFLOADS=O RESULT=O, below), not by
# make perf: each row names its commit.
profiles=()
for x in "$R"/profile-defaults.json "$R"/profile-off.json "$R"/profile-gso-off.json; do [ -f "$x" ] && profiles+=("$x"); done
if [ ${#profiles[@]} -gt 0 ] && [ "$PART" != cells ] && [ -n "$mx" ]; then
	echo
	echo "Where the CPU goes, one profiled run per variant (\`PERF_AB_OFFLOADS=O RESULT=O perf/profile-throughput.sh 8\` for each underlay O; perf record of the cpu-clock event on both tunnel processes, perf stat of the syscalls): goodput; the cipher's and copies' shares of the samples; read / write (TUN) and recvmmsg / sendmmsg (UDP) calls per MB received."
	echo
	echo "| underlay offloads, sender | variant | Mbit/s | cipher | copies | TUN read / write per MB | recvmmsg / sendmmsg per MB | commit |"
	echo "|---|---|---|---|---|---|---|---|"
	for x in "${profiles[@]}"; do
		jq -r '.settings as $s | .machine.commit as $c | .variants | to_entries[] |
			"| \($s.underlayOffloads // "off"), \(if $s.from == "pod" then "pod" else "relay" end) | \(.key) | \(.value.mbps | round) | \(.value.cipherShare * 100 | round) % | \(.value.copyShare * 100 | round) % | \(.value.syscallsPerMB.read | round) / \(.value.syscallsPerMB.write | round) | \(.value.syscallsPerMB.recvmmsg | round) / \(.value.syscallsPerMB.sendmmsg | round) | \($c) |"' "$x" 2>/dev/null || echo "| $(basename "$x") | $na |"
	done
fi
