// Package geneveplan decides which tunnel ends the geneve stand-in keeps in
// one network namespace, from Liqo's GeneveTunnel, InternalNode and
// InternalFabric objects, and what must change in the kernel to get there.
//
// Liqo v1.2.0 joins every gateway pod of a cluster to every node with one
// geneve tunnel per (InternalFabric, InternalNode) pair, described by a
// GeneveTunnel. The lab's kernel has no geneve, so the stand-in makes each
// end as a vxlan device with the name, address, remote, VNI, port and MTU
// that Liqo would give the geneve device (test/liqo/GENEVE.md):
//
//   - GatewayEnds: the ends inside one gateway pod, one per node;
//   - NodeEnds: the ends on one node, one per gateway;
//   - Diff: the changes that turn the observed devices into the wanted ones.
//
// The package is pure: it reads objects and observations and returns values.
// It does no I/O and holds no state; the callers in cmd/geneve-standin watch
// the API server and internal/vxlanlink talks to the kernel.
package geneveplan
