# One line per result file of perf/ab-scenarios.sh: scenario, variant,
# round and its headline figures. Called with --arg rev and --arg round.
def p(x): if x == null then "-" else (x.p50 | tostring) + "/" + (x.p90 | tostring) end;
[.scenario, $rev, $round] +
(if .scenario == "failover" then
	["interruption p50/p90 ms " + p(.summary.interruptionMs), "failback p50/p90 ms " + p(.summary.failbackAfterRestoreMs), "lost " + (.summary.lostPackets | tostring)]
elif .scenario == "flapping" then
	["lowest-cost switches " + (.lowestCost.switches | tostring), "loss " + (.lowestCost.stream.loss | tostring), "rtt p50/p90 ms " + p(.lowestCost.stream.rttMs)]
elif .scenario == "latency" then
	["direct rtt p50/p90 ms " + p(.rttMs.podToPodDirect), "overlay at zero delay p50/p90 ms " + p(.zeroDelay.relayOverlay)]
elif .scenario == "throughput" then
	["tun Mbit/s p50/p90 " + p(.mbps["relay-tun"]), "netstack Mbit/s p50/p90 " + p(.mbps["relay-netstack"])]
elif .scenario == "scale-star" then
	["hub CPU % per 1000 paths " + (.summary.hubCpuPercentPer1000Paths * 100 | round / 100 | tostring), "probes per path per s " + (.summary.hubProbesPerSecondPerPath * 100 | round / 100 | tostring)]
else ["(no headline figures)"] end)
| join("  ")
