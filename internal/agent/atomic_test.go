package agent_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/agent"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/keys"
)

// These tests check that a reload is all or nothing: a failure in any
// WireGuard or route step leaves the running configuration, WireGuard's
// peers and the routes exactly as they were.

// extra is a prefix no relay of the bed uses, for moves between peers.
var extra = netip.MustParsePrefix("10.99.0.0/24")

// running is what a reload may change on A, in comparable form.
type running struct {
	gen    int
	config string // peers as status shows them: prefixes, paths, bias
	wg     string // WireGuard's peers (agent.WireGuardPeers)
	routes string
	paths  string // each peer's paths as the Bind has them
}

// fakes are A's fake route table and the record of its Bind's paths.
type fakes struct {
	*fakeRoutes
	paths *pathLog
}

func (b *bed) running(rt fakes) running {
	b.t.Helper()
	st := b.status(relayA)
	var c strings.Builder
	for _, p := range st.Peers {
		fmt.Fprintf(&c, "%s %v:", p.Name, p.Prefixes)
		for _, path := range p.Paths {
			fmt.Fprintf(&c, " %s=%s bias %v", path.Name, path.Endpoint, path.Bias)
		}
		c.WriteString("\n")
	}
	wg, err := agent.WireGuardPeers(context.Background(), b.agent(relayA))
	if err != nil {
		b.t.Fatal(err)
	}
	return running{gen: st.ConfigGeneration, config: c.String(), wg: wg, routes: rt.String(), paths: rt.paths.String()}
}

func (r running) diff(want running) string {
	var out []string
	if r.gen != want.gen {
		out = append(out, fmt.Sprintf("generation %d, want %d", r.gen, want.gen))
	}
	for _, f := range []struct{ name, got, want string }{
		{"config", r.config, want.config}, {"WireGuard", r.wg, want.wg}, {"routes", r.routes, want.routes},
		{"Bind paths", r.paths, want.paths},
	} {
		if f.got != f.want {
			out = append(out, fmt.Sprintf("%s:\n%s\nwant:\n%s", f.name, f.got, f.want))
		}
	}
	return strings.Join(out, "\n")
}

// withRoutes gives A a fake route table (the bed's relays are netstack
// relays, which have none) and a record of what its Bind is told, and
// returns both.
func (b *bed) withRoutes() fakes {
	b.t.Helper()
	rt := newFakeRoutes()
	ctx := context.Background()
	if err := agent.InstallRoutes(ctx, b.agent(relayA), rt); err != nil {
		b.t.Fatal(err)
	}
	var log *pathLog
	err := agent.InstallPaths(ctx, b.agent(relayA), func(p agent.Paths) agent.Paths {
		log = newPathLog(p)
		return log
	})
	if err != nil {
		b.t.Fatal(err)
	}
	return fakes{fakeRoutes: rt, paths: log}
}

func keyHex(k keys.Public) string { return hex.EncodeToString(k[:]) }

// waitKeepalives waits until WireGuard on relay name holds the configured
// persistent keepalive of every peer. A relay turns a peer's keepalive on
// only once its session has started, and the relay with the larger public
// key leaves the first handshake to its peer for a second (see
// engine.HandshakeDeferral) before doing so: for that second a peer
// can have a session and still no keepalive. A test that compares
// WireGuard's state before and after something must take its "before"
// once this has settled, or it sees the keepalive arrive in between.
func (b *bed) waitKeepalives(name string) {
	b.t.Helper()
	want := map[string]string{}
	for _, p := range b.config(name).Peers {
		want[keyHex(p.PublicKey)] = fmt.Sprint(int(p.PersistentKeepalive.Seconds()))
	}
	waitFor(b.t, waitTimeout, name+"'s WireGuard keepalives", func() bool {
		wg, err := agent.WireGuardPeers(context.Background(), b.agent(name))
		if err != nil {
			b.t.Fatal(err)
		}
		got := wgKeepalives(wg)
		for k, v := range want {
			if got[k] != v {
				return false
			}
		}
		return true
	})
}

// wgKeepalives maps each peer's key to its persistent_keepalive_interval.
func wgKeepalives(wg string) map[string]string {
	out := map[string]string{}
	var key string
	for _, line := range strings.Split(wg, "\n") {
		k, v, _ := strings.Cut(line, "=")
		switch k {
		case "public_key":
			key = v
		case "persistent_keepalive_interval":
			out[key] = v
		}
	}
	return out
}

var errInjected = errors.New("injected failure")

// TestReloadRollsBackFailedIpcSet changes B (a new prefix, a bias) and C (a
// bias) in one reload; WireGuard refuses C's update, which comes after B's.
// The reload fails naming C, and A's configuration, WireGuard peers and
// routes are exactly as before, B's session undisturbed. Once WireGuard
// accepts again, the same reload succeeds.
func TestReloadRollsBackFailedIpcSet(t *testing.T) {
	b := newBed(t, bedOptions{Direct: 2 * time.Millisecond, Consumer: 5 * time.Millisecond, Health: calmHealth})
	b.waitActive(relayA, relayB, "direct")
	b.waitKeepalives(relayA)
	rt := b.withRoutes()
	cKey := keyHex(peerOf(t, b.config(relayA), relayC).PublicKey)
	var failing atomic.Bool
	failing.Store(true)
	err := agent.WrapIpcSet(context.Background(), b.agent(relayA), func(uapi string) error {
		// Only once: the rollback's own update of C must go through.
		if strings.Contains(uapi, "public_key="+cKey) && strings.Contains(uapi, "replace_allowed_ips") && failing.CompareAndSwap(true, false) {
			return errInjected
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	before := b.running(rt)
	mark := b.sessionMark()
	edit := func(c *config.Config) {
		if c.Peers[0].Name != relayB {
			t.Fatalf("peers %s first: the test needs B's change made before C's", c.Peers[0].Name)
		}
		pb := peerOf(t, c, relayB)
		pb.Prefixes = append(pb.Prefixes, extra)
		pb.Paths[0].Bias = 7 * time.Millisecond
		peerOf(t, c, relayC).Paths[0].Bias = 9 * time.Millisecond
	}
	err = b.reloadA(edit)
	if err == nil {
		t.Fatal("reload succeeded although WireGuard refused C's update")
	}
	for _, w := range []string{"peers[consumer]", "configuring WireGuard", "rolled back", errInjected.Error()} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
	if d := b.running(rt).diff(before); d != "" {
		t.Errorf("after the failed reload:\n%s", d)
	}
	if p, _ := b.peer(relayA, relayB); !p.Reachable || p.ActivePath != "direct" {
		t.Errorf("B after the failed reload: reachable %v, active %q", p.Reachable, p.ActivePath)
	}
	if got := b.sessionMark(); got != mark {
		t.Errorf("the failed reload disturbed B's session:\nbefore %+v\nafter  %+v", mark, got)
	}

	if err := b.reloadA(edit); err != nil {
		t.Fatalf("the same reload, WireGuard accepting again: %v", err)
	}
	after := b.running(rt)
	if after.gen != before.gen+1 || !strings.Contains(after.wg, "allowed_ip="+extra.String()) || rt.owner(extra) != relayB {
		t.Errorf("the successful reload is not in force:\n%+v", after)
	}
}

// TestReloadRollsBackFailedRoute removes C and gives B a new prefix; the
// route table refuses B's new routes, after C's were removed. The reload
// fails, C is back in the route table, C's WireGuard peer (and its session)
// was never removed, and nothing else changed.
func TestReloadRollsBackFailedRoute(t *testing.T) {
	b := newBed(t, bedOptions{Direct: 2 * time.Millisecond, Consumer: 5 * time.Millisecond, Health: calmHealth})
	b.waitActive(relayA, relayB, "direct")
	b.waitKeepalives(relayA)
	rt := b.withRoutes()
	rt.setFail(func(op, name string, prefixes []netip.Prefix) error {
		if op == "set" && name == relayB && slices.Contains(prefixes, extra) {
			return errInjected
		}
		return nil
	})
	before := b.running(rt)
	cBefore, _ := b.peer(relayA, relayC)
	err := b.reloadA(func(c *config.Config) {
		c.Peers = slices.DeleteFunc(c.Peers, func(p config.Peer) bool { return p.Name == relayC })
		pb := peerOf(t, c, relayB)
		pb.Prefixes = append(pb.Prefixes, extra)
	})
	if err == nil {
		t.Fatal("reload succeeded although the route table refused B's routes")
	}
	for _, w := range []string{"peers[provider-b]", "routes", "rolled back"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
	if d := b.running(rt).diff(before); d != "" {
		t.Errorf("after the failed reload:\n%s", d)
	}
	cAfter, ok := b.peer(relayA, relayC)
	if !ok || !cAfter.Reachable || cAfter.LastHandshake != cBefore.LastHandshake {
		t.Errorf("C after the failed reload: listed %v, reachable %v, last handshake %v (was %v)",
			ok, cAfter.Reachable, cAfter.LastHandshake, cBefore.LastHandshake)
	}
}

// TestReloadRollsBackPrefixFromRemovedPeer removes C and gives C's overlay
// prefix to B; the route table refuses B's new routes. Setting B in
// WireGuard moved the allowed IP away from C (wireguard-go gives an allowed
// IP to the last peer that sets it), so the rollback must give it back to
// C, or traffic to C is blackholed while the reload says it rolled back.
func TestReloadRollsBackPrefixFromRemovedPeer(t *testing.T) {
	b := newBed(t, bedOptions{Direct: 2 * time.Millisecond, Consumer: 5 * time.Millisecond, Health: calmHealth})
	b.waitActive(relayA, relayB, "direct")
	b.waitKeepalives(relayA)
	rt := b.withRoutes()
	moved := netip.PrefixFrom(overlay(3), 32)
	rt.setFail(func(op, name string, prefixes []netip.Prefix) error {
		if op == "set" && name == relayB && slices.Contains(prefixes, moved) {
			return errInjected
		}
		return nil
	})
	before := b.running(rt)
	if rt.owner(moved) != relayC || !strings.Contains(before.wg, "allowed_ip="+moved.String()) {
		t.Fatalf("%s is not C's before the reload: the test would prove nothing\n%+v", moved, before)
	}
	err := b.reloadA(func(c *config.Config) {
		c.Peers = slices.DeleteFunc(c.Peers, func(p config.Peer) bool { return p.Name == relayC })
		pb := peerOf(t, c, relayB)
		pb.Prefixes = append(pb.Prefixes, moved)
	})
	if err == nil {
		t.Fatal("reload succeeded although the route table refused B's routes")
	}
	if !strings.Contains(err.Error(), "rolled back") {
		t.Errorf("error %q does not say it rolled back", err)
	}
	if d := b.running(rt).diff(before); d != "" {
		t.Errorf("after the failed reload:\n%s", d)
	}
	wg, err := agent.WireGuardPeers(context.Background(), b.agent(relayA))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := wgOwner(wg, moved), keyHex(peerOf(t, b.config(relayA), relayC).PublicKey); got != want {
		t.Errorf("WireGuard allows %s for key %q, want C's %s", moved, got, want)
	}
}

// TestReloadRollsBackPrefixFromKeptPeer gives C's overlay prefix to B while
// C stays (with its other prefixes), and adds a peer D listed between them
// whose WireGuard update fails: B was set (taking the prefix from C), C was
// not reached. The rollback must give the prefix back to C although C's own
// step never ran.
func TestReloadRollsBackPrefixFromKeptPeer(t *testing.T) {
	b := newBed(t, bedOptions{Direct: 2 * time.Millisecond, Consumer: 5 * time.Millisecond, Health: calmHealth})
	b.waitActive(relayA, relayB, "direct")
	b.waitKeepalives(relayA)
	rt := b.withRoutes()
	moved := netip.PrefixFrom(overlay(3), 32)
	var dPriv keys.Private
	if _, err := rand.Read(dPriv[:]); err != nil {
		t.Fatal(err)
	}
	dKey := dPriv.PublicKey()
	var failing atomic.Bool
	failing.Store(true)
	err := agent.WrapIpcSet(context.Background(), b.agent(relayA), func(uapi string) error {
		if strings.Contains(uapi, "public_key="+keyHex(dKey)) && strings.Contains(uapi, "replace_allowed_ips") && failing.CompareAndSwap(true, false) {
			return errInjected
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	before := b.running(rt)
	err = b.reloadA(func(c *config.Config) {
		pb, pc := *peerOf(t, c, relayB), *peerOf(t, c, relayC)
		pb.Prefixes = append(slices.Clone(pb.Prefixes), moved)
		pc.Prefixes = slices.DeleteFunc(slices.Clone(pc.Prefixes), func(p netip.Prefix) bool { return p == moved })
		pd := pc
		pd.Name, pd.PublicKey, pd.Prefixes, pd.SeesUs = "extra-peer", dKey, []netip.Prefix{extra}, nil
		c.Peers = []config.Peer{pb, pd, pc}
	})
	if err == nil {
		t.Fatal("reload succeeded although WireGuard refused D")
	}
	for _, w := range []string{"peers[extra-peer]", "rolled back", errInjected.Error()} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
	if d := b.running(rt).diff(before); d != "" {
		t.Errorf("after the failed reload:\n%s", d)
	}
}

// TestReloadMovesPrefixInAnyOrder moves a prefix from B to C with C listed
// first, then back to B with B listed first: in each, the peer that gains
// the prefix comes before the peer that loses it, so a route table that
// refused a prefix another peer still holds would reject the reload.
func TestReloadMovesPrefixInAnyOrder(t *testing.T) {
	b := newBed(t, bedOptions{Direct: 2 * time.Millisecond, Consumer: 5 * time.Millisecond, Health: calmHealth})
	b.waitActive(relayA, relayB, "direct")
	rt := b.withRoutes()
	keys := map[string]string{}
	for _, p := range b.config(relayA).Peers {
		keys[p.Name] = keyHex(p.PublicKey)
	}
	place := func(owner string, order ...string) error {
		return b.reloadA(func(c *config.Config) {
			p := peerOf(t, c, owner)
			p.Prefixes = append(p.Prefixes, extra)
			slices.SortFunc(c.Peers, func(x, y config.Peer) int {
				return slices.Index(order, x.Name) - slices.Index(order, y.Name)
			})
		})
	}
	for _, step := range []struct {
		owner string
		order []string
	}{
		{relayB, []string{relayB, relayC}},
		{relayC, []string{relayC, relayB}},
		{relayB, []string{relayB, relayC}},
	} {
		if err := place(step.owner, step.order...); err != nil {
			t.Fatalf("moving %s to %s (peers listed %v): %v", extra, step.owner, step.order, err)
		}
		if got := rt.owner(extra); got != step.owner {
			t.Errorf("routes: %s belongs to %q, want %s", extra, got, step.owner)
		}
		wg, err := agent.WireGuardPeers(context.Background(), b.agent(relayA))
		if err != nil {
			t.Fatal(err)
		}
		if got := wgOwner(wg, extra); got != keys[step.owner] {
			t.Errorf("WireGuard: %s allowed for key %s, want %s's %s", extra, got, step.owner, keys[step.owner])
		}
	}
}

// wgOwner returns the key WireGuard allows prefix p for.
func wgOwner(wg string, p netip.Prefix) string {
	var key string
	for _, line := range strings.Split(wg, "\n") {
		k, v, _ := strings.Cut(line, "=")
		switch {
		case k == "public_key":
			key = v
		case k == "allowed_ip" && v == p.String():
			return key
		}
	}
	return ""
}

// blockingResolver answers every lookup with 127.0.0.1, once released; it
// ignores ctx, as a wedged resolver would.
type blockingResolver struct {
	entered chan struct{} // closed at the first lookup
	release chan struct{}
	once    atomic.Bool
}

func (r *blockingResolver) LookupNetIP(_ context.Context, _, _ string) ([]netip.Addr, error) {
	if r.once.CompareAndSwap(false, true) {
		close(r.entered)
	}
	<-r.release
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

// TestReloadSlowResolverKeepsProbing gives C's path a host name whose
// lookup blocks. While the reload waits for it, A goes on probing B (its
// probe counter rises) and answers Status; once the lookup returns, the
// reload succeeds.
func TestReloadSlowResolverKeepsProbing(t *testing.T) {
	b := newBed(t, bedOptions{Direct: 2 * time.Millisecond, Consumer: 5 * time.Millisecond, Health: calmHealth})
	b.waitActive(relayA, relayB, "direct")
	r := &blockingResolver{entered: make(chan struct{}), release: make(chan struct{})}
	agent.SetResolver(b.agent(relayA), r)
	released := false
	release := func() {
		if !released {
			released = true
			close(r.release)
		}
	}
	defer release()
	done := make(chan error, 1)
	go func() {
		done <- b.reloadA(func(c *config.Config) {
			p := &peerOf(t, c, relayC).Paths[0]
			p.Host = "slow.test"
			p.Endpoint = fmt.Sprintf("slow.test:%d", p.Port)
		})
	}()
	<-r.entered
	probes := func() float64 {
		return b.counter(relayA, "relay_probes_sent_total", map[string]string{"peer": relayB})
	}
	p0 := probes()
	waitFor(t, waitTimeout, "A probing B while a reload waits for DNS", func() bool { return probes() >= p0+10 })
	if _, ok := b.peer(relayA, relayB); !ok {
		t.Error("A's status lacks B while a reload waits for DNS")
	}
	select {
	case err := <-done:
		t.Fatalf("reload returned before its lookup did: %v", err)
	default:
	}
	release()
	if err := <-done; err != nil {
		t.Fatalf("reload: %v", err)
	}
	c, _ := b.peer(relayA, relayC)
	if len(c.Paths) == 0 || !strings.HasPrefix(c.Paths[0].Endpoint, "slow.test:") {
		t.Errorf("C's paths after the reload: %+v", c.Paths)
	}
}
