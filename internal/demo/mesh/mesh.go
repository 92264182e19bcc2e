// Package mesh builds in-process federations of netstack relays joined
// by emulated WAN links (internal/demo/linkem), on loopback and without
// privileges. It is the test bed of the agent's in-process tests, of
// `relay demo` and of the scale perf scenarios (perf/cmd/scale): like
// raft's in-memory network, paths can be cut and restored
// deterministically.
package mesh

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"github.com/liqo-relay/relay/internal/agent"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/keys"
	"github.com/liqo-relay/relay/internal/demo/linkem"
)

// Relay is one relay of the federation.
type Relay struct {
	Name    string
	Overlay netip.Prefix // its own overlay address (a /32)
	Exports netip.Prefix
	// Dial reaches its exported destinations (netstack forwarding); nil
	// means the host network.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// Health is an optional YAML flow mapping for `health:`.
	Health string
	// SeesUs, per peer name, is rendered as the peer's `seesUs:`.
	SeesUs map[string]string
	// PeerPrefixes, per peer name, replaces the default prefixes (the
	// peer's overlay and exports) in this relay's view.
	PeerPrefixes map[string][]netip.Prefix

	Key   keys.Private
	Port  uint16
	Agent *agent.Agent
	// Config is the YAML this relay was started with.
	Config string
}

// Path is a bidirectional emulated path between two relays: a chain of hops
// each way.
type Path struct {
	Name   string
	A, B   string
	ab, ba []*linkem.Link
	mu     sync.Mutex
	cut    bool
}

// Cut cuts or restores the path in both directions.
func (p *Path) Cut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	for _, l := range append(slices.Clone(p.ab), p.ba...) {
		l.Cut(cut)
	}
}

// Set changes the emulation of every hop, both directions.
func (p *Path) Set(c linkem.Config) {
	for _, l := range append(slices.Clone(p.ab), p.ba...) {
		l.Set(c)
	}
}

// Endpoint returns where relay `from` sends to use this path.
func (p *Path) Endpoint(from string) netip.AddrPort {
	if from == p.A {
		return p.ab[0].Addr()
	}
	return p.ba[0].Addr()
}

// Federation is a set of relays and paths. Build it with Add and Connect,
// then Start it.
type Federation struct {
	log    *slog.Logger
	relays []*Relay
	paths  []*Path
	links  []*linkem.Link
	wg     sync.WaitGroup
	cancel context.CancelFunc
}

// New returns an empty federation.
func New(log *slog.Logger) *Federation {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Federation{log: log}
}

// Relay returns the relay called name, or nil.
func (f *Federation) Relay(name string) *Relay {
	for _, r := range f.relays {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// Add registers a relay. Its key and port are chosen now.
func (f *Federation) Add(r *Relay) (*Relay, error) {
	var err error
	if r.Key, err = newKey(); err != nil {
		return nil, err
	}
	if r.Port, err = freeUDPPort(); err != nil {
		return nil, fmt.Errorf("finding a free UDP port: %w", err)
	}
	f.relays = append(f.relays, r)
	return r, nil
}

// Connect adds a path called name between relays a and b, made of hops in
// series (each hop a NAT-like UDP relay, as a real consumer gateway is).
// The same emulation applies both ways. Paths are listed in each relay's
// config in the order they were connected.
func (f *Federation) Connect(a, b, name string, hops ...linkem.Config) (*Path, error) {
	ra, rb := f.Relay(a), f.Relay(b)
	if ra == nil || rb == nil {
		return nil, fmt.Errorf("federation: connect %s-%s: unknown relay", a, b)
	}
	if len(hops) == 0 {
		hops = []linkem.Config{{}}
	}
	p := &Path{Name: name, A: a, B: b}
	var err error
	if p.ab, err = f.chain(rb.Port, hops); err != nil {
		return nil, err
	}
	if p.ba, err = f.chain(ra.Port, hops); err != nil {
		return nil, err
	}
	f.paths = append(f.paths, p)
	return p, nil
}

// chain builds hops in series ending at port; it returns them first hop
// first.
func (f *Federation) chain(port uint16, hops []linkem.Config) ([]*linkem.Link, error) {
	target := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), port)
	out := make([]*linkem.Link, len(hops))
	for i := len(hops) - 1; i >= 0; i-- {
		c := hops[i]
		if c.Seed == 0 {
			c.Seed = int64(len(f.links) + 1)
		}
		l, err := linkem.New(target, c, f.log.With("component", "linkem"))
		if err != nil {
			return nil, fmt.Errorf("federation: link: %w", err)
		}
		f.links = append(f.links, l)
		out[i] = l
		target = l.Addr()
	}
	return out, nil
}

// RenderConfig renders relay r's configuration as YAML.
func (f *Federation) RenderConfig(r *Relay) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nprivateKey: %s\nlistenPort: %d\nmode: netstack\naddresses: [%s]\nexports: [%s]\n",
		r.Name, r.Key.Reveal(), r.Port, r.Overlay, r.Exports)
	if r.Health != "" {
		fmt.Fprintf(&b, "health: %s\n", r.Health)
	}
	b.WriteString("peers:\n")
	for _, peer := range f.relays {
		var paths []*Path
		for _, p := range f.paths {
			if (p.A == r.Name && p.B == peer.Name) || (p.B == r.Name && p.A == peer.Name) {
				paths = append(paths, p)
			}
		}
		if len(paths) == 0 {
			continue
		}
		prefixes := r.PeerPrefixes[peer.Name]
		if prefixes == nil {
			prefixes = []netip.Prefix{peer.Overlay, peer.Exports}
		}
		ps := make([]string, len(prefixes))
		for i, x := range prefixes {
			ps[i] = x.String()
		}
		fmt.Fprintf(&b, "  - name: %s\n    publicKey: %s\n    prefixes: [%s]\n", peer.Name, peer.Key.PublicKey(), strings.Join(ps, ", "))
		if s := r.SeesUs[peer.Name]; s != "" {
			fmt.Fprintf(&b, "    seesUs: %s\n", s)
		}
		b.WriteString("    paths:\n")
		for _, p := range paths {
			fmt.Fprintf(&b, "      - {name: %s, endpoint: \"%s\"}\n", p.Name, p.Endpoint(r.Name))
		}
	}
	return b.String()
}

// Start creates every relay's agent from its rendered configuration and
// runs them until Close.
func (f *Federation) Start() error {
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	for _, r := range f.relays {
		r.Config = f.RenderConfig(r)
		cfg, err := config.Parse([]byte(r.Config))
		if err != nil {
			return fmt.Errorf("federation: config of %s: %w\n%s", r.Name, err, r.Config)
		}
		r.Agent, err = agent.New(cfg, agent.Options{
			Logger:       f.log.With("relay", r.Name),
			AdminAddr:    "-",
			NetstackDial: r.Dial,
		})
		if err != nil {
			return fmt.Errorf("federation: starting %s: %w", r.Name, err)
		}
		ag := r.Agent
		f.wg.Go(func() {
			if err := ag.Run(ctx); err != nil {
				f.log.Error("relay stopped", "relay", r.Name, "err", err)
			}
		})
	}
	return nil
}

// Close stops every relay and link and waits for them.
func (f *Federation) Close() error {
	if f.cancel != nil {
		f.cancel()
	}
	f.wg.Wait()
	for _, r := range f.relays {
		if r.Agent != nil {
			r.Agent.Close()
		}
	}
	var errs []error
	for _, l := range f.links {
		errs = append(errs, l.Close())
	}
	return errors.Join(errs...)
}

func newKey() (keys.Private, error) {
	k, err := keys.NewPrivate()
	if err != nil {
		return k, fmt.Errorf("reading randomness: %w", err)
	}
	return k, nil
}

// Relays bind their port some time after it was chosen. A port the kernel
// hands out (port 0) comes from the ephemeral range, where any socket of a
// test running in parallel may take it meanwhile; ports below that range
// (Linux's default starts at 32768) are taken only by those that ask for
// them by number.
const portLow, portHigh = 20000, 32767

// handedOut holds every port freeUDPPort returned in this process: the
// check socket is closed at once, so without it the same free port would
// be handed to two relays whenever the draw repeats (with 250 relays in
// 12767 ports, nine runs in ten).
var handedOut struct {
	sync.Mutex
	ports map[int]bool
}

// freeUDPPort picks a free UDP port on 127.0.0.1 below the ephemeral range,
// never one it returned before.
func freeUDPPort() (uint16, error) {
	handedOut.Lock()
	defer handedOut.Unlock()
	for range 200 {
		p := portLow + mrand.IntN(portHigh-portLow)
		if handedOut.ports[p] {
			continue
		}
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: p})
		if err != nil {
			continue
		}
		c.Close()
		if handedOut.ports == nil {
			handedOut.ports = map[int]bool{}
		}
		handedOut.ports[p] = true
		return uint16(p), nil
	}
	return 0, errors.New("no free UDP port below the ephemeral range")
}

// SetHealth gives relay name the health mapping health (YAML flow, as
// Relay.Health) and applies its configuration, rendered again, to the
// running relay through the live-apply path.
func (f *Federation) SetHealth(ctx context.Context, name, health string) error {
	r := f.Relay(name)
	if r == nil || r.Agent == nil {
		return fmt.Errorf("federation: no running relay %s", name)
	}
	r.Health = health
	r.Config = f.RenderConfig(r)
	cfg, err := config.Parse([]byte(r.Config))
	if err != nil {
		return fmt.Errorf("federation: config of %s: %w", name, err)
	}
	if err := r.Agent.Apply(ctx, cfg); err != nil {
		return fmt.Errorf("federation: applying the config of %s: %w", name, err)
	}
	return nil
}
