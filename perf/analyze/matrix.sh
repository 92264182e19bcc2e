# shellcheck shell=bash
# perf/analyze/matrix.sh: the analysis of the throughput matrix
# (perf/scenarios/matrix.sh), apart from the testbed so that
# perf/analyze/test.sh can run it on synthetic measurements.
#
# Input: one JSON object per line, one per measurement:
#   {"part":"tcp","round":1,"pos":0,"offloads":"defaults","sender":"pod",
#    "tunnel":"relay","mbps":1900.5,"cpuA":410,"cpuB":395}
# part is tcp (the matrix), flows (with "flows":N) or udp (with "size" and
# "pps" offered, "delivered" pps and "loss" percent); pos is the
# measurement's place in its round; cpuA and cpuB are the CPU milliseconds
# per GB received of the tunnel's process at each end (tcp and flows).

# matrix_rotation FILE: exits 0 when every part's rounds were rotated, else
# prints why not and exits 1. Rotated means: at least two rounds; no two
# consecutive rounds measured in the same order; and no variant measured
# at the same place in every round. An unrotated run lets a slow start or
# a drifting neighbour favour whichever variant always comes first.
matrix_rotation() {
	jq -rs '
		def id: [.offloads, .sender, .tunnel, (.flows // ""), (.size // ""), (.pps // "")] | map(tostring) | join("/");
		[group_by(.part)[] | .[0].part as $part |
			(group_by(.round) | map(sort_by(.pos) | map(id))) as $rounds |
			if ($rounds | length) < 2 then "\($part): \($rounds | length) round(s): a comparison needs at least 2, rotated"
			else
				([range(1; $rounds | length) | select($rounds[.] == $rounds[. - 1]) | "\($part): round \(. + 1) has the order of round \(.)"] +
				 ([$rounds[] | to_entries[] | {id: .value, pos: .key}] | group_by(.id) |
				  map(select(length == ($rounds | length) and (map(.pos) | unique | length) == 1)) |
				  map("\($part): \(.[0].id) was measured at place \(.[0].pos + 1) in every round")))[]
			end] | if length == 0 then empty else .[] end' "$1" | {
		local why
		why=$(cat)
		[ -z "$why" ] && return 0
		echo "$why"
		return 1
	}
}

# matrix_summary FILE: the result's figures as one JSON object:
#   cells: per offloads x sender, per tunnel: Mbit/s (median, range),
#     CPU ms per GB at each end and in all (medians), and, for each tunnel
#     but stock wireguard-go, its ratios to stock in the same round
#     (goodput and CPU per GB): per round, median, range;
#   noise: the largest |median - 1| of the ratios between the two identical
#     stock runs (wireguard-go-again / wireguard-go) over the cells, for
#     goodput and for CPU per GB: the difference this machine shows between
#     two runs of the same thing;
#   flows, udp: the same per tunnel and flow count, per tunnel and rate.
matrix_summary() {
	jq -s '
		def med: sort | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
		def r3: if . == null then null else . * 1000 | round / 1000 end;
		def stats: {p50: (med | r3), min: (min | r3), max: (max | r3), n: length};
		def rnd: if . == null then null else round end;
		# A failed run (iperf3 gave no report) has 0 Mbit/s and no CPU figure.
		def both: if .cpuA == null or .cpuB == null then null else .cpuA + .cpuB end;
		def cpu: {a: (map(.cpuA // empty) | med | rnd), b: (map(.cpuB // empty) | med | rnd), total: (map(both // empty) | med | rnd)};
		# paired(ms; f): per round, f of this tunnel over f of stock, for
		# the rounds where both have the figure.
		def paired($ms; f): . as $v | [$v[] | . as $m |
			($ms[] | select(.round == $m.round and .tunnel == "wireguard-go")) as $s |
			($m | f) as $x | ($s | f) as $y |
			if $x != null and $y != null and $y > 0 then $x / $y else empty end] |
			{perRound: map(r3), p50: (med | r3), min: (min | r3), max: (max | r3)};
		def tunnels: . as $ms | group_by(.tunnel) | map({key: .[0].tunnel, value: (
			{mbps: (map(.mbps) | stats)} +
			(if any(.cpuA != null) then {cpuMsPerGB: cpu} else {} end) +
			(if any(.delivered != null) then {deliveredPps: (map(.delivered) | stats), lossPercent: (map(.loss) | stats)} else {} end) +
			(if .[0].tunnel != "wireguard-go" then {vsStock: (
				{mbps: paired($ms; .mbps)} +
				(if any(.cpuA != null) then {cpu: paired($ms; both)} else {} end) +
				(if any(.delivered != null) then {delivered: paired($ms; .delivered)} else {} end))}
			 else {} end))}) | from_entries;
		(map(select(.part == "tcp")) | group_by([.offloads, .sender]) |
		 map({offloads: .[0].offloads, sender: .[0].sender, rounds: (map(.round) | unique | length), tunnels: tunnels})) as $cells |
		{cells: $cells,
		 noise: {
			mbps: ([$cells[].tunnels["wireguard-go-again"].vsStock.mbps.p50 // empty | . - 1 | fabs] | max | r3),
			cpu: ([$cells[].tunnels["wireguard-go-again"].vsStock.cpu.p50 // empty | . - 1 | fabs] | max | r3)},
		 flows: (map(select(.part == "flows")) | group_by(.flows) | map({flows: .[0].flows, tunnels: tunnels})),
		 udp: (map(select(.part == "udp")) | group_by([.size, .pps]) | map({size: .[0].size, pps: .[0].pps, tunnels: tunnels})),
		 switches: (map(select((.switches // 0) > 0) | {part, round, offloads, sender, tunnel, switches}))}' "$1"
}
