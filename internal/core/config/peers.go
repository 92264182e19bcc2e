package config

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/liqo-relay/relay/internal/core/keys"
)

// validatePeers checks each peer and the relations between peers and with
// our own addresses and exports. global holds the problems already reported
// for the global health block, which peers inheriting it need not repeat.
func (c *Config) validatePeers(e *errList, global map[healthProblem]bool) {
	var own keys.Public
	if !c.PrivateKey.IsZero() {
		own = c.PublicKey()
	}
	names := make(map[string]int, len(c.Peers))
	keys := make(map[keys.Public]int, len(c.Peers))
	for i := range c.Peers {
		p := &c.Peers[i]
		path := index("peers", i)
		switch j, dup := names[p.Name]; {
		case p.Name == "":
			e.checkf(field(path, "name"), "required")
		case !isDNSLabel(p.Name):
			e.checkf(field(path, "name"), fmt.Sprintf("%q is not a DNS-1123 label (%s)", p.Name, dnsLabelRule))
		case p.Name == c.Name:
			e.checkf(field(path, "name"), fmt.Sprintf("%q is this relay's own name", p.Name))
		case dup:
			e.checkf(field(path, "name"), fmt.Sprintf("duplicate peer name %q (also peers[%d])", p.Name, j))
		default:
			names[p.Name] = i
		}
		switch j, dup := keys[p.PublicKey]; {
		case p.PublicKey.IsZero():
			e.checkf(field(path, "publicKey"), "required")
		case p.PublicKey == own:
			e.checkf(field(path, "publicKey"), "is this relay's own public key")
		case dup:
			e.checkf(field(path, "publicKey"), fmt.Sprintf("public key also used by peer %q (peers[%d])", c.Peers[j].Name, j))
		default:
			keys[p.PublicKey] = i
		}
		c.validatePeer(e, path, p)
		for _, hp := range healthProblems(p.Health) {
			if !global[hp] {
				e.checkf(field(path, "health."+hp.field), hp.msg)
			}
		}
	}
	c.reportPeerConflicts(e)
}

func (c *Config) validatePeer(e *errList, path string, p *Peer) {
	pp := field(path, "prefixes")
	if len(p.Prefixes) == 0 {
		e.checkf(pp, "required: at least one prefix")
	}
	checkPrefixList(e, pp, p.Prefixes, false)
	if ka := p.PersistentKeepalive; ka < 0 || ka > MaxPersistentKeepalive || ka%time.Second != 0 {
		e.checkf(field(path, "persistentKeepalive"),
			fmt.Sprintf("%v is not a whole number of seconds in 0s..%v", ka, MaxPersistentKeepalive))
	}
	c.validatePaths(e, field(path, "paths"), p.Paths)
	c.validateSeesUs(e, field(path, "seesUs"), p.SeesUs)
}

func (c *Config) validatePaths(e *errList, path string, paths []Path) {
	if len(paths) == 0 {
		e.checkf(path, "required: at least one path")
	}
	names := make(map[string]int, len(paths))
	for i, pa := range paths {
		ip := index(path, i)
		switch j, dup := names[pa.Name]; {
		case pa.Name == "":
			e.checkf(field(ip, "name"), "required")
		case !isDNSLabel(pa.Name):
			e.checkf(field(ip, "name"), fmt.Sprintf("%q is not a DNS-1123 label (%s)", pa.Name, dnsLabelRule))
		case dup:
			e.checkf(field(ip, "name"), fmt.Sprintf("duplicate path name %q (also %s)", pa.Name, index(path, j)))
		default:
			names[pa.Name] = i
		}
		if pa.Endpoint == "" {
			e.checkf(field(ip, "endpoint"), "required")
		} else if host, port, msg := splitHostPort(pa.Endpoint, false); msg != "" {
			e.checkf(field(ip, "endpoint"), msg)
		} else if host != pa.Host || port != pa.Port {
			e.checkf(field(ip, "endpoint"), fmt.Sprintf("host %q and port %d do not match endpoint %q", pa.Host, pa.Port, pa.Endpoint))
		}
		if pa.Bias < 0 {
			e.checkf(field(ip, "bias"), fmt.Sprintf("%v is negative", pa.Bias))
		}
	}
}

// local reports whether q lies inside one of our exports or addresses, and
// so may be translated for a peer.
func (c *Config) local(q netip.Prefix) bool {
	for _, p := range c.Exports {
		if p.IsValid() && p.Bits() <= q.Bits() && p.Contains(q.Addr()) {
			return true
		}
	}
	for _, p := range c.Addresses {
		if p.IsValid() && p.Bits() <= q.Bits() && p.Masked().Contains(q.Addr()) {
			return true
		}
	}
	return false
}

func (c *Config) validateSeesUs(e *errList, path string, ms []Mapping) {
	// Mappings that are valid on their own, checked for overlaps below.
	var reals, ases []span
	for i, m := range ms {
		ip := index(path, i)
		ok := true
		for _, f := range []struct {
			name string
			p    netip.Prefix
		}{{"real", m.Real}, {"as", m.As}} {
			switch {
			case !f.p.IsValid():
				e.checkf(field(ip, f.name), "required")
				ok = false
			case f.p.Addr().Is4In6():
				e.checkf(field(ip, f.name), fmt.Sprintf("%s: IPv4-mapped IPv6 prefixes are not supported; write the IPv4 prefix", f.p))
				ok = false
			case f.p != f.p.Masked():
				e.checkf(field(ip, f.name), fmt.Sprintf("%s has host bits set (did you mean %s?)", f.p, f.p.Masked()))
				ok = false
			}
		}
		if !ok {
			continue
		}
		if m.Real.Addr().Is4() != m.As.Addr().Is4() {
			e.checkf(ip, fmt.Sprintf("real %s and as %s are of different address families", m.Real, m.As))
			continue
		}
		if m.Real.Bits() != m.As.Bits() {
			e.checkf(ip, fmt.Sprintf("real %s and as %s differ in length", m.Real, m.As))
			continue
		}
		if !c.local(m.Real) {
			e.checkf(field(ip, "real"), fmt.Sprintf("%s is not inside exports or addresses", m.Real))
		}
		reals = append(reals, span{p: m.Real, idx: i})
		ases = append(ases, span{p: m.As, idx: i})
	}
	for _, side := range []struct {
		name  string
		spans []span
	}{{"real", reals}, {"as", ases}} {
		for _, cf := range selfOverlaps(side.spans) {
			e.checkf(field(index(path, cf.at.idx), side.name), fmt.Sprintf("%s overlaps %s.%s %s",
				cf.at.p, index(path, cf.other.idx), side.name, cf.other.p))
		}
	}
}
