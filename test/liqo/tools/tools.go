//go:build tools

// Package tools pins the Liqo binaries that test/liqo/lab.sh builds from
// Liqo's own Go module, v1.2.0: its controllers, IPAM, gateway, WireGuard
// gateway, webhook, CRD replicator, API server proxy and liqoctl (its
// fabric is replaced by cmd/geneve-standin, see ../GENEVE.md). It is
// its own module (Liqo requires an older client-go than the relay), so none
// of this reaches the relay's go.mod, and nothing of Liqo's source is kept
// in the repository: the module proxy serves it at build time.
package tools

import (
	_ "github.com/liqotech/liqo/cmd/crd-replicator"
	_ "github.com/liqotech/liqo/cmd/gateway"
	_ "github.com/liqotech/liqo/cmd/gateway/wireguard"
	_ "github.com/liqotech/liqo/cmd/ipam"
	_ "github.com/liqotech/liqo/cmd/liqo-controller-manager"
	_ "github.com/liqotech/liqo/cmd/liqoctl"
	_ "github.com/liqotech/liqo/cmd/proxy"
	_ "github.com/liqotech/liqo/cmd/webhook"
)
