package peersync

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/status"
)

// StatusRefresh is the longest a RelayPeer's measurements (RTT, jitter,
// loss) go unwritten; transitions are written at once. With 100 peers it
// bounds the relay's steady writes to about 3 per second.
const StatusRefresh = 30 * time.Second

// statusTick is how often the status loop compares the relay's state with
// what was last written. It bounds how late a transition reaches the API.
const statusTick = time.Second

// Agent is the running relay as the controller sees it.
type Agent interface {
	// Apply runs cfg atomically: every change or none (the SIGHUP path).
	Apply(ctx context.Context, cfg *config.Config) error
	// Status reports every peer the relay runs.
	Status(ctx context.Context) (status.Status, error)
}

// API is what the controller needs of the API server.
type API interface {
	ListRelayPeers(ctx context.Context, ns string, opts metav1.ListOptions) (*v1alpha1.RelayPeerList, error)
	WatchRelayPeers(ctx context.Context, ns string, opts metav1.ListOptions) (watch.Interface, error)
	ApplyRelayPeerStatus(ctx context.Context, ns, name string, st v1alpha1.RelayPeerStatus) error
}

// Counter counts, for example status writes (a Prometheus counter).
type Counter interface{ Inc() }

// Recorder emits Kubernetes events (client-go's events.EventRecorder).
type Recorder interface {
	Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any)
}

// Options configure a Controller.
type Options struct {
	Namespace string
	// Relay is the relay's name: the controller serves the RelayPeers
	// labelled relay.liqo-relay.io/relay=<Relay>.
	Relay string
	// Base is the relay's file configuration, whose peers are kept.
	Base   *config.Config
	Agent  Agent
	API    API
	Logger *slog.Logger
	// Writes counts status writes (relay_kube_status_writes_total).
	Writes Counter
	// Events, when set, records an event on a RelayPeer whenever its spec
	// is applied or refused.
	Events Recorder
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// syncKey is the one workqueue key: the peer set is validated as a whole.
const syncKey = "peers"

// Controller keeps a relay's peers in step with its RelayPeers.
type Controller struct {
	o        Options
	log      *slog.Logger
	informer cache.SharedIndexInformer
	queue    workqueue.TypedRateLimitingInterface[string]

	mu       sync.Mutex
	base     *config.Config
	accepted map[string]accepted
	verdicts map[string]verdict
	applied  *config.Config // what the relay runs, as applied by sync
	written  map[string]written
	// failures counts status writes failed in a row; retryAt is when the
	// status loop tries again. Owned by the status loop.
	failures int
	retryAt  time.Time
}

// written is the status last written for one RelayPeer.
type written struct {
	status v1alpha1.RelayPeerStatus
	at     time.Time
	uid    string
}

// New builds a Controller. Start it with Run.
func New(o Options) *Controller {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	c := &Controller{
		o:        o,
		log:      o.Logger.With("component", "peersync"),
		base:     o.Base.Clone(),
		accepted: map[string]accepted{},
		verdicts: map[string]verdict{},
		written:  map[string]written{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "relaypeers"}),
	}
	sel := labels.SelectorFromSet(labels.Set{v1alpha1.RelayLabel: o.Relay}).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.LabelSelector = sel
			return o.API.ListRelayPeers(ctx, o.Namespace, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.LabelSelector = sel
			return o.API.WatchRelayPeers(ctx, o.Namespace, opts)
		},
	}
	// An API that cannot stream the initial list as watch events (a test
	// fake) says so with IsWatchListSemanticsUnSupported.
	c.informer = cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, o.API),
		&v1alpha1.RelayPeer{}, 0, cache.Indexers{})
	enqueue := func(any) { c.queue.Add(syncKey) }
	_, _ = c.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		UpdateFunc: func(old, cur any) {
			// Status writes (ours) change neither generation nor labels:
			// nothing to sync.
			o, ok1 := old.(*v1alpha1.RelayPeer)
			n, ok2 := cur.(*v1alpha1.RelayPeer)
			if ok1 && ok2 && o.Generation == n.Generation && maps.Equal(o.Labels, n.Labels) {
				return
			}
			c.queue.Add(syncKey)
		},
		DeleteFunc: enqueue,
	})
	return c
}

// SetBase replaces the file configuration (a SIGHUP reload) and applies it
// at once with the RelayPeers that still fit; the file wins a clash. When
// the relay refuses the result (a setting only a restart can change, a
// failed step), the previous file configuration stays and the error says
// why.
func (c *Controller) SetBase(ctx context.Context, cfg *config.Config) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.base
	c.base = cfg.Clone()
	if err := c.syncLocked(ctx); err != nil {
		c.base = old
		return err
	}
	return nil
}

// Run runs the informer, the sync worker and the status loop until ctx is
// done. The API server going away does not touch the relay: the informer
// retries with backoff and sync runs again on the next change.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { c.informer.RunWithContext(ctx) })
	if !cache.WaitForCacheSync(ctx.Done(), c.informer.HasSynced) {
		return fmt.Errorf("relaypeers: %w", ctx.Err())
	}
	c.log.Info("watching RelayPeers", "namespace", c.o.Namespace, "relay", c.o.Relay)
	c.queue.Add(syncKey)
	wg.Go(func() {
		for c.processNext(ctx) {
		}
	})
	wg.Go(func() {
		<-ctx.Done()
		c.queue.ShutDown()
	})
	t := time.NewTicker(statusTick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			c.writeStatuses(ctx)
		}
	}
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	if err := c.sync(ctx); err != nil {
		c.log.Warn("sync failed, will retry", "err", err)
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}

// objects returns the RelayPeers in the informer's cache.
func (c *Controller) objects() []*v1alpha1.RelayPeer {
	list := c.informer.GetStore().List()
	out := make([]*v1alpha1.RelayPeer, 0, len(list))
	for _, o := range list {
		if rp, ok := o.(*v1alpha1.RelayPeer); ok {
			out = append(out, rp)
		}
	}
	return out
}

// sync resolves the peer set and applies it when it changed. It is
// idempotent: running it again with the same objects changes nothing.
func (c *Controller) sync(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.syncLocked(ctx)
}

func (c *Controller) syncLocked(ctx context.Context) error {
	res := resolve(c.base, c.objects(), c.accepted, c.base.AllowedPeerPrefixes)
	if c.applied == nil || !sameConfig(c.applied, res.cfg) {
		if err := c.o.Agent.Apply(ctx, res.cfg); err != nil {
			// Nothing was applied: the relay runs what it ran. Say so on
			// every RelayPeer whose spec was waiting to be applied.
			for name, v := range res.verdicts {
				if a, ok := c.accepted[name]; v.ready && (!ok || a.generation != v.generation) {
					res.verdicts[name] = verdict{generation: v.generation, reason: v1alpha1.ReasonApplyFailed,
						message: fmt.Sprintf("valid, but the relay could not apply it (it keeps its previous state; retrying): %v", err)}
				}
			}
			c.verdicts = res.verdicts
			return fmt.Errorf("applying the peer set: %w", err)
		}
		c.applied = res.cfg
		c.log.Info("peer set applied", "peers", len(res.cfg.Peers), "relaypeers", len(res.accepted))
	}
	objs := make(map[string]*v1alpha1.RelayPeer)
	for _, o := range c.objects() {
		objs[o.Name] = o
	}
	for name, v := range res.verdicts {
		old, seen := c.verdicts[name]
		if seen && old == v {
			continue
		}
		if !v.ready {
			c.log.Warn("RelayPeer rejected", "relaypeer", name, "generation", v.generation, "reason", v.reason, "message", v.message)
		}
		if o := objs[name]; o != nil && c.o.Events != nil {
			if v.ready {
				c.o.Events.Eventf(o, nil, "Normal", v.reason, "Apply", "generation %d applied to relay %s", v.generation, c.o.Relay)
			} else {
				c.o.Events.Eventf(o, nil, "Warning", v.reason, "Apply", "%s", truncate(v.message, maxEventNote))
			}
		}
	}
	c.accepted, c.verdicts = res.accepted, res.verdicts
	return nil
}

func findPath(p config.Peer, name string) *config.Path {
	for i := range p.Paths {
		if p.Paths[i].Name == name {
			return &p.Paths[i]
		}
	}
	return nil
}

// sameConfig reports whether a and b run the same peers in the same order
// on the same base.
func sameConfig(a, b *config.Config) bool {
	if len(a.Peers) != len(b.Peers) {
		return false
	}
	for i := range a.Peers {
		if !a.Peers[i].Equal(b.Peers[i]) {
			return false
		}
	}
	// Redacted hides the keys, so they are compared apart: a staged or
	// finished key rotation is a change to apply.
	if a.PrivateKey != b.PrivateKey || a.NextPrivateKey != b.NextPrivateKey {
		return false
	}
	ac, bc := a.Clone(), b.Clone()
	ac.Peers, bc.Peers = nil, nil
	return fmt.Sprint(ac.Redacted()) == fmt.Sprint(bc.Redacted())
}

// maxEventNote bounds an event's note: the API server refuses notes over
// 1 KiB.
const maxEventNote = 1000

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
