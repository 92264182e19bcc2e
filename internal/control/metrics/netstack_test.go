package metrics_test

import (
	"testing"

	"github.com/liqo-relay/relay/internal/control/metrics"
)

func TestNetstackSource(t *testing.T) {
	m := metrics.New()
	if n := count(t, m, "relay_netstack_udp_flows"); n != 0 {
		t.Fatalf("%d netstack series before a source is set, want none (TUN relays)", n)
	}
	c := metrics.NetstackCounters{
		UDPFlows: 7, UDPEvicted: 3, UDPRefused: 11,
		SOCKS5Conns: 2, SOCKS5RefusedLimit: 4, SOCKS5RefusedUDPLimit: 1, SOCKS5RefusedAuth: 5,
		SOCKS5AcceptErrors: 6,
	}
	m.NetstackSource(func() metrics.NetstackCounters { return c })
	gatherCompare(t, m, `
# HELP relay_netstack_udp_flows Forwarded UDP flows open now (capped by netstack.udpMaxFlows).
# TYPE relay_netstack_udp_flows gauge
relay_netstack_udp_flows 7
# HELP relay_netstack_udp_flows_evicted_total Idle forwarded UDP flows closed to make room for a new flow in a full table.
# TYPE relay_netstack_udp_flows_evicted_total counter
relay_netstack_udp_flows_evicted_total 3
# HELP relay_netstack_udp_flows_refused_total Datagrams of new UDP flows dropped: the flow table was full and no flow idle enough to evict.
# TYPE relay_netstack_udp_flows_refused_total counter
relay_netstack_udp_flows_refused_total 11
# HELP relay_socks5_accept_errors_total Failed accepts of the SOCKS5 listener; each is retried after a pause.
# TYPE relay_socks5_accept_errors_total counter
relay_socks5_accept_errors_total 6
# HELP relay_socks5_connections SOCKS5 client connections open now (capped by netstack.socks5MaxConns).
# TYPE relay_socks5_connections gauge
relay_socks5_connections 2
# HELP relay_socks5_refused_total SOCKS5 clients refused, by reason (limit, udp_limit or auth).
# TYPE relay_socks5_refused_total counter
relay_socks5_refused_total{reason="auth"} 5
relay_socks5_refused_total{reason="limit"} 4
relay_socks5_refused_total{reason="udp_limit"} 1
`, "relay_netstack_udp_flows", "relay_netstack_udp_flows_evicted_total", "relay_netstack_udp_flows_refused_total",
		"relay_socks5_accept_errors_total", "relay_socks5_connections", "relay_socks5_refused_total")

	// A netstack recreated with zeroed counters: the exported totals stay.
	c = metrics.NetstackCounters{UDPEvicted: 1}
	gatherCompare(t, m, `
# HELP relay_netstack_udp_flows_evicted_total Idle forwarded UDP flows closed to make room for a new flow in a full table.
# TYPE relay_netstack_udp_flows_evicted_total counter
relay_netstack_udp_flows_evicted_total 4
`, "relay_netstack_udp_flows_evicted_total")
}
