// Package bench holds the whole-system data-plane benchmarks: bulk TCP
// from a pod behind one relay to a pod behind another, the relays running
// as real `relay run` processes in TUN mode in two namespaces joined by a
// veth, compared with stock wireguard-go and with plain kernel routing
// (root; they skip otherwise), and the per-packet costs that bound any
// tunnel on this machine: BenchmarkCeilingAEAD (the cipher, no root) and
// BenchmarkCeilingTUN (a TUN crossing, root), which perf/scenarios/ceiling.sh
// turns into a goodput ceiling. `make bench` runs them all.
// docs/performance.md records the figures and how to reproduce them.
package bench
