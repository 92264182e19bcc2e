package agent_test

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"
)

// TestTrafficBetweenThreeRelays sends TCP and UDP from every relay to every
// other: to the peer's own overlay address (a service on its netstack) and
// to a "pod" behind its exports (forwarded by its netstack to a server on
// the host).
func TestTrafficBetweenThreeRelays(t *testing.T) {
	b := newBed(t, bedOptions{Direct: 2 * time.Millisecond, Consumer: 5 * time.Millisecond})
	for i, from := range relayNames {
		for j, to := range relayNames {
			if i == j {
				continue
			}
			targets := map[string]netip.AddrPort{
				"overlay": netip.AddrPortFrom(overlay(j+1), podPort),
				"export":  pod(j+1, podPort),
			}
			for _, kind := range []string{"overlay", "export"} {
				for _, network := range []string{"tcp", "udp"} {
					name := fmt.Sprintf("%s->%s/%s/%s", from, to, kind, network)
					t.Run(name, func(t *testing.T) {
						ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
						defer cancel()
						c, err := b.agent(from).DialContext(ctx, network, targets[kind].String())
						if err != nil {
							t.Fatalf("dial: %v", err)
						}
						defer c.Close()
						for k := range 3 {
							msg := fmt.Appendf(nil, "%s #%d", name, k)
							if err := echoOnce(c, msg, network == "udp"); err != nil {
								t.Fatal(err)
							}
						}
					})
				}
			}
		}
	}
}

// TestClosedPortIsRefused checks that a TCP connection to an exported
// destination with no server is refused (the netstack connects to the
// backend before it completes the peer's handshake), not left hanging.
func TestClosedPortIsRefused(t *testing.T) {
	b := newBed(t, bedOptions{Direct: 2 * time.Millisecond, Consumer: 5 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := b.agent(relayA).DialContext(ctx, "tcp", pod(2, 4242).String())
	if err == nil {
		t.Fatal("dial to a pod port with no server succeeded")
	}
	if ctx.Err() != nil {
		t.Fatalf("dial was not refused but timed out: %v", err)
	}
	t.Logf("refused as expected: %v", err)
}
