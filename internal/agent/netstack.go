package agent

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"

	"github.com/liqo-relay/relay/internal/control/metrics"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/dataplane/netstack"
	"github.com/liqo-relay/relay/internal/dataplane/socks5"
)

// errNeedNetstack is returned by the in-mesh socket calls of a TUN relay,
// whose local applications use the host's sockets and routes instead.
var errNeedNetstack = errors.New("agent: needs netstack mode")

// ListenTCP listens on one of this netstack relay's own overlay addresses,
// for connections from peers. The relay's shutdown aborts it.
func (a *Agent) ListenTCP(addr netip.AddrPort) (net.Listener, error) {
	if a.dp.ns == nil {
		return nil, errNeedNetstack
	}
	return a.dp.ns.ListenTCP(addr)
}

// ListenUDP binds a datagram socket on one of this netstack relay's own
// overlay addresses. The relay's shutdown aborts it.
func (a *Agent) ListenUDP(addr netip.AddrPort) (net.PacketConn, error) {
	if a.dp.ns == nil {
		return nil, errNeedNetstack
	}
	return a.dp.ns.ListenUDP(addr)
}

// socksOptions builds the SOCKS5 proxy's options from the configuration,
// reading the credentials file if one is set.
func socksOptions(ns config.Netstack, log *slog.Logger) (socks5.Options, error) {
	o := socks5.Options{MaxConns: ns.SOCKS5MaxConns, MaxUDPAssociations: ns.SOCKS5MaxUDPAssociations, Logger: log}
	if ns.SOCKS5 == "" || ns.SOCKS5AuthFile == "" {
		return o, nil
	}
	creds, err := socks5.LoadCredentials(ns.SOCKS5AuthFile)
	if err != nil {
		return o, fmt.Errorf("netstack.socks5AuthFile: %w", err)
	}
	o.Credentials = creds
	return o, nil
}

// exportNetstackMetrics makes every scrape of m read the counters of ns
// and of its SOCKS5 proxy.
func exportNetstackMetrics(m *metrics.Metrics, ns *netstack.Netstack, proxy *socks5.Server) {
	m.NetstackSource(func() metrics.NetstackCounters {
		s, p := ns.Stats(), proxy.Stats()
		return metrics.NetstackCounters{
			UDPFlows:              s.UDPTracked,
			UDPEvicted:            s.UDPEvicted,
			UDPRefused:            s.UDPRefused,
			SOCKS5Conns:           int(p.Conns),
			SOCKS5RefusedLimit:    p.RefusedLimit,
			SOCKS5RefusedUDPLimit: p.RefusedUDPLimit,
			SOCKS5RefusedAuth:     p.RefusedAuth,
			SOCKS5AcceptErrors:    p.AcceptErrors,
		}
	})
}
