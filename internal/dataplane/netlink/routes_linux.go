//go:build linux

package netlink

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"slices"
	"sync"

	vnl "github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// rtProtocol tags the routes we install ("proto static" in ip route).
const rtProtocol = vnl.RouteProtocol(unix.RTPROT_STATIC)

// rtPeer is what the manager remembers of one peer.
type rtPeer struct {
	prefixes  []netip.Prefix // normalized
	reachable bool
}

// RouteManager owns the relay's routing state in the kernel: the link's
// addresses, MTU and up state, one policy rule per address family
// ("not fwmark FwMark lookup Table") and the routes of reachable peers in
// Table, all on the device named by RouteOptions.Link.
//
// The kernel state belongs to the network namespace the manager was created
// in: NewRouteManager opens a netlink handle there, and every later call goes
// through that handle whatever thread it runs on.
//
// Methods are safe for concurrent use. After Close every method returns
// ErrRoutesClosed, except Close which returns nil.
type RouteManager struct {
	opts RouteOptions
	log  *slog.Logger
	h    *vnl.Handle

	mu       sync.Mutex
	closed   bool
	started  bool        // NewRouteManager returned: rule re-adds are repairs
	families []int       // address families with a rule: FAMILY_V4 and, if the kernel has IPv6, FAMILY_V6
	prio     map[int]int // family -> current priority of our rule
	peers    map[string]*rtPeer
}

// NewRouteManager configures the link named opts.Link (addresses, MTU, up)
// and installs the policy rules, one per address family, at opts.Priority.
// The link must exist: create the TUN first. Rules left by an earlier run
// with the same table and fwmark are adopted rather than duplicated; call
// CleanupStale first to start from nothing.
//
// On error no rule is left behind (the link keeps what setup reached; it
// goes away with the TUN device).
func NewRouteManager(opts RouteOptions) (*RouteManager, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("route options: %w", err)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h, err := NewHandle()
	if err != nil {
		return nil, err
	}
	m := &RouteManager{
		opts:  opts,
		log:   log.With("component", "routes", "link", opts.Link, "table", opts.Table),
		h:     h,
		prio:  map[int]int{},
		peers: map[string]*rtPeer{},
	}
	if err := m.setupLink(); err != nil {
		h.Close()
		return nil, err
	}
	m.families = []int{vnl.FAMILY_V4, vnl.FAMILY_V6}
	for _, fam := range m.families {
		m.prio[fam] = opts.Priority
	}
	for _, fam := range slices.Clone(m.families) {
		if _, err := m.ensureRule(fam); err != nil {
			if fam == vnl.FAMILY_V6 && errors.Is(err, unix.EAFNOSUPPORT) {
				m.log.Warn("kernel has no IPv6 policy routing; IPv6 peer prefixes will be refused")
				m.families = m.families[:1]
				continue
			}
			_ = m.deleteRules()
			h.Close()
			return nil, err
		}
	}
	m.started = true
	m.log.Info("policy rules installed", "priority", opts.Priority, "fwmark", fmt.Sprintf("%#x", opts.FwMark))
	return m, nil
}

// setupLink sets the MTU and addresses of the link and brings it up.
func (m *RouteManager) setupLink() error {
	link, err := m.h.LinkByName(m.opts.Link)
	if err != nil {
		return fmt.Errorf("find link %q: %w", m.opts.Link, err)
	}
	if m.opts.MTU > 0 && link.Attrs().MTU != m.opts.MTU {
		if err := m.h.LinkSetMTU(link, m.opts.MTU); err != nil {
			return fmt.Errorf("set mtu %d on %q: %w", m.opts.MTU, m.opts.Link, err)
		}
	}
	for _, a := range m.opts.Addresses {
		addr := &vnl.Addr{IPNet: IPNet(a)}
		if a.Addr().Is6() {
			// A TUN has no neighbours to duplicate the address: skip DAD so
			// the address is usable at once instead of "tentative".
			addr.Flags = unix.IFA_F_NODAD
		}
		if err := m.h.AddrReplace(link, addr); err != nil {
			return fmt.Errorf("set address %s on %q: %w", a, m.opts.Link, err)
		}
	}
	if err := m.h.LinkSetUp(link); err != nil {
		return fmt.Errorf("set %q up: %w", m.opts.Link, err)
	}
	return nil
}

// SetPeer installs routes (dev Link, table Table) for the peer's prefixes
// when reachable is true and withdraws them when it is false, so that the
// host's own routes (Liqo's consumer path) carry the traffic. Withdrawal is
// a route delete, never a blackhole. The call is idempotent and handles a
// changed prefix list: routes of prefixes the peer no longer has are
// deleted.
//
// The peer's new state is recorded even when a netlink call fails, so a
// later EnsureRules converges to it; the error says what failed. A prefix
// already claimed by another peer fails with ErrRoutePrefixConflict and
// changes nothing.
func (m *RouteManager) SetPeer(name string, prefixes []netip.Prefix, reachable bool) error {
	want, err := rtNormalize(prefixes)
	if err != nil {
		return fmt.Errorf("peer %q: %w", name, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrRoutesClosed
	}
	for _, p := range want {
		if p.Addr().Is6() && !slices.Contains(m.families, vnl.FAMILY_V6) {
			return fmt.Errorf("peer %q: prefix %s: kernel has no IPv6 policy routing", name, p)
		}
		for other, op := range m.peers {
			if other != name && slices.Contains(op.prefixes, p) {
				return fmt.Errorf("peer %q: prefix %s already belongs to peer %q: %w", name, p, other, ErrRoutePrefixConflict)
			}
		}
	}
	var have []netip.Prefix
	if old := m.peers[name]; old != nil && old.reachable {
		have = old.prefixes
	}
	m.peers[name] = &rtPeer{prefixes: want, reachable: reachable}
	if !reachable {
		want = nil
	}
	add, del := rtDiff(have, want)
	if len(add) == 0 && len(del) == 0 {
		return nil
	}
	if err := m.apply(add, del); err != nil {
		return fmt.Errorf("peer %q: %w", name, err)
	}
	switch {
	case reachable:
		m.log.Info("peer routes installed", "peer", name, "added", add, "deleted", del)
	default:
		m.log.Info("peer routes withdrawn", "peer", name, "deleted", del)
	}
	return nil
}

// RemovePeer withdraws the peer's routes and forgets it. Removing an unknown
// peer is not an error.
func (m *RouteManager) RemovePeer(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrRoutesClosed
	}
	old := m.peers[name]
	if old == nil {
		return nil
	}
	delete(m.peers, name)
	if !old.reachable {
		return nil
	}
	if err := m.apply(nil, old.prefixes); err != nil {
		return fmt.Errorf("remove peer %q: %w", name, err)
	}
	m.log.Info("peer removed", "peer", name, "deleted", old.prefixes)
	return nil
}

// EnsureRules is called periodically by the agent to undo what others did
// to our state. It
//   - re-adds our policy rule of a family when it is missing and deletes
//     duplicates of it;
//   - moves our rule ahead of foreign rules that shadow our table (see
//     rtShadows for what that means), by re-adding it at one less than the
//     lowest shadowing priority and then deleting the old one, so no packet
//     sees a gap. Foreign rules are never deleted or changed. The new
//     priority sticks for the life of the manager. When the shadowing rule
//     sits at priority 1 or 0 there is no room ahead of it and
//     ErrRuleShadowed is returned (the agent logs it and keeps running);
//     Shadowing is judged against the prefixes of reachable peers only, so
//     with no reachable peer nothing moves; SetPeer does not check it (it
//     stays cheap on the failover path), the next EnsureRules does;
//   - brings the link back up and re-adds missing addresses (a link set
//     down loses its routes, and they cannot be re-added until it is up);
//   - re-adds the missing routes of reachable peers and deletes routes in
//     our table that no peer wants (the table is the relay's).
//
// repaired reports whether anything had to be changed.
func (m *RouteManager) EnsureRules() (repaired bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false, ErrRoutesClosed
	}
	var errs []error
	for _, fam := range m.families {
		r, err := m.ensureRule(fam)
		repaired = repaired || r
		if err != nil {
			errs = append(errs, err)
		}
	}
	r, err := m.ensureLink()
	repaired = repaired || r
	if err != nil {
		errs = append(errs, err)
	}
	r, err = m.ensureRoutes()
	repaired = repaired || r
	if err != nil {
		errs = append(errs, err)
	}
	return repaired, errors.Join(errs...)
}

// Close removes our routes and rules and closes the netlink handle. The link
// itself goes away when the TUN device is closed. Close is idempotent.
func (m *RouteManager) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	defer m.h.Close()
	errs := []error{FlushTable(m.h, vnl.FAMILY_ALL, m.opts.Table), m.deleteRules()}
	m.log.Info("routes and policy rules removed")
	return errors.Join(errs...)
}

// wanted returns the prefixes of all reachable peers, normalized.
func (m *RouteManager) wanted() []netip.Prefix {
	var out []netip.Prefix
	for _, name := range slices.Sorted(maps.Keys(m.peers)) {
		if p := m.peers[name]; p.reachable {
			out = append(out, p.prefixes...)
		}
	}
	out, _ = rtNormalize(out)
	return out
}
