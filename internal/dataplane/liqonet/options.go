package liqonet

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
)

// Sentinel errors. Callers match them with errors.Is.
var (
	// ErrClosed is returned by Manager methods after Close.
	ErrClosed = errors.New("liqo network manager closed")
	// ErrUnsupported is returned by New on platforms other than Linux.
	ErrUnsupported = errors.New("liqo integration is only supported on Linux")
	// ErrRulesCrowded is returned when a foreign rule sits so close to
	// priority 0 that the relay's rules cannot be moved ahead of it.
	ErrRulesCrowded = errors.New("no free rule priority ahead of a foreign rule")
)

// Limits of the options.
const (
	// liqoTableBit is set in every table ID Liqo generates
	// (pkg/route/table.go, generateTableID): a table without it can never be
	// one of Liqo's, so Liqo's CleanRules never touches rules pointing at it.
	liqoTableBit = 0x100
	// maxLinkName is IFNAMSIZ minus the terminating NUL.
	maxLinkName = 15
	// maxPriority keeps our rules ahead of "from all lookup main" (32766).
	maxPriority = 32765
	// ruleCount is how many priorities our rules take (fwmark, iif TUN,
	// consumer).
	ruleCount = 3
)

// Consumer routes the relay's own UDP datagrams toward the consumer's
// external CIDR (in the consumer's address space) into Liqo's tunnel, for the
// consumer path (docs/liqo-addressing.md, §9).
type Consumer struct {
	// CIDR is the consumer's external CIDR as the consumer sees it.
	CIDR netip.Prefix
	// Source is the gateway pod's own address, the source of the datagrams.
	// Invalid (zero) leaves the kernel's choice.
	Source netip.Addr
	// Via is the tunnel peer, for tunnel devices that need a next hop (a
	// veth in tests); zero routes straight onto the device.
	Via netip.Addr
}

// IsZero reports whether no consumer route is configured.
func (c Consumer) IsZero() bool { return !c.CIDR.IsValid() }

// Options configures a Manager.
type Options struct {
	// Link is the relay's TUN device.
	Link string
	// Tunnel is Liqo's tunnel interface in the gateway pod (liqo-tunnel).
	Tunnel string
	// Table is the relay's route table holding peer prefixes (the TUN
	// route manager's). Pinned packets are looked up there by mark.
	Table int
	// InTable receives a copy of the routes Liqo applies to traffic from
	// Tunnel, for packets the relay injects into Link.
	InTable int
	// ConsumerTable holds the consumer route.
	ConsumerTable int
	// Priority is where the relay's rules start; they take Priority,
	// Priority+1 and Priority+2 and move lower when a foreign rule lands
	// ahead of them.
	Priority int
	// Mark is the conntrack and packet mark bit of pinned connections.
	// It must be one bit and not overlap SocketMark.
	Mark uint32
	// SocketMark is the mark of the relay's own UDP sockets.
	SocketMark uint32
	// ListenPort is the relay's UDP port (the consumer rule's sport).
	ListenPort uint16
	// NftTable names the relay's nftables table (family ip).
	NftTable string
	// Consumer is the consumer route; zero installs none.
	Consumer Consumer
	// Logger receives changes and repairs; nil discards.
	Logger *slog.Logger
}

// Validate returns every problem of the options, joined.
func (o Options) Validate() error {
	var errs []error
	link := func(name, v string) {
		if v == "" || len(v) > maxLinkName {
			errs = append(errs, fmt.Errorf("%s: %q is not an interface name (1..%d bytes)", name, v, maxLinkName))
		}
	}
	link("link", o.Link)
	link("tunnel", o.Tunnel)
	if o.Link == o.Tunnel {
		errs = append(errs, fmt.Errorf("tunnel: %q is the relay's own link", o.Tunnel))
	}
	tables := map[string]int{"table": o.Table, "inTable": o.InTable, "consumerTable": o.ConsumerTable}
	seen := map[int]string{}
	for _, name := range []string{"table", "inTable", "consumerTable"} {
		t := tables[name]
		switch {
		case t <= 0 || t >= 253 && t <= 255:
			errs = append(errs, fmt.Errorf("%s: %d is unset or reserved", name, t))
		case name != "table" && t&liqoTableBit != 0:
			errs = append(errs, fmt.Errorf("%s: %d has bit 8 (0x100) set, like every Liqo table ID: Liqo would delete rules pointing at it", name, t))
		}
		if other, dup := seen[t]; dup {
			errs = append(errs, fmt.Errorf("%s: %d is also %s", name, t, other))
		}
		seen[t] = name
	}
	if o.Priority < 1 || o.Priority+ruleCount-1 > maxPriority {
		errs = append(errs, fmt.Errorf("priority: %d outside [1, %d]", o.Priority, maxPriority-ruleCount+1))
	}
	if o.Mark == 0 || o.Mark&(o.Mark-1) != 0 {
		errs = append(errs, fmt.Errorf("mark: %#x must be a single bit", o.Mark))
	}
	if o.Mark&o.SocketMark != 0 {
		errs = append(errs, fmt.Errorf("mark: %#x overlaps the sockets' mark %#x", o.Mark, o.SocketMark))
	}
	if o.ListenPort == 0 {
		errs = append(errs, errors.New("listenPort: must not be 0"))
	}
	if !validNftName(o.NftTable) {
		errs = append(errs, fmt.Errorf("nftTable: %q is not an nft identifier (letters, digits, '-', '_', at most 64)", o.NftTable))
	}
	if c := o.Consumer; !c.IsZero() {
		if !c.CIDR.Addr().Is4() {
			errs = append(errs, fmt.Errorf("consumer.cidr: %s is not IPv4 (Liqo v1.2 remaps IPv4 only)", c.CIDR))
		}
		if c.Source.IsValid() && !c.Source.Is4() {
			errs = append(errs, fmt.Errorf("consumer.source: %s is not IPv4", c.Source))
		}
		if c.Via.IsValid() && !c.Via.Is4() {
			errs = append(errs, fmt.Errorf("consumer.via: %s is not IPv4", c.Via))
		}
	}
	return errors.Join(errs...)
}

// validNftName reports whether s is a safe nft identifier.
func validNftName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_' || r == '-' || i > 0 && r >= '0' && r <= '9'
		if !ok {
			return false
		}
	}
	return true
}
