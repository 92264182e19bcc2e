package labservices

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Router makes a load-balancer address reach the node that serves it.
// Route and Unroute are idempotent; Routed lists the addresses routed, so
// that a restart can drop the routes of Services that went while it was
// down.
type Router interface {
	Route(ctx context.Context, a netip.Addr) error
	Unroute(ctx context.Context, a netip.Addr) error
	Routed(ctx context.Context) ([]netip.Addr, error)
}

// NetnsRouter routes each address as a host route via NextHop in the
// network namespace named Netns (the lab's underlay router).
type NetnsRouter struct {
	Netns   string
	NextHop netip.Addr
}

func (r NetnsRouter) handle() (*netlink.Handle, error) {
	ns, err := netns.GetFromName(r.Netns)
	if err != nil {
		return nil, fmt.Errorf("opening network namespace %s: %w", r.Netns, err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return nil, fmt.Errorf("netlink in network namespace %s: %w", r.Netns, err)
	}
	return h, nil
}

func hostRoute(a, via netip.Addr) *netlink.Route {
	bits := 32
	if a.Is6() {
		bits = 128
	}
	return &netlink.Route{
		Dst: &net.IPNet{IP: a.AsSlice(), Mask: net.CIDRMask(bits, bits)},
		Gw:  via.AsSlice(),
	}
}

// Route implements Router.
func (r NetnsRouter) Route(_ context.Context, a netip.Addr) error {
	h, err := r.handle()
	if err != nil {
		return err
	}
	defer h.Close()
	if err := h.RouteReplace(hostRoute(a, r.NextHop)); err != nil {
		return fmt.Errorf("route %s via %s in %s: %w", a, r.NextHop, r.Netns, err)
	}
	return nil
}

// Unroute implements Router.
func (r NetnsRouter) Unroute(_ context.Context, a netip.Addr) error {
	h, err := r.handle()
	if err != nil {
		return err
	}
	defer h.Close()
	if err := h.RouteDel(hostRoute(a, r.NextHop)); err != nil && !errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("removing the route to %s in %s: %w", a, r.Netns, err)
	}
	return nil
}

// Routed implements Router: the host routes via NextHop.
func (r NetnsRouter) Routed(_ context.Context) ([]netip.Addr, error) {
	h, err := r.handle()
	if err != nil {
		return nil, err
	}
	defer h.Close()
	routes, err := h.RouteList(nil, netlink.FAMILY_ALL)
	if err != nil {
		return nil, fmt.Errorf("listing routes in %s: %w", r.Netns, err)
	}
	var out []netip.Addr
	for _, rt := range routes {
		if rt.Dst == nil || rt.Gw == nil {
			continue
		}
		gw, ok := netip.AddrFromSlice(rt.Gw)
		ones, bits := rt.Dst.Mask.Size()
		a, ok2 := netip.AddrFromSlice(rt.Dst.IP)
		if ok && ok2 && gw.Unmap() == r.NextHop && ones == bits {
			out = append(out, a.Unmap())
		}
	}
	return out, nil
}

// FakeRouter records the routed addresses, for tests.
type FakeRouter struct {
	mu     sync.Mutex
	routes map[netip.Addr]bool
	// Err, when set, is returned by Route.
	Err error
}

// Route implements Router.
func (f *FakeRouter) Route(_ context.Context, a netip.Addr) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Err != nil {
		return f.Err
	}
	if f.routes == nil {
		f.routes = map[netip.Addr]bool{}
	}
	f.routes[a] = true
	return nil
}

// Unroute implements Router.
func (f *FakeRouter) Unroute(_ context.Context, a netip.Addr) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.routes, a)
	return nil
}

// Routed implements Router.
func (f *FakeRouter) Routed(context.Context) ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []netip.Addr
	for a := range f.routes {
		out = append(out, a)
	}
	return out, nil
}

// Has reports whether a is routed.
func (f *FakeRouter) Has(a netip.Addr) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.routes[a]
}
