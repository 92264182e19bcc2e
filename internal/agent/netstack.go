package agent

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/liqo-relay/relay/internal/control/metrics"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/dataplane/netstack"
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
func socksOptions(ns config.Netstack) (netstack.SOCKS5Options, error) {
	o := netstack.SOCKS5Options{MaxConns: ns.SOCKS5MaxConns, MaxUDPAssociations: ns.SOCKS5MaxUDPAssociations}
	if ns.SOCKS5 == "" || ns.SOCKS5AuthFile == "" {
		return o, nil
	}
	creds, err := netstack.LoadSOCKS5Credentials(ns.SOCKS5AuthFile)
	if err != nil {
		return o, fmt.Errorf("netstack.socks5AuthFile: %w", err)
	}
	o.Credentials = creds
	return o, nil
}

// exportNetstackMetrics makes every scrape of m read ns's counters.
func exportNetstackMetrics(m *metrics.Metrics, ns *netstack.Netstack) {
	m.NetstackSource(func() metrics.NetstackCounters {
		s := ns.Stats()
		return metrics.NetstackCounters{
			UDPFlows:              s.UDPTracked,
			UDPEvicted:            s.UDPEvicted,
			UDPRefused:            s.UDPRefused,
			SOCKS5Conns:           int(s.SOCKSConns),
			SOCKS5RefusedLimit:    s.SOCKSRefusedLimit,
			SOCKS5RefusedUDPLimit: s.SOCKSRefusedUDPLimit,
			SOCKS5RefusedAuth:     s.SOCKSRefusedAuth,
			SOCKS5AcceptErrors:    s.SOCKSAcceptErrors,
		}
	})
}
