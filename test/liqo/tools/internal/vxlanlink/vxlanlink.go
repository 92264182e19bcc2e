package vxlanlink

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/liqo-relay/relay/test/liqo/tools/internal/geneveplan"
)

const (
	// OwnerAlias is the alias (IFLA_IFALIAS) of every device the stand-in
	// makes; it is how a later run, or the cleanup, knows them.
	OwnerAlias = "geneve-standin"

	// txQueueLen is the queue length Liqo gives its geneve devices.
	txQueueLen = 1000
)

// Links makes and removes tunnel ends in the network namespace of its
// netlink handle. It is safe for concurrent use; calls are serialised.
type Links struct {
	mu  sync.Mutex
	h   *netlink.Handle
	log *slog.Logger
}

// New returns Links working through h, which the caller keeps and closes
// after the last call.
func New(h *netlink.Handle, log *slog.Logger) *Links {
	return &Links{h: h, log: log}
}

// Observe lists the devices whose name has Liqo's prefix.
func (l *Links) Observe() ([]geneveplan.Device, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.observe()
}

func (l *Links) observe() ([]geneveplan.Device, error) {
	links, err := l.h.LinkList()
	if err != nil {
		return nil, fmt.Errorf("listing links: %w", err)
	}
	var out []geneveplan.Device
	for _, link := range links {
		attrs := link.Attrs()
		if !geneveplan.IsCandidate(attrs.Name) {
			continue
		}
		d := geneveplan.Device{
			Name:  attrs.Name,
			Kind:  link.Type(),
			MTU:   attrs.MTU,
			Up:    attrs.Flags&net.FlagUp != 0,
			NoARP: attrs.RawFlags&unix.IFF_NOARP != 0,
		}
		if vx, ok := link.(*netlink.Vxlan); ok {
			d.Owned = attrs.Alias == OwnerAlias
			d.VNI = uint32(vx.VxlanId)
			d.Port = uint16(vx.Port)
			if a, ok := netip.AddrFromSlice(vx.Group); ok {
				d.Remote = a.Unmap()
			}
		}
		addrs, err := l.h.AddrList(link, netlink.FAMILY_ALL)
		if err != nil {
			return nil, fmt.Errorf("listing addresses of %s: %w", attrs.Name, err)
		}
		for _, a := range addrs {
			p, ok := prefixOf(a.IPNet)
			if ok && !p.Addr().IsLinkLocalUnicast() {
				d.Addrs = append(d.Addrs, p)
			}
		}
		out = append(out, d)
	}
	return out, nil
}

// Sync makes the namespace hold exactly the wanted ends, as far as the
// stand-in's own devices go, and returns what it changed. Conflicts are
// returned as an error after everything else was done.
func (l *Links) Sync(want []geneveplan.End) (geneveplan.Changes, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	have, err := l.observe()
	if err != nil {
		return geneveplan.Changes{}, err
	}
	ch := geneveplan.Diff(want, have)
	return ch, l.apply(ch)
}

// RemoveOwned deletes every device the stand-in made in this namespace.
func (l *Links) RemoveOwned() ([]string, error) {
	ch, err := l.Sync(nil)
	return ch.Delete, err
}

func (l *Links) apply(ch geneveplan.Changes) error {
	var errs []error
	for _, name := range ch.Delete {
		if err := l.delete(name); err != nil {
			errs = append(errs, err)
		} else {
			l.log.Info("deleted tunnel end", "device", name)
		}
	}
	for _, e := range ch.Create {
		if err := l.create(e); err != nil {
			errs = append(errs, err)
		} else {
			l.log.Info("created tunnel end", "device", e.Name, "tunnel", e.Tunnel, "vni", e.VNI,
				"local", e.Local, "remote", e.Remote, "port", e.Port, "mtu", e.MTU)
		}
	}
	for _, f := range ch.Fix {
		if err := l.fix(f); err != nil {
			errs = append(errs, err)
		} else {
			l.log.Info("fixed tunnel end", "device", f.End.Name, "tunnel", f.End.Tunnel,
				"add", f.AddAddrs, "del", f.DelAddrs, "up", f.SetUp, "noarp", f.SetNoARP)
		}
	}
	for _, c := range ch.Conflicts {
		errs = append(errs, fmt.Errorf("%w: %s", ErrConflict, c))
	}
	return errors.Join(errs...)
}

// ErrConflict reports a wanted device name held by a device the stand-in
// did not make.
var ErrConflict = errors.New("device name taken")

func (l *Links) delete(name string) error {
	link, err := l.h.LinkByName(name)
	if err != nil {
		if errors.As(err, &netlink.LinkNotFoundError{}) {
			return nil
		}
		return fmt.Errorf("looking up %s: %w", name, err)
	}
	if err := l.h.LinkDel(link); err != nil {
		return fmt.Errorf("deleting %s: %w", name, err)
	}
	return nil
}

func (l *Links) create(e geneveplan.End) error {
	vx := &netlink.Vxlan{
		LinkAttrs: netlink.LinkAttrs{Name: e.Name, MTU: e.MTU, TxQLen: txQueueLen, Alias: OwnerAlias},
		VxlanId:   int(e.VNI),
		Group:     net.IP(e.Remote.AsSlice()),
		Port:      int(e.Port),
		Learning:  false,
	}
	if err := l.h.LinkAdd(vx); err != nil {
		return fmt.Errorf("creating vxlan %s (vni %d, remote %s, port %d): %w", e.Name, e.VNI, e.Remote, e.Port, err)
	}
	link, err := l.h.LinkByName(e.Name)
	if err != nil {
		return fmt.Errorf("looking up %s after creating it: %w", e.Name, err)
	}
	// Some kernels ignore IFLA_IFALIAS on creation; set it again so the
	// device is known as ours.
	if link.Attrs().Alias != OwnerAlias {
		if err := l.h.LinkSetAlias(link, OwnerAlias); err != nil {
			return fmt.Errorf("marking %s: %w", e.Name, err)
		}
	}
	noARP := e.DisableARP
	return l.fix(geneveplan.Fix{End: e, AddAddrs: []netip.Prefix{e.LocalPrefix()}, SetNoARP: &noARP, SetUp: true})
}

func (l *Links) fix(f geneveplan.Fix) error {
	link, err := l.h.LinkByName(f.End.Name)
	if err != nil {
		return fmt.Errorf("looking up %s: %w", f.End.Name, err)
	}
	for _, p := range f.DelAddrs {
		if err := l.h.AddrDel(link, &netlink.Addr{IPNet: ipNet(p)}); err != nil {
			return fmt.Errorf("removing %s from %s: %w", p, f.End.Name, err)
		}
	}
	for _, p := range f.AddAddrs {
		if err := l.h.AddrAdd(link, &netlink.Addr{IPNet: ipNet(p)}); err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("adding %s to %s: %w", p, f.End.Name, err)
		}
	}
	if f.SetNoARP != nil {
		set := l.h.LinkSetARPOn
		if *f.SetNoARP {
			set = l.h.LinkSetARPOff
		}
		if err := set(link); err != nil {
			return fmt.Errorf("setting ARP on %s: %w", f.End.Name, err)
		}
	}
	if f.SetUp {
		if err := l.h.LinkSetUp(link); err != nil {
			return fmt.Errorf("setting %s up: %w", f.End.Name, err)
		}
	}
	return nil
}

func ipNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: net.IP(p.Addr().AsSlice()), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

func prefixOf(n *net.IPNet) (netip.Prefix, bool) {
	if n == nil {
		return netip.Prefix{}, false
	}
	a, ok := netip.AddrFromSlice(n.IP)
	if !ok {
		return netip.Prefix{}, false
	}
	a = a.Unmap()
	ones, _ := n.Mask.Size()
	return netip.PrefixFrom(a, ones), true
}
