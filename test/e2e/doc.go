// Package e2e holds the end-to-end tests of liqo-relay: real relay
// processes (`relay run -c FILE`) in network namespaces, with pods behind
// two providers, a direct link between them and a path through a consumer
// namespace (see Topology). They need root and skip otherwise; `make e2e`
// runs them (test names start with TestE2E), and so does `make test`.
//
// TestE2EFailover (about two minutes: ten cuts, ten seconds apart) reports
// the interruptions of a 5 ms UDP echo stream across cuts of the direct
// path. RELAY_E2E_RESULTS=FILE writes its figures as JSON; RELAY_E2E_CUTS=N
// runs fewer cuts while working on it; RELAY_E2E_HEALTH='{interval: 50ms}'
// measures other health settings. The cut is a silent drop by nftables
// when nft is installed (Debian nftables; netdev ingress and egress
// hooks, Linux 5.16), else blackhole routes.
//
// TestE2EKubernetes runs the relays in Kubernetes mode (`relay run
// --kubeconfig`) against a real kube-apiserver per provider, started in the
// provider's namespace by test/k8s/cluster.sh, and stands in for the
// consumer's operator by writing the RelayPeers. It needs the binaries of
// `make k8s-tools` and skips without them (fails in CI).
//
// TestE2ELiqoDataPath runs the relays (file configuration, a liqo section)
// in the gateway pods of a model of Liqo v1.2.0's data path (liqomodel.go:
// nodes, Geneve-like links, Liqo's remapping NAT, IP mappings, unknown-source
// masquerade, policy rules with Liqo's table IDs and auto-priorities), with
// overlapping pod CIDRs, and checks docs/liqo-addressing.md §10 both ways.
// TestE2ELiqoDataPathKubernetes runs the same checks with the relays in
// Kubernetes mode, an API server per provider, and the RelayPeers the
// consumer's operator would write (computed with
// internal/kube/consumer/podmap).
package e2e
