//go:build linux

package liqonet

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// nftTable programs the relay's nftables table over netlink (nf_tables),
// in the network namespace it was opened in: no nft binary, no process.
// Each operation gets its own nftables.Conn, whose requests open their own
// netlink socket in that namespace: a failed batch leaves no queued message
// or sticky error, and nothing unread, behind for the next one.
type nftTable struct {
	name string
	nsFD int // the namespace's handle, held until close
}

// openNft binds the table name to the calling thread's network namespace.
func openNft(name string) (*nftTable, error) {
	fd, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("liqo: open the network namespace for nftables: %w", err)
	}
	return &nftTable{name: name, nsFD: fd}, nil
}

func (n *nftTable) close() { unix.Close(n.nsFD) }

// conn returns a fresh connection for one operation in the namespace.
func (n *nftTable) conn() (*nftables.Conn, error) {
	c, err := nftables.New(nftables.WithNetNSFd(n.nsFD))
	if err != nil {
		return nil, fmt.Errorf("liqo: nftables connection: %w", err)
	}
	return c, nil
}

func (n *nftTable) table() *nftables.Table {
	return &nftables.Table{Name: n.name, Family: nftables.TableFamilyIPv4}
}

// replace makes the table exactly the relay's (docs/liqo-addressing.md, §7)
// in one transaction: add (so that the delete finds it), delete, define.
// The kernel commits the batch whole or not at all, so no packet sees a
// half table, and a table someone changed by hand is replaced. Each pin
// gets two sets and one rule of its own, in the order given: a source is
// pinned only towards a peer that maps it. Only IPv4 prefixes go in. This
// is the netlink form of the nft script
//
//	table ip <name> {
//		set mapped_<peer> { type ipv4_addr; flags interval; auto-merge; elements = { ... } }
//		set peers_<peer> { type ipv4_addr; flags interval; auto-merge; elements = { ... } }
//		... (two sets for every peer)
//		chain restore {
//			type filter hook prerouting priority -150; policy accept;
//			ct mark & <mark> == <mark> meta mark set meta mark | <mark>
//		}
//		chain pin {
//			type nat hook prerouting priority -101; policy accept;
//			iifname != <tunnel> iifname != <link> ip saddr @mapped_<peer> ip daddr @peers_<peer> ct mark set ct mark | <mark> meta mark set meta mark | <mark> dnat to ip daddr
//			... (one rule for every peer)
//			iifname <link> ct mark set ct mark | <mark> dnat to ip daddr
//		}
//	}
func (n *nftTable) replace(o Options, pins []pin) error {
	c, err := n.conn()
	if err != nil {
		return err
	}
	t := n.table()
	c.AddTable(t)
	c.DelTable(t)
	c.AddTable(t)
	type sets struct{ mapped, peers *nftables.Set }
	var bySet []sets
	for _, p := range pins {
		var ss sets
		for _, s := range []struct {
			name  string
			elems []netip.Prefix
			dst   **nftables.Set
		}{{mappedSet(p.peer), p.mapped, &ss.mapped}, {peersSet(p.peer), p.prefixes, &ss.peers}} {
			set := &nftables.Set{Table: t, Name: s.name, KeyType: nftables.TypeIPAddr, Interval: true, AutoMerge: true}
			if err := c.AddSet(set, intervalElements(ranges(s.elems))); err != nil {
				return fmt.Errorf("liqo: nft set %s: %w", s.name, err)
			}
			*s.dst = set
		}
		bySet = append(bySet, ss)
	}
	accept := nftables.ChainPolicyAccept
	restore := c.AddChain(&nftables.Chain{
		Name: "restore", Table: t, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookPrerouting, Priority: nftables.ChainPriorityRef(restorePriority), Policy: &accept,
	})
	c.AddRule(&nftables.Rule{Table: t, Chain: restore, Exprs: restoreExprs(o.Mark)})
	pinChain := c.AddChain(&nftables.Chain{
		Name: "pin", Table: t, Type: nftables.ChainTypeNAT,
		Hooknum: nftables.ChainHookPrerouting, Priority: nftables.ChainPriorityRef(pinPriority), Policy: &accept,
	})
	for _, ss := range bySet {
		c.AddRule(&nftables.Rule{Table: t, Chain: pinChain, Exprs: pinPeerExprs(o, ss.mapped, ss.peers)})
	}
	c.AddRule(&nftables.Rule{Table: t, Chain: pinChain, Exprs: pinLinkExprs(o)})
	if err := c.Flush(); err != nil {
		return fmt.Errorf("liqo: replace nft table ip %s: %w", n.name, err)
	}
	return nil
}

// exists reads the table from the kernel (one netlink request).
func (n *nftTable) exists() (bool, error) {
	c, err := n.conn()
	if err != nil {
		return false, err
	}
	_, err = c.ListTableOfFamily(n.name, nftables.TableFamilyIPv4)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.ENOENT):
		return false, nil
	}
	return false, fmt.Errorf("liqo: read nft table ip %s: %w", n.name, err)
}

// remove deletes the table; a missing one is fine.
func (n *nftTable) remove() error {
	ok, err := n.exists()
	if err != nil || !ok {
		return err
	}
	c, err := n.conn()
	if err != nil {
		return err
	}
	c.DelTable(n.table())
	if err := c.Flush(); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("liqo: delete nft table ip %s: %w", n.name, err)
	}
	return nil
}

// intervalElements encodes ranges as nft does for an interval set: each
// range is its first address and, flagged as an interval end, the address
// after its last (none when it runs to 255.255.255.255), preceded by an
// interval end at 0.0.0.0 unless the first range starts there.
func intervalElements(rs []addrRange) []nftables.SetElement {
	var out []nftables.SetElement
	if len(rs) > 0 && rs[0].first != netip.IPv4Unspecified() {
		out = append(out, nftables.SetElement{Key: netip.IPv4Unspecified().AsSlice(), IntervalEnd: true})
	}
	for _, r := range rs {
		out = append(out, nftables.SetElement{Key: r.first.AsSlice()})
		if end := r.last.Next(); end.IsValid() {
			out = append(out, nftables.SetElement{Key: end.AsSlice(), IntervalEnd: true})
		}
	}
	return out
}

// Expression building blocks. Everything goes through register 1, as nft
// compiles these rules.
const reg = 1

// ifname is an interface name as meta iifname loads it: IFNAMSIZ bytes,
// zero padded.
func ifname(name string) []byte {
	b := make([]byte, unix.IFNAMSIZ)
	copy(b, name)
	return b
}

// iifname matches (or, with neq, excludes) an input interface.
func iifname(name string, op expr.CmpOp) []expr.Any {
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyIIFNAME, Register: reg},
		&expr.Cmp{Op: op, Register: reg, Data: ifname(name)},
	}
}

// ipIn matches the IPv4 address at offset (12 source, 16 destination) of
// the network header against a set.
func ipIn(offset uint32, s *nftables.Set) []expr.Any {
	return []expr.Any{
		&expr.Payload{DestRegister: reg, Base: expr.PayloadBaseNetworkHeader, Offset: offset, Len: 4},
		&expr.Lookup{SourceRegister: reg, SetName: s.Name, SetID: s.ID},
	}
}

// orMark is "<ct|meta> mark set <ct|meta> mark | bit"; marks are host
// endian.
func orMark(ct bool, bit uint32) []expr.Any {
	bits := &expr.Bitwise{SourceRegister: reg, DestRegister: reg, Len: 4,
		Mask: binaryutil.NativeEndian.PutUint32(^bit), Xor: binaryutil.NativeEndian.PutUint32(bit)}
	if ct {
		return []expr.Any{&expr.Ct{Key: expr.CtKeyMARK, Register: reg}, bits, &expr.Ct{Key: expr.CtKeyMARK, Register: reg, SourceRegister: true}}
	}
	return []expr.Any{&expr.Meta{Key: expr.MetaKeyMARK, Register: reg}, bits, &expr.Meta{Key: expr.MetaKeyMARK, Register: reg, SourceRegister: true}}
}

// identityDNAT is "dnat to ip daddr": a NAT binding to the packet's own
// destination, which makes netfilter skip every later NAT chain of the hook
// for the connection.
func identityDNAT() []expr.Any {
	return []expr.Any{
		&expr.Payload{DestRegister: reg, Base: expr.PayloadBaseNetworkHeader, Offset: 16, Len: 4},
		&expr.NAT{Type: expr.NATTypeDestNAT, Family: unix.NFPROTO_IPV4, RegAddrMin: reg},
	}
}

// restoreExprs is "ct mark & bit == bit meta mark set meta mark | bit".
func restoreExprs(bit uint32) []expr.Any {
	b := binaryutil.NativeEndian.PutUint32(bit)
	return slices.Concat(
		[]expr.Any{
			&expr.Ct{Key: expr.CtKeyMARK, Register: reg},
			&expr.Bitwise{SourceRegister: reg, DestRegister: reg, Len: 4, Mask: b, Xor: make([]byte, 4)},
			&expr.Cmp{Op: expr.CmpOpEq, Register: reg, Data: b},
		},
		orMark(false, bit),
	)
}

// pinPeerExprs is a pin chain rule of one peer: a new connection from a
// source the peer maps to one of the peer's prefixes, not from Liqo's
// tunnel or the relay's link.
func pinPeerExprs(o Options, mapped, peers *nftables.Set) []expr.Any {
	return slices.Concat(
		iifname(o.Tunnel, expr.CmpOpNeq), iifname(o.Link, expr.CmpOpNeq),
		ipIn(12, mapped), ipIn(16, peers),
		orMark(true, o.Mark), orMark(false, o.Mark), identityDNAT(),
	)
}

// pinLinkExprs is the pin chain's last rule: every connection entering
// from the relay's link.
func pinLinkExprs(o Options) []expr.Any {
	return slices.Concat(iifname(o.Link, expr.CmpOpEq), orMark(true, o.Mark), identityDNAT())
}
