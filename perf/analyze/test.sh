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

echo "perf/analyze: ok"
