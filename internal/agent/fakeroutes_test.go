package agent_test

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"github.com/liqo-relay/relay/internal/agent"
)

// fakeRoutes is an in-memory route table with the contract of
// netlink.RouteManager that matters to reloads: a prefix belongs to one peer at
// most, and SetPeer of a prefix another peer holds fails and changes
// nothing. fail, when set, can make any call fail first (and then change
// nothing).
type fakeRoutes struct {
	mu    sync.Mutex
	peers map[string]fakeRoute
	fail  func(op, name string, prefixes []netip.Prefix) error
}

type fakeRoute struct {
	prefixes  []netip.Prefix
	reachable bool
}

var _ agent.RouteTable = (*fakeRoutes)(nil)

func newFakeRoutes() *fakeRoutes { return &fakeRoutes{peers: map[string]fakeRoute{}} }

func (r *fakeRoutes) setFail(f func(op, name string, prefixes []netip.Prefix) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail = f
}

func (r *fakeRoutes) SetPeer(name string, prefixes []netip.Prefix, reachable bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		if err := r.fail("set", name, prefixes); err != nil {
			return err
		}
	}
	var norm []netip.Prefix
	for _, p := range prefixes {
		norm = append(norm, p.Masked())
		for other, op := range r.peers {
			if other != name && slices.Contains(op.prefixes, p.Masked()) {
				return fmt.Errorf("peer %q: prefix %s already belongs to peer %q", name, p, other)
			}
		}
	}
	slices.SortFunc(norm, func(a, b netip.Prefix) int { return strings.Compare(a.String(), b.String()) })
	r.peers[name] = fakeRoute{slices.Compact(norm), reachable}
	return nil
}

func (r *fakeRoutes) RemovePeer(name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		if err := r.fail("remove", name, nil); err != nil {
			return err
		}
	}
	delete(r.peers, name)
	return nil
}

func (r *fakeRoutes) EnsureRules() (bool, error) { return false, nil }
func (r *fakeRoutes) Close() error               { return nil }

// String lists every peer's routes, sorted: comparable snapshots.
func (r *fakeRoutes) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(r.peers)) {
		p := r.peers[name]
		fmt.Fprintf(&b, "%s reachable=%v %v\n", name, p.reachable, p.prefixes)
	}
	return b.String()
}

// owner returns the peer that holds prefix p, or "".
func (r *fakeRoutes) owner(p netip.Prefix) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, op := range r.peers {
		if slices.Contains(op.prefixes, p.Masked()) {
			return name
		}
	}
	return ""
}
