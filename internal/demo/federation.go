package demo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/liqo-relay/relay/internal/demo/linkem"
	"github.com/liqo-relay/relay/internal/demo/mesh"
)

// Latencies are the one-way delays of the emulated WAN links.
type Latencies struct {
	AB, AC, CB time.Duration
}

// DefaultLatencies: providers A and B are close to each other and far from
// the consumer, the case where hairpinning through the consumer hurts most.
var DefaultLatencies = Latencies{AB: 10 * time.Millisecond, AC: 30 * time.Millisecond, CB: 30 * time.Millisecond}

// relayNames in display order.
var relayNames = []string{"provider-a", "provider-b", "consumer"}

// echoAddr is the "pod" behind provider-b that the demo's application
// talks to; provider-b's netstack forwards it to an in-process server.
const echoAddr = "10.244.2.10:7"

// demoFederation is the three relays, their paths and the echo pod.
type demoFederation struct {
	*mesh.Federation
	direct *mesh.Path
	echo   *echoServer
	health string // the relays' health mapping (Options.Health)
}

// build creates and starts the federation:
//
//	provider-a ── direct (AB) ── provider-b
//	provider-a ── consumer (AC, then CB) ── provider-b
//	provider-a ── direct (AC) ── consumer ── direct (CB) ── provider-b
func build(lat Latencies, health string, log *slog.Logger) (d *demoFederation, err error) {
	d = &demoFederation{Federation: mesh.New(log), health: health}
	defer func() {
		if err != nil {
			d.close()
			d = nil
		}
	}()
	if d.echo, err = newEchoServer(); err != nil {
		return nil, err
	}
	echo := d.echo.addr()
	relays := []*mesh.Relay{
		{Name: "provider-a", Overlay: netip.MustParsePrefix("100.80.0.1/32"), Exports: netip.MustParsePrefix("10.244.1.0/24"), Health: health},
		{Name: "provider-b", Overlay: netip.MustParsePrefix("100.80.0.2/32"), Exports: netip.MustParsePrefix("10.244.2.0/24"), Health: health,
			Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
				if network == "tcp" && address == echoAddr {
					var dl net.Dialer
					return dl.DialContext(ctx, "tcp", echo)
				}
				return nil, fmt.Errorf("demo: no pod at %s", address)
			}},
		{Name: "consumer", Overlay: netip.MustParsePrefix("100.80.0.3/32"), Exports: netip.MustParsePrefix("10.244.3.0/24"), Health: health},
	}
	for _, r := range relays {
		if _, err := d.Add(r); err != nil {
			return nil, err
		}
	}
	if d.direct, err = d.Connect("provider-a", "provider-b", "direct", linkem.Config{Delay: lat.AB}); err != nil {
		return nil, err
	}
	// The consumer path crosses the consumer's gateway: two NAT-like hops.
	if _, err = d.Connect("provider-a", "provider-b", "consumer", linkem.Config{Delay: lat.AC}, linkem.Config{Delay: lat.CB}); err != nil {
		return nil, err
	}
	if _, err = d.Connect("provider-a", "consumer", "direct", linkem.Config{Delay: lat.AC}); err != nil {
		return nil, err
	}
	if _, err = d.Connect("provider-b", "consumer", "direct", linkem.Config{Delay: lat.CB}); err != nil {
		return nil, err
	}
	if err := d.Start(); err != nil {
		return nil, err
	}
	return d, nil
}

// cutDirect cuts or restores the direct A-B path in both directions.
func (d *demoFederation) cutDirect(cut bool) { d.direct.Cut(cut) }

// setRedundancy moves provider-a and provider-b from the redundant sending
// mode was to mode (off or duplicate), live, on top of the demo's health
// settings: both or neither, as a relay that has moved goes back when the
// other refuses.
func (d *demoFederation) setRedundancy(ctx context.Context, was, mode string) error {
	names := []string{"provider-a", "provider-b"}
	for i, name := range names {
		if err := d.SetHealth(ctx, name, withRedundancy(d.health, mode)); err != nil {
			for _, back := range names[:i] {
				if berr := d.SetHealth(ctx, back, withRedundancy(d.health, was)); berr != nil {
					err = errors.Join(err, berr)
				}
			}
			return err
		}
	}
	return nil
}

// withRedundancy is the health flow mapping health (possibly empty, never
// with a redundancy of its own: Run refuses one) with redundancy set to
// mode.
func withRedundancy(health, mode string) string {
	inner := strings.TrimSpace(health)
	inner = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(inner, "{"), "}"))
	if inner == "" {
		return "{redundancy: " + mode + "}"
	}
	return "{redundancy: " + mode + ", " + inner + "}"
}

func (d *demoFederation) close() {
	_ = d.Close()
	if d.echo != nil {
		_ = d.echo.close()
	}
}
