package trace

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/liqo-relay/relay/internal/core/config"
)

// link is one path of a peer in the trace's network.
type link struct {
	peer, name string
	addr       netip.AddrPort
	rtt        time.Duration
	cut        bool
}

// setup is what the script's first lines (relay, peer, path) describe:
// the relay's configuration and the network of its paths.
type setup struct {
	cfg   *config.Config
	links []*link
	addrs map[string][]netip.AddrPort
}

// build reads the setup commands at the head of cmds and returns the
// setup and the commands after them.
func build(cmds []command) (*setup, []command, error) {
	if len(cmds) == 0 || cmds[0].verb != "relay" {
		return nil, nil, fmt.Errorf("the script must start with a relay line")
	}
	var y strings.Builder
	r := cmds[0]
	priv, err := r.key()
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(&y, "name: self\nprivateKey: %s\nlistenPort: 51820\nmode: netstack\naddresses: [100.64.0.1/32]\n", priv.Reveal())
	y.WriteString("health:\n")
	for _, o := range []string{"interval", "redundancy"} {
		if v, ok := r.opts[o]; ok {
			fmt.Fprintf(&y, "  %s: %s\n", o, v)
		}
	}
	y.WriteString("peers:\n")
	s := &setup{addrs: map[string][]netip.AddrPort{}}
	i, peers := 1, 0
	for ; i < len(cmds); i++ {
		c := cmds[i]
		switch c.verb {
		case "peer":
			if err := c.want(1); err != nil {
				return nil, nil, err
			}
			k, err := c.key()
			if err != nil {
				return nil, nil, err
			}
			peers++
			fmt.Fprintf(&y, "  - name: %s\n    publicKey: %s\n    persistentKeepalive: 25s\n    prefixes: [10.%d.0.0/24]\n", c.args[0], k.PublicKey(), peers)
			if _, ok := c.opts["next"]; ok {
				next, err := c.keyOpt("next")
				if err != nil {
					return nil, nil, err
				}
				fmt.Fprintf(&y, "    nextPublicKey: %s\n", next.PublicKey())
			}
			y.WriteString("    paths:\n")
		case "path":
			if err := c.want(3); err != nil {
				return nil, nil, err
			}
			rtt, err := c.duration(c.args[2])
			if err != nil {
				return nil, nil, err
			}
			l := &link{peer: c.args[0], name: c.args[1], rtt: rtt,
				addr: netip.AddrPortFrom(netip.AddrFrom4([4]byte{192, 0, 2, byte(len(s.links) + 1)}), 51820)}
			s.links = append(s.links, l)
			s.addrs[l.peer] = append(s.addrs[l.peer], l.addr)
			fmt.Fprintf(&y, "      - {name: %s, endpoint: %q", l.name, l.addr.String())
			if b, ok := c.opts["bias"]; ok {
				fmt.Fprintf(&y, ", bias: %s", b)
			}
			y.WriteString("}\n")
		default:
			goto done
		}
	}
done:
	cfg, err := config.Parse([]byte(y.String()))
	if err != nil {
		return nil, nil, fmt.Errorf("the relay the script describes: %w\n%s", err, y.String())
	}
	s.cfg = cfg
	return s, cmds[i:], nil
}

// link returns the path of peer called name.
func (s *setup) link(peer, name string) *link {
	for _, l := range s.links {
		if l.peer == peer && l.name == name {
			return l
		}
	}
	return nil
}

// linkAt returns the path whose address is addr.
func (s *setup) linkAt(addr netip.AddrPort) *link {
	for _, l := range s.links {
		if l.addr == addr {
			return l
		}
	}
	return nil
}
