package config

import (
	"testing"
	"time"
)

func TestNetstackDefaultsAndFields(t *testing.T) {
	c := mustParse(t, head+"mode: netstack\n")
	if c.Netstack != DefaultNetstack() {
		t.Errorf("netstack defaults %+v, want %+v", c.Netstack, DefaultNetstack())
	}
	want := Netstack{
		SOCKS5: "127.0.0.1:1080", SOCKS5AuthFile: "/etc/relay/socks",
		SOCKS5MaxConns: 10, SOCKS5MaxUDPAssociations: 2,
		UDPMaxFlows: 5, UDPIdleTimeout: 30 * time.Second,
	}
	c = mustParse(t, head+"mode: netstack\nnetstack: {socks5: 127.0.0.1:1080, socks5AuthFile: /etc/relay/socks, socks5MaxConns: 10, socks5MaxUDPAssociations: 2, udpMaxFlows: 5, udpIdleTimeout: 30s}\n")
	if c.Netstack != want {
		t.Errorf("netstack %+v, want %+v", c.Netstack, want)
	}
}

func TestNetstackInvalid(t *testing.T) {
	const ns = head + "mode: netstack\nnetstack: "
	for _, tc := range []struct {
		name string
		doc  string
		want []string
	}{
		{"zero flows", ns + "{udpMaxFlows: 0}\n", []string{"netstack.udpMaxFlows: 0 is out of range (1..1048576)"}},
		{"huge flows", ns + "{udpMaxFlows: 2000000}\n", []string{"netstack.udpMaxFlows: 2000000 is out of range"}},
		{"short idle", ns + "{udpIdleTimeout: 10ms}\n", []string{"netstack.udpIdleTimeout: 10ms is below the minimum 1s"}},
		{"zero conns", ns + "{socks5: '127.0.0.1:1080', socks5MaxConns: 0}\n", []string{"netstack.socks5MaxConns: 0 is out of range (1..65536)"}},
		{"zero assocs", ns + "{socks5: '127.0.0.1:1080', socks5MaxUDPAssociations: 0}\n", []string{"netstack.socks5MaxUDPAssociations: 0 is out of range (1..65536)"}},
		{"auth without proxy", ns + "{socks5AuthFile: /x}\n", []string{"netstack.socks5AuthFile: set, but netstack.socks5 is empty"}},
		{"typo", ns + "{udpMaxflows: 3}\n", []string{`netstack.udpMaxflows: unknown field (did you mean "udpMaxFlows"?)`}},
		{"bad socks5", ns + "{socks5: nonsense}\n", []string{"netstack.socks5:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkErrors(t, parseErrors(t, tc.doc), tc.want)
		})
	}
}
