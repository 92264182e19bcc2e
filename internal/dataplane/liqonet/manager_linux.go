//go:build linux

package liqonet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// netlinkTimeout bounds every netlink request (see internal/dataplane/tun).
const netlinkTimeout = 5 * time.Second

// peerState is what the manager remembers of one peer.
type peerState struct {
	prefixes  []netip.Prefix
	mapped    []netip.Prefix
	reachable bool
}

// Stats are the manager's counters since New.
type Stats struct {
	// Reasserts counts the times the relay's policy rules were moved ahead
	// of a foreign rule that had landed before them.
	Reasserts uint64
	// Resets counts, per peer, the pinned connections deleted from
	// conntrack when the relay withdrew the peer: they cannot survive the
	// fall back to Liqo's path.
	Resets map[string]uint64
}

// Manager owns the relay's Liqo integration state in the kernel (package
// doc). Methods are safe for concurrent use; after Close they return
// ErrClosed, except Close, which returns nil.
type Manager struct {
	opts   Options
	log    *slog.Logger
	h      *netlink.Handle
	nft    *nftTable
	cancel context.CancelFunc
	done   chan struct{}

	mu        sync.Mutex
	closed    bool
	base      int // priority of our first rule
	peers     map[string]*peerState
	reasserts uint64
	resets    map[string]uint64
}

// New installs the nft table, the policy rules and the copy of Liqo's
// routes in the current network namespace and starts watching rule and route
// changes. Leftovers of an earlier run with the same options are replaced.
func New(opts Options) (*Manager, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("liqo options: %w", err)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h, err := netlink.NewHandle(unix.NETLINK_ROUTE, unix.NETLINK_NETFILTER)
	if err != nil {
		return nil, fmt.Errorf("liqo: open netlink handle: %w", err)
	}
	if err := h.SetSocketTimeout(netlinkTimeout); err != nil {
		h.Close()
		return nil, fmt.Errorf("liqo: set netlink timeout: %w", err)
	}
	nft, err := openNft(opts.NftTable)
	if err != nil {
		h.Close()
		return nil, err
	}
	w, err := newWatcher()
	if err != nil {
		nft.close()
		h.Close()
		return nil, err
	}
	m := &Manager{
		opts:   opts,
		log:    log.With("component", "liqonet", "nftTable", opts.NftTable),
		h:      h,
		nft:    nft,
		base:   opts.Priority,
		peers:  map[string]*peerState{},
		resets: map[string]uint64{},
		done:   make(chan struct{}),
	}
	err = m.writeTable()
	if err == nil {
		_, err = m.ensureLocked(false)
	}
	if err != nil {
		w.close()
		_ = m.teardown()
		nft.close()
		h.Close()
		return nil, err
	}
	m.log.Info("liqo integration installed", "priority", m.base, "mark", fmt.Sprintf("%#x", opts.Mark))
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	go m.watch(ctx, w)
	return m, nil
}

// SetPeer records a peer's prefixes and whether the relay carries it. A
// reachable peer's prefixes are pinned for the sources the peer maps
// (SetMapped), in the peer's own nft sets mapped_<name> and peers_<name>;
// name must fit an nft set name (letters, digits, '-', '_', '.'). When a
// peer stops being reachable its prefixes leave its set and its pinned
// connections are deleted from conntrack (counted in Stats.Resets): their
// next packet takes Liqo's path, where the remote pod answers a
// connection it does not know with a reset.
func (m *Manager) SetPeer(name string, prefixes []netip.Prefix, reachable bool) error {
	if err := checkPeerName(name); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	p := m.peer(name)
	if _, ok := m.resets[name]; !ok {
		m.resets[name] = 0 // the series exists from the peer's first appearance
	}
	was := p.reachable
	p.prefixes, p.reachable = v4(prefixes), reachable
	if err := m.writeTable(); err != nil {
		return err
	}
	if was && !reachable {
		return m.resetLocked(name, p.prefixes)
	}
	return nil
}

// SetMapped records the local sources a peer knows (its seesUs reals): only
// connections from them to that peer's prefixes are pinned, so a pod whose
// mapping for the peer has not arrived (or that another peer maps) keeps
// Liqo's path to it.
func (m *Manager) SetMapped(name string, mapped []netip.Prefix) error {
	if err := checkPeerName(name); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	p := m.peer(name)
	next := v4(mapped)
	if slices.Equal(p.mapped, next) {
		return nil
	}
	p.mapped = next
	return m.writeTable()
}

// RemovePeer forgets a peer, resetting its pinned connections if it was
// reachable.
func (m *Manager) RemovePeer(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	p, ok := m.peers[name]
	if !ok {
		return nil
	}
	delete(m.peers, name)
	err := m.writeTable()
	if err == nil && p.reachable {
		err = m.resetLocked(name, p.prefixes)
	}
	delete(m.resets, name)
	return err
}

// Ensure repairs what someone else changed: the nft table when it is gone,
// the policy rules (moved ahead of any foreign rule that landed before them)
// and the copy of Liqo's routes. repaired reports a change.
func (m *Manager) Ensure() (repaired bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false, ErrClosed
	}
	ok, err := m.nft.exists()
	if err != nil {
		return false, err
	}
	if !ok {
		m.log.Warn("nft table was removed by someone else: restoring")
		if err := m.writeTable(); err != nil {
			return false, err
		}
		repaired = true
	}
	r, err := m.ensureLocked(true)
	return repaired || r, err
}

// Stats returns a copy of the counters.
func (m *Manager) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := Stats{Reasserts: m.reasserts, Resets: make(map[string]uint64, len(m.resets))}
	for k, v := range m.resets {
		s.Resets[k] = v
	}
	return s
}

// Close stops watching and removes the nft table, the rules and the copied
// routes. Pinned connections keep their conntrack entries; with the rules
// gone their packets take Liqo's path.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	m.cancel()
	<-m.done
	err := m.teardown()
	m.nft.close()
	m.h.Close()
	return err
}

// peer returns the peer's state, creating it. Called with m.mu held.
func (m *Manager) peer(name string) *peerState {
	p := m.peers[name]
	if p == nil {
		p = &peerState{}
		m.peers[name] = p
	}
	return p
}

// pins returns the contents of the nft table, one pin per peer, by name.
// Called with m.mu held.
func (m *Manager) pins() []pin {
	out := make([]pin, 0, len(m.peers))
	for name, p := range m.peers {
		pn := pin{peer: name, mapped: p.mapped}
		if p.reachable {
			pn.prefixes = p.prefixes
		}
		out = append(out, pn)
	}
	slices.SortFunc(out, func(a, b pin) int { return strings.Compare(a.peer, b.peer) })
	return out
}

// writeTable replaces the nft table. Called with m.mu held (or before the
// manager is shared).
func (m *Manager) writeTable() error {
	return m.nft.replace(m.opts, m.pins())
}

// ensureLocked reasserts the rules and syncs the route copy. Called with
// m.mu held.
func (m *Manager) ensureLocked(started bool) (bool, error) {
	moved, err := m.ensureRules(started)
	if err != nil {
		return moved, err
	}
	routed, err := m.ensureConsumerRoute()
	if err != nil {
		return moved || routed, err
	}
	copied, err := m.syncInTable()
	return moved || routed || copied, err
}

// teardown removes everything the manager installs; missing pieces are
// fine.
func (m *Manager) teardown() error {
	var errs []error
	if err := m.nft.remove(); err != nil {
		errs = append(errs, err)
	}
	if err := m.deleteRules(); err != nil {
		errs = append(errs, err)
	}
	for _, t := range []int{m.opts.InTable, m.opts.ConsumerTable} {
		if err := flushTable(m.h, t); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// flushTable deletes every IPv4 route of table.
func flushTable(h *netlink.Handle, table int) error {
	routes, err := h.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Table: table}, netlink.RT_FILTER_TABLE)
	if err != nil {
		return fmt.Errorf("list routes of table %d: %w", table, err)
	}
	var errs []error
	for i := range routes {
		if err := h.RouteDel(&routes[i]); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("delete route %s from table %d: %w", routes[i].Dst, table, err))
		}
	}
	return errors.Join(errs...)
}
