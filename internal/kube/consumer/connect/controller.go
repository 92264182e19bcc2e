package connect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/kube/client"
)

// Resync is how often every FCC is synced without an event: it catches a
// provider that came back, a give-up deadline, and anything a watch
// missed.
const Resync = time.Minute

// Default provider write budget: RelayPeer writes per second across all
// providers, and the burst. A full mapping of 8192 /32s is about 600 kB,
// so this bounds the operator's write load on the providers' etcd to
// about 3 MB/s in the worst case, and pod churn is coalesced by the
// workqueue (one sync per FCC at a time) well below it.
const (
	DefaultWriteQPS   = 5
	DefaultWriteBurst = 10
)

// Options configure a Controller.
type Options struct {
	// Config reaches the consumer's API server.
	Config *rest.Config
	// Namespace is the operator's own: IPs, the overlay record and the
	// FCCs' override Secrets live there.
	Namespace string
	// ConsumerID is the consumer's Liqo cluster ID.
	ConsumerID string
	GiveUp     time.Duration
	// WriteQPS and WriteBurst bound RelayPeer writes; 0 means the defaults.
	WriteQPS   float64
	WriteBurst int
	Registry   prometheus.Registerer
	Logger     *slog.Logger
}

// Controller runs Sync for every FCC, fed by informers on the FCCs, on
// Liqo's objects in the consumer, and on the providers' Relays and
// RelayPeers.
type Controller struct {
	o       Options
	log     *slog.Logger
	rec     *Reconciler
	dialer  *kubeDialer
	fccs    cache.SharedIndexInformer
	liqo    dynamicinformer.DynamicSharedInformerFactory
	queue   workqueue.TypedRateLimitingInterface[string]
	events  events.EventBroadcaster
	metrics *Metrics
	synced  chan struct{}
}

// Metrics of the operator.
type Metrics struct {
	Reconciles *prometheus.CounterVec
	Errors     prometheus.Counter
	Writes     *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		Reconciles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "relay", Subsystem: "operator", Name: "reconciles_total",
			Help: "ForeignClusterConnection syncs, by result: ok, wait (waiting on Liqo, a relay or the write limiter) or error.",
		}, []string{"result"}),
		Errors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "relay", Subsystem: "operator", Name: "reconcile_errors_total",
			Help: "ForeignClusterConnection syncs that failed and were retried with backoff.",
		}),
		Writes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "relay", Subsystem: "operator", Name: "provider_writes_total",
			Help: "Writes to the providers' API servers, by kind: RelayPeer (apply) or RelayPeerDelete.",
		}, []string{"kind"}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.Reconciles, m.Errors, m.Writes} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("registering metrics: %w", err)
			}
		}
	}
	return m, nil
}

// rateLimiter is Limiter over a token bucket.
type rateLimiter struct{ l *rate.Limiter }

func (r rateLimiter) Reserve(now time.Time) time.Duration {
	res := r.l.ReserveN(now, 1)
	d := res.DelayFrom(now)
	if d > 0 {
		res.CancelAt(now)
	}
	return d
}

// New builds a Controller; Run starts it.
func New(o Options) (*Controller, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.WriteQPS == 0 {
		o.WriteQPS = DefaultWriteQPS
	}
	if o.WriteBurst == 0 {
		o.WriteBurst = DefaultWriteBurst
	}
	m, err := newMetrics(o.Registry)
	if err != nil {
		return nil, err
	}
	core, dyn, rc, err := newClients(o.Config)
	if err != nil {
		return nil, err
	}
	c := &Controller{
		o: o, log: o.Logger.With("component", "connect"), metrics: m,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "fccs"}),
		events: events.NewBroadcaster(&events.EventSinkImpl{Interface: core.EventsV1()}),
		synced: make(chan struct{}),
	}
	c.fccs = newFCCInformer(rc, c.enqueue)
	c.liqo = newLiqoInformers(dyn, c.enqueueAll)
	c.dialer = &kubeDialer{
		ns: o.Namespace, consumer: o.ConsumerID, core: core, dyn: dyn, log: c.log,
		conns: map[string]*providerConn{}, changed: c.enqueueProvider,
	}
	c.rec = &Reconciler{
		ConsumerID: o.ConsumerID,
		Consumer:   &kubeConsumer{ns: o.Namespace, dyn: dyn, core: core, relays: rc},
		Dialer:     c.dialer,
		FCCs:       lister{c.fccs.GetStore()},
		Events:     c.events.NewRecorder(client.Scheme, "liqo-relay-operator"),
		Logger:     c.log,
		GiveUp:     o.GiveUp,
		Limiter:    rateLimiter{rate.NewLimiter(rate.Limit(o.WriteQPS), o.WriteBurst)},
		Counters:   Counters{Writes: func(kind string) { m.Writes.WithLabelValues(kind).Inc() }},
	}
	return c, nil
}

// newClients builds the controller's clients of the consumer's API server.
func newClients(cfg *rest.Config) (kubernetes.Interface, dynamic.Interface, *client.Client, error) {
	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("consumer client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("consumer client: %w", err)
	}
	rc, err := client.New(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	return core, dyn, rc, nil
}

// Synced is closed once the informers have synced.
func (c *Controller) Synced() <-chan struct{} { return c.synced }

// Run runs the controller until ctx is done, and waits for everything it
// started.
func (c *Controller) Run(ctx context.Context) error {
	if err := c.events.StartRecordingToSinkWithContext(ctx); err != nil {
		return fmt.Errorf("events: %w", err)
	}
	defer c.events.Shutdown()
	c.dialer.base = ctx
	defer c.dialer.close()
	defer c.queue.ShutDown()
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { c.fccs.RunWithContext(ctx) })
	c.liqo.Start(ctx.Done())
	defer c.liqo.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), c.fccs.HasSynced) {
		return fmt.Errorf("ForeignClusterConnections: %w", ctx.Err())
	}
	for gvr, ok := range c.liqo.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("informer for %s did not sync (are Liqo's CRDs installed?)", gvr.Resource)
		}
	}
	close(c.synced)
	c.log.Info("controller running", "consumer", c.o.ConsumerID, "namespace", c.o.Namespace)
	c.enqueueAll()
	wg.Go(func() {
		<-ctx.Done()
		c.queue.ShutDown()
	})
	// One worker: FCCs share the overlay record and consumer-path IPs, and
	// syncs are short; the write limiter, not parallelism, sets the pace.
	for c.processNext(ctx) {
	}
	return nil
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	err := c.rec.Sync(ctx, key)
	if d, ok := RequeueAfter(err); ok {
		c.metrics.Reconciles.WithLabelValues("wait").Inc()
		c.queue.Forget(key)
		c.queue.AddAfter(key, d)
		return true
	}
	if err != nil && ctx.Err() != nil {
		return true // stopping: the next leader syncs again
	}
	if err != nil {
		c.metrics.Reconciles.WithLabelValues("error").Inc()
		c.metrics.Errors.Inc()
		if !errors.Is(err, ErrConflict) {
			c.log.Warn("sync failed, will retry", "fcc", key, "err", err)
		}
		c.queue.AddRateLimited(key)
		return true
	}
	c.metrics.Reconciles.WithLabelValues("ok").Inc()
	c.queue.Forget(key)
	c.queue.AddAfter(key, Resync)
	return true
}

func (c *Controller) enqueue(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if f, ok := obj.(*v1alpha1.ForeignClusterConnection); ok {
		c.queue.Add(f.Name)
	}
}

func (c *Controller) enqueueAll() {
	for _, k := range c.fccs.GetStore().ListKeys() {
		c.queue.Add(k)
	}
}

// enqueueProvider queues the FCCs that connect provider id.
func (c *Controller) enqueueProvider(id string) {
	for _, o := range c.fccs.GetStore().List() {
		if f, ok := o.(*v1alpha1.ForeignClusterConnection); ok && (f.Spec.ClusterA == id || f.Spec.ClusterB == id) {
			c.queue.Add(f.Name)
		}
	}
}

// lister is Lister over the FCC informer's store.
type lister struct{ s cache.Store }

func (l lister) Get(name string) (*v1alpha1.ForeignClusterConnection, bool) {
	o, ok, err := l.s.GetByKey(name)
	if err != nil || !ok {
		return nil, false
	}
	f, ok := o.(*v1alpha1.ForeignClusterConnection)
	return f, ok
}

func (l lister) List() []*v1alpha1.ForeignClusterConnection {
	var out []*v1alpha1.ForeignClusterConnection
	for _, o := range l.s.List() {
		if f, ok := o.(*v1alpha1.ForeignClusterConnection); ok {
			out = append(out, f)
		}
	}
	return out
}
