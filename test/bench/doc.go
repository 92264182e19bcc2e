// Package bench holds the whole-system data-plane benchmarks that need
// network namespaces: bulk TCP from a pod behind one relay to a pod behind
// another, the relays running as real `relay run` processes in TUN mode in
// two namespaces joined by a veth, compared with stock wireguard-go and with
// plain kernel routing. They need root and skip otherwise; `make bench` runs
// them. docs/performance.md records the figures and how to reproduce them.
package bench
