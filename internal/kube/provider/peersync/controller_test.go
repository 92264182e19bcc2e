package peersync

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/core/status"
)

type bed struct {
	t     *testing.T
	api   *fakeAPI
	agent *fakeAgent
	c     *Controller
	now   time.Time
	n     *counter
	ev    *events
}

func newBed(t *testing.T) *bed {
	b := &bed{t: t, api: newFakeAPI(), agent: &fakeAgent{}, now: time.Unix(1_800_000_000, 0), n: &counter{}}
	b.ev = &events{}
	b.c = New(Options{Namespace: "ns", Relay: "provider-a", Base: baseConfig(t), Agent: b.agent, API: b.api,
		Writes: b.n, Now: func() time.Time { return b.now }, Events: b.ev})
	return b
}

// seed puts objects in the informer's store, as sample-controller's tests
// seed their indexers, then syncs.
func (b *bed) seed(objs ...*v1alpha1.RelayPeer) error {
	for _, o := range objs {
		if err := b.c.informer.GetIndexer().Update(o); err != nil {
			b.t.Fatal(err)
		}
		b.api.objs[o.Name] = o.DeepCopy()
	}
	return b.c.sync(context.Background())
}

func (b *bed) lastWrite(name string) (v1alpha1.RelayPeerStatus, bool) {
	ws := b.api.statusWrites()
	for i := len(ws) - 1; i >= 0; i-- {
		if ws[i].name == name {
			return ws[i].st, true
		}
	}
	return v1alpha1.RelayPeerStatus{}, false
}

func TestSyncAppliesAndReportsReady(t *testing.T) {
	b := newBed(t)
	kb := key(t)
	if err := b.seed(relayPeer("provider-b", 1, kb, "10.72.0.0/16")); err != nil {
		t.Fatal(err)
	}
	cfg := b.agent.last()
	if cfg == nil || len(cfg.Peers) != 2 || cfg.Peers[1].Name != "provider-b" {
		t.Fatalf("applied %v, want the file peer and provider-b", cfg)
	}
	// Idempotent: a second sync with the same objects applies nothing.
	if err := b.c.sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := b.agent.applies(); n != 1 {
		t.Errorf("%d applies after a no-op sync, want 1", n)
	}
	b.agent.setStatus(status.Status{Peers: []status.PeerStatus{{Name: "provider-b", ActivePath: "direct", Reachable: true,
		Paths: []status.PathStatus{{Name: "direct", Endpoint: "192.0.2.10:51900", State: status.PathUp, RTTMs: 10.5, Loss: 0.015},
			{Name: "consumer", Endpoint: "198.51.100.1:51900", State: status.PathUp, RTTMs: 60}}}}})
	b.c.writeStatuses(context.Background())
	st, ok := b.lastWrite("provider-b")
	if !ok {
		t.Fatal("no status written")
	}
	if st.ActivePath != "direct" || !st.Reachable || st.RTT != "10.5ms" || st.ObservedGeneration != 1 ||
		len(st.Paths) != 2 || st.Paths[0].Loss != "1.5%" || st.Paths[0].Address != "192.0.2.10:51900" {
		t.Errorf("status %+v", st)
	}
	for typ, want := range map[string]string{v1alpha1.ConditionReady: "True", v1alpha1.ConditionReachable: "True", v1alpha1.ConditionDegraded: "False"} {
		c := meta.FindStatusCondition(st.Conditions, typ)
		if c == nil || string(c.Status) != want {
			t.Errorf("condition %s = %+v, want %s", typ, c, want)
		}
	}
}

func TestInvalidSpecLeavesRunningStateAlone(t *testing.T) {
	b := newBed(t)
	kb, kc := key(t), key(t)
	if err := b.seed(relayPeer("provider-b", 1, kb, "10.72.0.0/16"), relayPeer("provider-c", 1, kc, "10.73.0.0/16")); err != nil {
		t.Fatal(err)
	}
	before := b.agent.last()
	bad := relayPeer("provider-c", 2, kc, "10.73.0.0/16")
	bad.Spec.Paths[1].Endpoint = "198.51.100.1:99999"
	if err := b.seed(bad); err != nil {
		t.Fatal(err)
	}
	if !sameConfig(before, b.agent.last()) {
		t.Error("a rejected edit changed the running configuration")
	}
	if got := strings.Join(b.ev.list, "\n"); !strings.Contains(got, "provider-c Warning InvalidSpec") ||
		!strings.Contains(got, "provider-b Normal Applied") {
		t.Errorf("events:\n%s\nwant provider-b applied and provider-c's edit refused", got)
	}
	b.c.writeStatuses(context.Background())
	st, _ := b.lastWrite("provider-c")
	c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady)
	if c == nil || c.Status != "False" || c.Reason != v1alpha1.ReasonInvalid || !strings.Contains(c.Message, "spec.paths[1].endpoint") ||
		!strings.Contains(c.Message, "keeps running generation 1") || st.ObservedGeneration != 2 {
		t.Errorf("provider-c Ready condition %+v (observed generation %d), want False with the field path", c, st.ObservedGeneration)
	}
	if st, _ := b.lastWrite("provider-b"); meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady).Status != "True" {
		t.Error("provider-b lost its Ready condition")
	}
}

func TestApplyFailureKeepsPreviousAndRetries(t *testing.T) {
	b := newBed(t)
	b.agent.fail = errors.New("route add: permission denied")
	err := b.seed(relayPeer("provider-b", 1, key(t), "10.72.0.0/16"))
	if err == nil {
		t.Fatal("sync succeeded while the relay could not apply")
	}
	if v := b.c.verdicts["provider-b"]; v.ready || v.reason != v1alpha1.ReasonApplyFailed || !strings.Contains(v.message, "permission denied") {
		t.Errorf("verdict %+v, want ApplyFailed with the cause", v)
	}
	b.agent.fail = nil
	if err := b.c.sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if v := b.c.verdicts["provider-b"]; !v.ready {
		t.Errorf("verdict after the retry %+v, want ready", v)
	}
}

func TestStatusWritesOnTransitionsAndAtMostEveryRefresh(t *testing.T) {
	b := newBed(t)
	if err := b.seed(relayPeer("provider-b", 1, key(t), "10.72.0.0/16")); err != nil {
		t.Fatal(err)
	}
	status := func(active string, rtt float64) {
		paths := []status.PathStatus{{Name: "direct", State: status.PathUp, RTTMs: rtt}, {Name: "consumer", State: status.PathUp, RTTMs: 60}}
		if active == "consumer" {
			paths[0].State = status.PathDown
		}
		b.agent.setStatus(status.Status{Peers: []status.PeerStatus{{Name: "provider-b", ActivePath: active, Reachable: true, Paths: paths}}})
	}
	status("direct", 10)
	b.c.writeStatuses(context.Background())
	if b.n.n != 1 {
		t.Fatalf("%d writes, want 1", b.n.n)
	}
	// RTT jitter for 29 s: no write.
	for i := range 29 {
		b.now = b.now.Add(time.Second)
		status("direct", 10+float64(i%3))
		b.c.writeStatuses(context.Background())
	}
	if b.n.n != 1 {
		t.Errorf("%d writes under RTT jitter within %v, want 1", b.n.n, StatusRefresh)
	}
	// Past the refresh: one write with the new figures.
	b.now = b.now.Add(2 * time.Second)
	status("direct", 14)
	b.c.writeStatuses(context.Background())
	if b.n.n != 2 {
		t.Errorf("%d writes after %v, want 2", b.n.n, StatusRefresh)
	}
	// A failover is written at once.
	b.now = b.now.Add(time.Second)
	status("consumer", 14)
	b.c.writeStatuses(context.Background())
	st, _ := b.lastWrite("provider-b")
	if b.n.n != 3 || st.ActivePath != "consumer" || st.Paths[0].State != v1alpha1.PathDown {
		t.Errorf("%d writes, last %+v; want the switch to consumer written at once", b.n.n, st)
	}
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionDegraded); c == nil || c.Status != "True" || c.Reason != v1alpha1.ReasonPathDown {
		t.Errorf("Degraded %+v, want True/PathDown", c)
	}
}

func TestSetBaseRevalidates(t *testing.T) {
	b := newBed(t)
	if err := b.seed(relayPeer("provider-b", 1, key(t), "10.72.0.0/16")); err != nil {
		t.Fatal(err)
	}
	// The file now routes 10.72.0.0/16 to a file peer: the file wins.
	nb := baseConfig(t)
	nb.Peers[0].Prefixes = append(nb.Peers[0].Prefixes, nb.Peers[0].Prefixes[0])
	nb.Peers[0].Prefixes[1] = netip.MustParsePrefix("10.72.0.0/16")
	if err := b.c.SetBase(context.Background(), nb); err != nil {
		t.Fatal(err)
	}
	if v := b.c.verdicts["provider-b"]; v.ready || !strings.Contains(v.message, "overlaps") {
		t.Errorf("verdict %+v, want rejected for the overlap", v)
	}
	if _, ok := b.agent.last().Peer("provider-b"); ok {
		t.Error("provider-b still runs with a prefix the file now routes elsewhere")
	}
}

func TestSetBaseRefusedKeepsOldBase(t *testing.T) {
	b := newBed(t)
	if err := b.seed(relayPeer("provider-b", 1, key(t), "10.72.0.0/16")); err != nil {
		t.Fatal(err)
	}
	before := b.agent.last()
	b.agent.fail = errors.New("mtu cannot change while running")
	nb := baseConfig(t)
	nb.MTU = 1400
	if err := b.c.SetBase(context.Background(), nb); err == nil {
		t.Fatal("SetBase succeeded while the relay refused it")
	}
	b.agent.fail = nil
	if err := b.c.sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b.agent.last().MTU != before.MTU {
		t.Errorf("after a refused SetBase the relay got MTU %d, want the old base's %d", b.agent.last().MTU, before.MTU)
	}
}

func TestRunFollowsWatchEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBed(t)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- b.c.Run(ctx) }()
		defer func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		}()
		settled(t, func() bool { return b.agent.applies() >= 1 }, "the initial apply")
		kb := key(t)
		b.api.put(relayPeer("provider-b", 0, kb, "10.72.0.0/16"))
		settled(t, func() bool { c := b.agent.last(); _, ok := c.Peer("provider-b"); return ok }, "provider-b applied")
		other := relayPeer("provider-x", 0, key(t), "10.75.0.0/16")
		other.Labels[v1alpha1.RelayLabel] = "someone-else"
		b.api.put(other)
		b.api.remove("provider-b")
		settled(t, func() bool { c := b.agent.last(); _, ok := c.Peer("provider-b"); return !ok }, "provider-b removed")
		if _, ok := b.agent.last().Peer("provider-x"); ok {
			t.Error("a RelayPeer of another relay was applied")
		}
	})
}

// settled waits, in the test's synctest bubble, until cond holds once
// every goroutine of the bubble is blocked: the controller has done all it does
// for what happened so far, its timers firing as the bubble's clock moves.
func settled(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		synctest.Wait()
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the controller is idle without %s", what)
		}
		time.Sleep(10 * time.Millisecond) // synctest: moves the bubble's clock to the controller's next timer
	}
}

func TestSetBaseChangesAllowedPrefixes(t *testing.T) {
	b := newBed(t)
	if err := b.seed(relayPeer("provider-b", 1, key(t), "10.72.0.0/16")); err != nil {
		t.Fatal(err)
	}
	nb := baseConfig(t)
	nb.AllowedPeerPrefixes = []netip.Prefix{netip.MustParsePrefix("10.90.0.0/16")}
	if err := b.c.SetBase(context.Background(), nb); err != nil {
		t.Fatal(err)
	}
	if v := b.c.verdicts["provider-b"]; v.ready || v.reason != v1alpha1.ReasonNotAllowed {
		t.Errorf("verdict %+v after the file narrowed allowedPeerPrefixes, want PrefixNotAllowed", v)
	}
	if _, ok := b.agent.last().Peer("provider-b"); ok {
		t.Error("provider-b still runs outside the new allowedPeerPrefixes")
	}
}

func TestStatusWritesBackOffWhileTheAPIServerIsAway(t *testing.T) {
	b := newBed(t)
	if err := b.seed(relayPeer("provider-b", 1, key(t), "10.72.0.0/16"), relayPeer("provider-c", 1, key(t), "10.73.0.0/16")); err != nil {
		t.Fatal(err)
	}
	b.api.failApply = errors.New("connection refused")
	b.c.writeStatuses(context.Background())
	if n := b.api.applyCalls(); n != 1 {
		t.Fatalf("%d status writes tried in a round with the API server away, want 1 (stop at the first failure)", n)
	}
	for range 3 { // within the backoff: nothing is tried
		b.now = b.now.Add(100 * time.Millisecond)
		b.c.writeStatuses(context.Background())
	}
	if n := b.api.applyCalls(); n != 1 {
		t.Errorf("%d writes tried during the backoff, want 1", n)
	}
	b.api.failApply = nil
	b.now = b.now.Add(2 * time.Second)
	b.c.writeStatuses(context.Background())
	if _, ok := b.lastWrite("provider-c"); !ok {
		t.Error("statuses not written once the API server answered again")
	}
}
