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
	if o.Client == nil || o.Sink == nil {
		return errors.New("dnsfeed: Client and Sink are required")
	}
	if o.Consumer == "" {
		return errors.New("dnsfeed: the consumer's cluster ID is required")
	}
	if o.Debounce <= 0 {
		o.Debounce = DefaultDebounce
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	log := o.Logger.With("component", "dnsfeed")
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
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), slicesInf.Informer().HasSynced) {
		return nil // ctx done
	}
	notify()
	var last map[string][]netip.Addr
	sent := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-kick:
		}
		t := time.NewTimer(o.Debounce)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		select { // changes during the wait are in the cache already
		case <-kick:
		default:
		}
		list, err := lister.List(labels.Everything())
		if err != nil {
			log.Warn("listing EndpointSlices", "err", err)
			notify()
			continue
		}
		in := make([]discoveryv1.EndpointSlice, len(list))
		for i, s := range list {
			in[i] = *s
		}
		svcs := Services(in, o.Consumer)
		if sent && maps.EqualFunc(svcs, last, slices.Equal) {
			continue
		}
		if err := o.Sink.SetServiceEndpoints(ctx, svcs); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			log.Warn("updating the DNS responder's Services", "err", err)
			notify()
			continue
		}
		last, sent = svcs, true
		log.Debug("DNS Services updated", "services", len(svcs))
	}
}
