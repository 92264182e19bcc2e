#!/usr/bin/env bash
# perf/analyze/test.sh: checks of the analysis scripts on synthetic input
# (no root, no testbed). Exit 1 on the first wrong answer.
set -o errexit -o nounset -o pipefail
A=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# stats.awk: nearest-rank percentiles.
got=$(seq 1 100 | awk -f "$A/stats.awk" | jq -c '[.n, .min, .p50, .p95, .max]')
[ "$got" = "[100,1,50,95,100]" ] || fail "stats.awk on 1..100: $got"
got=$(: | awk -f "$A/stats.awk" | jq -c '.n')
[ "$got" = 0 ] || fail "stats.awk on nothing: $got"

# ping.awk: unwraps icmp_seq past 65535, send time = receive time - RTT.
printf '[100.010000] 64 bytes from 10.20.1.2: icmp_seq=65535 ttl=62 time=10.0 ms\n[100.020000] 64 bytes from 10.20.1.2: icmp_seq=0 ttl=62 time=10.0 ms\n[100.030000] 64 bytes from 10.20.1.2: icmp_seq=1 ttl=62 time=10.0 ms\n' >"$T/ping"
got=$(awk -f "$A/ping.awk" "$T/ping" | awk '{print $1, $2}' | tr '\n' ' ')
[ "$got" = "65535 100.000000 65536 100.010000 65537 100.020000 " ] || fail "ping.awk wrap: $got"

# schedule.awk: fractions over the bucket bounds, p50/p99 as the bounds
# they fall in, stalls (10 wakes: 5 within 0.1 ms, 3 more within 1 ms, 1
# within 5 ms, 1 within 25 ms).
printf 'relay_probe_schedule_delay_seconds_bucket{stage="wake",le="0.0001"} 5\nrelay_probe_schedule_delay_seconds_bucket{stage="wake",le="0.001"} 8\nrelay_probe_schedule_delay_seconds_bucket{stage="wake",le="0.005"} 9\nrelay_probe_schedule_delay_seconds_bucket{stage="wake",le="0.025"} 10\nrelay_probe_schedule_delay_seconds_bucket{stage="wake",le="0.1"} 10\nrelay_probe_schedule_delay_seconds_bucket{stage="wake",le="+Inf"} 10\nrelay_probe_schedule_delay_seconds_sum{stage="wake"} 0.03\nrelay_probe_schedule_delay_seconds_count{stage="wake"} 10\nrelay_stalls_total 2\nrelay_stall_seconds_total 0.02\n' >"$T/metrics"
got=$(awk -f "$A/schedule.awk" "$T/metrics" | jq -c '[.wake.count, .wake.meanMs, .wake.over1ms, .wake.over5ms, .wake.over25ms, .wake.p50LeMs, .wake.p99LeMs, .stalls]')
[ "$got" = "[10,3,0.2,0.1,0,0.1,25,2]" ] || fail "schedule.awk: $got"

# failover.awk: a stream every 10 ms from t=1000; cut 1 at 1002.000 loses
# seqs 201..240 (400 ms), but the loss starts 30 ms late (the cut took
# effect late); the failback loses 251..252 (20 ms) after the restore at
# 1002.5; cut 2 at 1010 loses nothing.
awk 'BEGIN { for (s = 0; s < 1500; s++) { if ((s >= 203 && s <= 242) || s == 261 || s == 262) continue; t = 1000 + s * 0.01; printf "%d %.6f %.6f 20\n", s, t, t + 0.02 } }' >"$T/samples"
printf '1 1002.0 1002.5\n2 1010.0 1011.0\n' >"$T/cuts"
awk -f "$A/failover.awk" "$T/cuts" "$T/samples" >"$T/out"
got=$(grep -v '^#' "$T/out" | tr '\n' ' ')
[ "$got" = "1 400.0 40 20.0 42 2 0.0 0 0.0 0 " ] || fail "failover.awk: $got"
grep -q '^# interval_ms 10.000' "$T/out" || fail "failover.awk interval: $(head -1 "$T/out")"
# goodput-dip.awk: 100 Mbit/s per 100 ms interval, a cut at 5 s; 5..5.6
# below 10 Mbit/s except one 50 Mbit/s interval at 5.3, which ends the
# first run: the longest run is 5.0..5.3 (3 intervals), not 5.4..5.6.
awk 'BEGIN { for (i = 0; i < 100; i++) { s = i / 10; v = 100; if (i >= 50 && i < 53) v = 0; if (i == 53) v = 50; if (i >= 54 && i < 56) v = 5; printf "%.1f %.1f %g\n", s, s + 0.1, v } }' >"$T/series"
got=$(awk -f "$A/goodput-dip.awk" -v cut=5 "$T/series" | jq -c '[.preCutMedianMbps, .intervals, .startS, .endS, .durationMs, .minMbps]')
[ "$got" = "[100,3,5,5.3,300,0]" ] || fail "goodput-dip.awk: $got"
got=$(awk -f "$A/goodput-dip.awk" -v cut=5 -v from=5.35 "$T/series" | jq -c '[.intervals, .startS, .minMbps]')
[ "$got" = "[2,5.4,0]" ] || fail "goodput-dip.awk from: $got"

# netem.sh: wan_set flags mapped onto netem options.
printf 'delay=20ms\njitter=15ms\nburst=0.02,0.3\nrate=100mbit\n' >"$T/netem"
got=$(bash -c 'source "$1/../netem.sh"; netem_args "$2"' _ "$A" "$T/netem")
[ "$got" = " delay 20ms 15ms loss gemodel 2% 30% 100% 0% rate 100mbit" ] || fail "netem_args: $got"
printf 'cut=1\nloss=0.01\n' >"$T/netem"
got=$(bash -c 'source "$1/../netem.sh"; netem_args "$2"' _ "$A" "$T/netem")
[ "$got" = " loss random 100%" ] || fail "netem_args cut: $got"
# test/bench/rounds-table.sh: per-round ratios pair the same round, the
# medians are per benchmark; a ratio above 1 can sit beside a lower median
# only if the rounds say so.
B=$A/../../test/bench
{
	printf '# commit: abc1234\n# when: now\n# machine: m\n# command: test/bench/rounds.sh 3\n'
	printf '# pairs: TUNPair/relay/tcp:TUNPair/relay-translated/tcp\n'
	printf 'r1 BenchmarkTUNPair/relay/tcp-2 3000 1 ns/op 100 MB/s 6.0 tunnel-cpu-ns/B\nr1 BenchmarkTUNPair/relay-translated/tcp-2 3000 1 ns/op 90 MB/s 6.6 tunnel-cpu-ns/B\n'
	printf 'r2 BenchmarkTUNPair/relay/tcp-2 3000 1 ns/op 200 MB/s 6.0 tunnel-cpu-ns/B\nr2 BenchmarkTUNPair/relay-translated/tcp-2 3000 1 ns/op 180 MB/s 6.0 tunnel-cpu-ns/B\n'
	printf 'r3 BenchmarkTUNPair/relay/tcp-2 3000 1 ns/op 150 MB/s 6.0 tunnel-cpu-ns/B\n'
} >"$T/rounds"
got=$("$B/rounds-table.sh" "$T/rounds" | grep '^| TUNPair' | tr '\n' ' ')
[ "$got" = "| TUNPair/relay | 150.0 | 6.00 | 3 | | TUNPair/relay-translated | 135.0 | 6.30 | 2 | | TUNPair: relay-translated / relay | 0.90 | 1.05 | 2 | " ] || fail "rounds-table.sh: $got"
"$B/rounds-table.sh" "$T/rounds" | head -1 | grep -q 'at commit abc1234' || fail "rounds-table.sh names no commit"

# test/bench/micro-table.sh: fastest and median ns/op, allocs.
printf '# commit: abc1234\n# when: now\n# machine: m\n# command: test/bench/micro.sh 3\npkg: m/pkg/router\n' >"$T/micro"
for ns in 30 19.5 38.8; do printf 'BenchmarkTranslate/v4-tcp-2 1000 %s ns/op 0 B/op 0 allocs/op\n' $ns >>"$T/micro"; done
got=$("$B/micro-table.sh" "$T/micro" | grep '^| router')
[ "$got" = "| router Translate/v4-tcp | 19.5 | 30.0 | 0 | 3 |" ] || fail "micro-table.sh: $got"
# tree_commit: a full run's own results under perf/results/ do not make
# the tree dirty; any other change to a tracked file does.
# shellcheck source=common.sh
source <(sed -n '/^tree_commit()/,/^}/p' "$A/common.sh")
R="$T/repo"
mkdir -p "$R/perf/results" && git -C "$R" init -q && printf a >"$R/perf/results/x.json" && printf a >"$R/f" &&
	git -C "$R" add -A && git -C "$R" -c user.email=t@t -c user.name=t commit -qm t || fail "tree_commit: making a repo"
c0=$(REPO_ROOT=$R tree_commit)
printf b >"$R/perf/results/x.json"
[ "$(REPO_ROOT=$R tree_commit)" = "$c0" ] || fail "tree_commit: a result under perf/results/ made the tree dirty: $(REPO_ROOT=$R tree_commit)"
printf b >"$R/f"
[ "$(REPO_ROOT=$R tree_commit)" = "$c0-dirty" ] || fail "tree_commit: an edited file did not make the tree dirty: $(REPO_ROOT=$R tree_commit)"

# wgprofile.awk: samples grouped by wireguard-go routine, per sample of
# the cipher (a cipher leaf counts as cipher whatever routine it ran in).
printf 'relay 1\n\t1 golang.org/x/crypto/chacha20poly1305.chacha20Poly1305Open.abi0 (x)\n\t2 golang.zx2c4.com/wireguard/device.(*Device).RoutineDecryption (x)\n\nrelay 1\n\t1 readMark (x)\n\t2 golang.zx2c4.com/wireguard/device.(*Peer).RoutineSequentialReceiver (x)\n\nrelay 1\n\t1 memmove (x)\n\t2 golang.zx2c4.com/wireguard/device.(*Peer).RoutineSequentialReceiver (x)\n\nrelay 2\n\t1 usleep (x)\n\t2 runtime.sysmon (x)\n' >"$T/script"
got=$(awk -f "$A/wgprofile.awk" "$T/script" | awk 'NR > 1 {printf "%s %s %s ", $1, $2, $3}')
[ "$got" = "tun-write 2 2.00 cipher 1 1.00 sysmon 1 1.00 total 4 4.00 " ] || fail "wgprofile.awk: $got"
got=$(awk -v json=1 -f "$A/wgprofile.awk" "$T/script" | jq -c '[.samples, .cipherShare, .copyShare]')
[ "$got" = "[4,0.25,0.25]" ] || fail "wgprofile.awk json: $got"


# soak-slope.awk (the soak's leak check): samples every 10 s over 10 min,
# two processes (a restart at 300 s resets the count to a new level: no
# slope), a 60 s warm-up left out. Flat with +-1 noise says flat; one more
# every 30 s (120/h) says leak, at 15/h allowed; a growing warm-up alone
# says flat; too few samples say insufficient.
soak_series() { awk -v kind="$1" 'BEGIN { for (i = 0; i < 60; i++) { t = i * 10 + 2.5; seg = t < 300 ? 11 : 22; up = t < 300 ? t : t - 300
	v = 40 + (seg == 22 ? 7 : 0) + (i % 3 == 0); if (kind == "leak") v += int(up / 30); if (kind == "warm" && up < 60) v -= int((60 - up) / 5)
	printf "%.1f %d %.1f %d\n", t, seg, up, v } }'; }
got=$(soak_series flat | awk -f "$A/soak-slope.awk" -v warmup=60 -v allowed=15 | jq -r '"\(.verdict) \(.n) \(.segments) \(.slopePerHour | fabs < 15)"')
[ "$got" = "flat 48 2 true" ] || fail "soak-slope.awk flat: $got"
got=$(soak_series leak | awk -f "$A/soak-slope.awk" -v warmup=60 -v allowed=15 | jq -r '"\(.verdict) \(.slopePerHour > 100 and .slopePerHour < 140)"')
[ "$got" = "leak true" ] || fail "soak-slope.awk leak: $got"
got=$(soak_series warm | awk -f "$A/soak-slope.awk" -v warmup=60 -v allowed=15 | jq -r .verdict)
[ "$got" = flat ] || fail "soak-slope.awk warm-up: $got"
got=$(soak_series warm | awk -f "$A/soak-slope.awk" -v warmup=0 -v allowed=15 | jq -r .verdict)
[ "$got" = leak ] || fail "soak-slope.awk without warm-up: $got"
got=$(soak_series leak | awk -f "$A/soak-slope.awk" -v warmup=60 -v allowed=null | jq -r '"\(.verdict) \(.allowedPerHour) \(.slopePerHour > 100)"')
[ "$got" = "reported null true" ] || fail "soak-slope.awk not judged: $got"
got=$(printf '0 1 100 5\n10 1 110 5\n20 1 120 null\n' | awk -f "$A/soak-slope.awk" -v warmup=60 -v allowed=15 | jq -r '"\(.verdict) \(.n)"')
[ "$got" = "insufficient 0" ] || fail "soak-slope.awk few samples: $got"
# soak-loss.awk: a datagram every 5 ms from t=100; a cut window
# 101.0..101.5 (ref 101.0) and a kill window 104.4..104.6 (ref 104.5).
# Lost: 240..260 (101.2..101.3, in the cut), 500 and 501 (102.5: outside),
# 900 (104.5: in the kill window, at its ref) and 999 (104.995: outside,
# the last one). Seq 10 arrives twice.
awk 'BEGIN { print "# udpstream"; for (s = 0; s < 1000; s++) printf "%d %.6f\n", s, 100 + s * 0.005 }' >"$T/sent"
awk 'BEGIN { for (s = 0; s < 1000; s++) { if ((s >= 240 && s <= 260) || s == 500 || s == 501 || s == 900 || s == 999) continue; printf "%d %.6f %.6f\n", s, 100 + s * 0.005, 100.01 + s * 0.005; if (s == 10) printf "10 100.050000 100.070000\n" } }' >"$T/received"
printf 'cut 101.0 101.5 101.0\nkill 104.4 104.6 104.5\n' >"$T/windows"
got=$(awk -f "$A/soak-loss.awk" "$T/windows" "$T/sent" "$T/received" | jq -c '[.sent, .received, .duplicates, .lost, .lostInWindows, .lostOutsideWindows, [.outside[].seq], [.windows[] | .lost, .lastLossAfterRefMs]]')
[ "$got" = "[1000,975,1,25,22,3,[500,501,999],[21,300,1,0]]" ] || fail "soak-loss.awk: $got"

# matrix.sh: the rotation check and the paired ratios. Two rounds of two
# tunnels x two senders; stock at 1000 Mbit/s, the relay at 990 then 1010.
source "$A/matrix.sh"
mx() { # ROUND POS SENDER TUNNEL MBPS
	printf '{"part":"tcp","round":%d,"pos":%d,"offloads":"off","sender":"%s","tunnel":"%s","mbps":%s,"cpuA":400,"cpuB":%s}\n' "$1" "$2" "$3" "$4" "$5" "$([ "$4" = relay ] && echo 420 || echo 400)"
}
{ mx 1 0 pod wireguard-go 1000; mx 1 1 relay wireguard-go 1000; mx 1 2 pod relay 990; mx 1 3 relay relay 990
  mx 2 0 relay relay 1010; mx 2 1 pod relay 1010; mx 2 2 relay wireguard-go 1000; mx 2 3 pod wireguard-go 1000; } >"$T/mx-rotated"
matrix_rotation "$T/mx-rotated" >/dev/null || fail "matrix_rotation refused rotated rounds: $(matrix_rotation "$T/mx-rotated")"
got=$(matrix_summary "$T/mx-rotated" | jq -c '[.cells[] | select(.sender == "pod") | .tunnels.relay.vsStock | .mbps.perRound, .mbps.p50, .cpu.p50] + [.noise.mbps]')
[ "$got" = "[[0.99,1.01],1,1.025,null]" ] || fail "matrix_summary: $got"
# The same measurements in the same order in both rounds: refused.
{ mx 1 0 pod wireguard-go 1000; mx 1 1 relay wireguard-go 1000; mx 1 2 pod relay 990; mx 1 3 relay relay 990
  mx 2 0 pod wireguard-go 1000; mx 2 1 relay wireguard-go 1000; mx 2 2 pod relay 1010; mx 2 3 relay relay 1010; } >"$T/mx-same"
if why=$(matrix_rotation "$T/mx-same"); then fail "matrix_rotation took unrotated rounds"; fi
grep -q "round 2 has the order of round 1" <<<"$why" || fail "matrix_rotation's reason: $why"
# Orders that differ, but one variant always first: refused.
{ mx 1 0 pod wireguard-go 1000; mx 1 1 relay wireguard-go 1000; mx 1 2 pod relay 990; mx 1 3 relay relay 990
  mx 2 0 pod wireguard-go 1000; mx 2 1 relay relay 1010; mx 2 2 pod relay 1010; mx 2 3 relay wireguard-go 1000; } >"$T/mx-first"
if why=$(matrix_rotation "$T/mx-first"); then fail "matrix_rotation took a variant always first"; fi
grep -q "off/pod/wireguard-go.* at place 1 in every round" <<<"$why" || fail "matrix_rotation's reason: $why"
# A relay run that failed (no report: 0 Mbit/s, no CPU figure) counts as
# 0 in its round's goodput ratio and has no CPU ratio; the rest stands.
{ mx 1 0 pod wireguard-go 1000; mx 1 1 relay wireguard-go 1000; mx 1 2 pod relay 990; mx 1 3 relay relay 990
  mx 2 0 relay relay 1010; mx 2 1 pod relay 0; mx 2 2 relay wireguard-go 1000; mx 2 3 pod wireguard-go 1000; } |
	sed 's/"mbps":0,"cpuA":400,"cpuB":420/"mbps":0,"cpuA":null,"cpuB":null/' >"$T/mx-failed"
got=$(matrix_summary "$T/mx-failed" | jq -c '[.cells[] | select(.sender == "pod") | .tunnels.relay | .vsStock.mbps.perRound, .vsStock.cpu.perRound, .cpuMsPerGB.total]')
[ "$got" = "[[0.99,0],[1.025],820]" ] || fail "matrix_summary with a failed run: $got"
# One round is no comparison.
mx 1 0 pod wireguard-go 1000 >"$T/mx-one"
if matrix_rotation "$T/mx-one" >/dev/null; then fail "matrix_rotation took a single round"; fi

# failover-lib.sh detect_bound: 20 ms x 3 + the median RTT + min(4 x the
# median jitter, half the detect time).
source "$A/failover-lib.sh"
got=$(jq -nc "$(detect_bound_jq)"' "{interval: 20ms}" | detect_bound([20.4, 20.1, 20.2]; [1, 0.5, 2]) | [.detectMs, .rttMs, .jitterMarginMs, .ms]')
[ "$got" = "[60,20.2,4,84.2]" ] || fail "detect_bound 20ms: $got"
got=$(jq -nc "$(detect_bound_jq)"' "{interval: 10ms, detectMultiplier: 5}" | detect_bound([20]; [30]) | [.detectMs, .jitterMarginMs, .ms]')
[ "$got" = "[50,25,95]" ] || fail "detect_bound capped margin: $got"
got=$(jq -nc "$(detect_bound_jq)"' "" | detect_bound([]; []) | [.detectMs, .ms]')
[ "$got" = "[300,null]" ] || fail "detect_bound defaults without samples: $got"

echo "perf/analyze: ok"
