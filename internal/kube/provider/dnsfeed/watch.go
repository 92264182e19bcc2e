package dnsfeed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"slices"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// DefaultDebounce is how long Run waits after a change of EndpointSlices
// before it recomputes: a rollout changes many slices at once.
const DefaultDebounce = 200 * time.Millisecond

// Sink receives the Services the responder answers for; agent.Agent's
// SetServiceEndpoints is one.
type Sink interface {
	SetServiceEndpoints(ctx context.Context, services map[string][]netip.Addr) error
}

// Options of Run.
type Options struct {
	// Client is the provider's API server. Run watches EndpointSlices in
	// every namespace: the offloaded namespaces are not known in advance.
	Client kubernetes.Interface
	// Consumer is the Liqo cluster ID of the relay's consumer: only the
	// Services it offloaded here count (Services).
	Consumer string
	// Sink receives the result of Services.
	Sink Sink
	// Debounce defaults to DefaultDebounce.
	Debounce time.Duration
	Logger   *slog.Logger
}

// Run watches the EndpointSlices of every namespace and hands o.Sink the
// Services of o.Consumer each time they change: level-triggered, it
// recomputes Services from the informer's whole cache after each burst of
// changes (o.Debounce after the first), and calls o.Sink only when the
// result differs from what it last accepted. A failed call is retried
// after the next change or o.Debounce, whichever is first. Run returns
// when ctx is done (nil), or an error when the informer cannot start.
func Run(ctx context.Context, o Options) error {
	o, err := o.withDefaults()
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(o.Client, 0)
	slicesInf := factory.Discovery().V1().EndpointSlices()
	kick := make(chan struct{}, 1)
	notify := func() {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	if _, err := slicesInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { notify() },
		UpdateFunc: func(any, any) { notify() },
		DeleteFunc: func(any) { notify() },
	}); err != nil {
		return fmt.Errorf("dnsfeed: EndpointSlice informer: %w", err)
	}
	lister := slicesInf.Lister()
	f := &feed{consumer: o.Consumer, sink: o.Sink, log: o.Logger.With("component", "dnsfeed"), retry: notify,
		list: func() ([]*discoveryv1.EndpointSlice, error) { return lister.List(labels.Everything()) }}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), slicesInf.Informer().HasSynced) {
		return nil // ctx done
	}
	notify()
	for waitBurst(ctx, kick, o.Debounce) {
		if !f.push(ctx) {
			return nil
		}
	}
	return nil
}

// withDefaults checks o and fills in its defaults.
func (o Options) withDefaults() (Options, error) {
	if o.Client == nil || o.Sink == nil {
		return o, errors.New("dnsfeed: Client and Sink are required")
	}
	if o.Consumer == "" {
		return o, errors.New("dnsfeed: the consumer's cluster ID is required")
	}
	if o.Debounce <= 0 {
		o.Debounce = DefaultDebounce
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}

// waitBurst waits for a kick, then debounce more, and takes the kicks of
// that time too: their changes are in the cache already. It reports false
// when ctx ended first.
func waitBurst(ctx context.Context, kick chan struct{}, debounce time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-kick:
	}
	t := time.NewTimer(debounce)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
	}
	select {
	case <-kick:
	default:
	}
	return true
}

// feed computes the Services from the cached EndpointSlices and hands
// them to the sink when they changed.
type feed struct {
	consumer string
	sink     Sink
	log      *slog.Logger
	list     func() ([]*discoveryv1.EndpointSlice, error)
	// retry asks for another push after a failure.
	retry func()

	last map[string][]netip.Addr
	sent bool // last was accepted by the sink
}

// push lists, computes and hands on the Services once. It reports false
// when the sink failed because ctx ended: Run is done.
func (f *feed) push(ctx context.Context) bool {
	list, err := f.list()
	if err != nil {
		f.log.Warn("listing EndpointSlices", "err", err)
		f.retry()
		return true
	}
	in := make([]discoveryv1.EndpointSlice, len(list))
	for i, s := range list {
		in[i] = *s
	}
	svcs := Services(in, f.consumer)
	if f.sent && maps.EqualFunc(svcs, f.last, slices.Equal) {
		return true
	}
	if err := f.sink.SetServiceEndpoints(ctx, svcs); err != nil {
		if ctx.Err() != nil {
			return false
		}
		f.log.Warn("updating the DNS responder's Services", "err", err)
		f.retry()
		return true
	}
	f.last, f.sent = svcs, true
	f.log.Debug("DNS Services updated", "services", len(svcs))
	return true
}
