package pipe

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/liqo-relay/relay/internal/core/packet"
)

// PeerRules are the data-path rules for one peer.
type PeerRules struct {
	Name string
	// Prefixes are the destinations routed to this peer, in our address
	// space (the peer's AllowedIPs).
	Prefixes []netip.Prefix
	// Translator rewrites packets exchanged with this peer; nil = none.
	Translator *packet.Translator
}

// Rules are the inputs of Compile.
type Rules struct {
	Peers []PeerRules
	// Local is what may appear as our side of a packet: the exported
	// prefixes plus the relay's own addresses. Packets read with a source
	// outside Local, or written with a destination outside it, are dropped.
	Local []netip.Prefix
	// Exports are the prefixes we export to peers; each must lie in Local.
	Exports []netip.Prefix
	// Relay4 and Relay6 replace the source of ICMP errors raised by
	// addresses outside Local (routers, nodes); an invalid address leaves
	// such errors alone (and they are then dropped as foreign).
	Relay4, Relay6 netip.Addr
	// MTU of the tunnel: TCP MSS is clamped to MTU-40 (IPv4) and MTU-60
	// (IPv6). Zero disables clamping.
	MTU int
}

// Compiled is the immutable, lookup-ready form of Rules, swapped in
// atomically by Device.SetRules.
type Compiled struct {
	table          *packet.Table
	peers          []compiledPeer
	local          *packet.Set
	exports        *packet.Set
	relay4, relay6 netip.Addr
	mss4, mss6     int
}

type compiledPeer struct {
	name string
	tr   *packet.Translator
}

// Limits on the tunnel MTU: 576 is the IPv4 minimum datagram every host
// must accept (config requires 1280 when IPv6 is in use); above 65535 no
// IP packet fits.
const (
	minMTU = 576
	maxMTU = 65535
)

// IPv4 and IPv6 + TCP header sizes subtracted from the MTU for the MSS.
const (
	tcpIPv4Overhead = 20 + 20
	tcpIPv6Overhead = 40 + 20
)

// Compile validates r and builds its lookup structures. It reports every
// problem it finds, each naming the field.
func Compile(r Rules) (*Compiled, error) {
	var errs []error
	c := &Compiled{relay4: r.Relay4, relay6: r.Relay6}

	var entries []packet.Entry
	owner := map[netip.Prefix]string{}
	for i, p := range r.Peers {
		if p.Name == "" {
			errs = append(errs, fmt.Errorf("peers[%d].name: empty", i))
		}
		for j, pfx := range p.Prefixes {
			if !pfx.IsValid() {
				errs = append(errs, fmt.Errorf("peers[%d].prefixes[%d]: invalid prefix", i, j))
				continue
			}
			m := pfx.Masked()
			if o, dup := owner[m]; dup {
				errs = append(errs, fmt.Errorf("peers[%d].prefixes[%d]: %v already routed to peer %q", i, j, m, o))
				continue
			}
			owner[m] = p.Name
			entries = append(entries, packet.Entry{Prefix: m, Peer: i})
		}
		c.peers = append(c.peers, compiledPeer{name: p.Name, tr: p.Translator})
	}
	if t, err := packet.NewTable(entries); err != nil {
		errs = append(errs, fmt.Errorf("peers: %w", err))
	} else {
		c.table = t
	}

	for i, p := range r.Local {
		if !p.IsValid() {
			errs = append(errs, fmt.Errorf("local[%d]: invalid prefix", i))
		}
	}
	for i, p := range r.Exports {
		if !p.IsValid() {
			errs = append(errs, fmt.Errorf("exports[%d]: invalid prefix", i))
		} else if !covered(r.Local, p) {
			errs = append(errs, fmt.Errorf("exports[%d]: %v is not inside local", i, p))
		}
	}
	if r.Relay4.IsValid() && (!r.Relay4.Is4() || !containsAddr(r.Local, r.Relay4)) {
		errs = append(errs, fmt.Errorf("relay4: %v must be an IPv4 address inside local", r.Relay4))
	}
	if r.Relay6.IsValid() && (!r.Relay6.Is6() || r.Relay6.Is4In6() || !containsAddr(r.Local, r.Relay6)) {
		errs = append(errs, fmt.Errorf("relay6: %v must be an IPv6 address inside local", r.Relay6))
	}
	switch {
	case r.MTU == 0:
	case r.MTU < minMTU || r.MTU > maxMTU:
		errs = append(errs, fmt.Errorf("mtu: %d out of range [%d, %d]", r.MTU, minMTU, maxMTU))
	default:
		c.mss4, c.mss6 = r.MTU-tcpIPv4Overhead, r.MTU-tcpIPv6Overhead
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("pipe: invalid rules: %w", errors.Join(errs...))
	}
	c.local = packet.NewSet(r.Local)
	c.exports = packet.NewSet(r.Exports)
	return c, nil
}

// Peer returns the name of the peer whose prefixes contain a.
func (c *Compiled) Peer(a netip.Addr) (name string, ok bool) {
	i, ok := c.table.Lookup(a)
	if !ok {
		return "", false
	}
	return c.peers[i].name, true
}

// Exports returns the set of exported prefixes.
func (c *Compiled) Exports() *packet.Set { return c.exports }

func covered(ps []netip.Prefix, p netip.Prefix) bool {
	for _, q := range ps {
		if q.IsValid() && q.Bits() <= p.Bits() && q.Contains(p.Addr()) {
			return true
		}
	}
	return false
}

func containsAddr(ps []netip.Prefix, a netip.Addr) bool {
	for _, q := range ps {
		if q.IsValid() && q.Contains(a) {
			return true
		}
	}
	return false
}
