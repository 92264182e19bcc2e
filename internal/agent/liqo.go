package agent

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"

	"github.com/liqo-relay/relay/internal/control/metrics"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/dataplane/liqonet"
	"github.com/liqo-relay/relay/internal/dataplane/netlink"
)

// liqoRoutes is the route table of a relay in a Liqo gateway pod (a liqo
// section): the TUN's route manager, and the Liqo integration following
// every change of a peer's routes, so that the pinning set, the withdrawal
// resets and the rule repairs go through the same live-apply and failover
// steps as the routes.
type liqoRoutes struct {
	routeTable
	net *liqonet.Manager
}

// SetPeer updates the routes, then the pinning. A refused prefix changes
// nothing, so the pinning is left alone too.
func (r *liqoRoutes) SetPeer(name string, prefixes []netip.Prefix, reachable bool) error {
	err := r.routeTable.SetPeer(name, prefixes, reachable)
	if errors.Is(err, netlink.ErrRoutePrefixConflict) {
		return err
	}
	return errors.Join(err, r.net.SetPeer(name, prefixes, reachable))
}

// RemovePeer removes the routes and the pinning.
func (r *liqoRoutes) RemovePeer(name string) error {
	return errors.Join(r.routeTable.RemovePeer(name), r.net.RemovePeer(name))
}

// EnsureRules repairs both.
func (r *liqoRoutes) EnsureRules() (bool, error) {
	a, errA := r.routeTable.EnsureRules()
	b, errB := r.net.Ensure()
	return a || b, errors.Join(errA, errB)
}

// Close removes the Liqo state first, then the routes.
func (r *liqoRoutes) Close() error {
	return errors.Join(r.net.Close(), r.routeTable.Close())
}

// setMapped tells the Liqo integration which local sources the peer knows
// (its seesUs reals): only their connections are pinned.
func (r *liqoRoutes) setMapped(name string, seesUs []config.Mapping) error {
	reals := make([]netip.Prefix, len(seesUs))
	for i, m := range seesUs {
		reals[i] = m.Real
	}
	return r.net.SetMapped(name, reals)
}

// newLiqoRoutes starts the Liqo integration around rm.
func newLiqoRoutes(cfg *config.Config, rm routeTable, m *metrics.Metrics, log *slog.Logger) (*liqoRoutes, error) {
	l := cfg.Liqo
	ln, err := liqonet.New(liqonet.Options{
		Link: cfg.Tun.Name, Tunnel: l.Tunnel,
		Table: cfg.Tun.Table, InTable: l.InTable, ConsumerTable: l.ConsumerTable,
		Priority: l.RulePriority, Mark: l.Mark, SocketMark: cfg.Tun.FwMark,
		ListenPort: cfg.ListenPort, NftTable: l.NftTable,
		Consumer: liqonet.Consumer{CIDR: l.Consumer.CIDR, Source: l.Consumer.Source, Via: l.Consumer.Via},
		Logger:   log,
	})
	if err != nil {
		return nil, fmt.Errorf("liqo: %w", err)
	}
	m.LiqoSource(func() metrics.LiqoCounters {
		s := ln.Stats()
		return metrics.LiqoCounters{Resets: s.Resets, Reasserts: s.Reasserts}
	})
	return &liqoRoutes{routeTable: rm, net: ln}, nil
}
