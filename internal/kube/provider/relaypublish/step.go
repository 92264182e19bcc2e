package relaypublish

import (
	"context"
	"reflect"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/liqo-relay/relay/api/v1alpha1"
)

// serviceWatch is the goroutine of Run that follows the Relay's Service.
type serviceWatch struct {
	wg *sync.WaitGroup
	// cancel ends the current follower; never nil.
	cancel context.CancelFunc
}

// step is one pass of Run over what it last saw: it creates a missing
// Relay, follows the Service its spec names, and writes the status when it
// differs from last, the status last written or found in place (nil: none
// known). It returns the new last.
func (p *Publisher) step(ctx context.Context, sw *serviceWatch, last *v1alpha1.RelayStatus) *v1alpha1.RelayStatus {
	p.mu.Lock()
	relay, svcName := p.relay, p.svcName
	p.mu.Unlock()
	if relay == nil {
		p.createRelay(ctx)
		return last
	}
	if want := serviceName(relay.Spec); want != svcName {
		p.switchService(ctx, sw, want)
	}
	p.mu.Lock()
	svc := p.svc
	p.mu.Unlock()
	if p.o.OnRelay != nil {
		p.o.OnRelay(ctx, relay)
	}
	st := p.status(relay, svc)
	if last != nil && reflect.DeepEqual(*last, st) {
		return last
	}
	if last == nil && statusEqual(relay.Status, st) {
		return &st
	}
	if err := p.o.Relays.ApplyRelayStatus(ctx, p.o.Namespace, p.o.Name, st); err != nil {
		p.log.Warn("writing the Relay status", "err", err)
		return last
	}
	if p.o.Writes != nil {
		p.o.Writes.Inc()
	}
	return &st
}

// createRelay creates the Relay. The watch brings it, unless the watch
// began between its Get (not found) and this create on a server that does
// not replay what exists (a fake clientset): it is read once here too.
func (p *Publisher) createRelay(ctx context.Context) {
	if err := p.o.Relays.ApplyRelay(ctx, p.o.Namespace, p.o.Name, p.o.Labels); err != nil {
		p.log.Warn("creating the Relay object", "err", err)
		return
	}
	if r, err := p.o.Relays.GetRelay(ctx, p.o.Namespace, p.o.Name); err == nil {
		p.mu.Lock()
		if p.relay == nil {
			p.relay = r
		}
		p.mu.Unlock()
		p.poke()
	}
}

// switchService stops following the previous Service and follows want
// instead, in a goroutine of sw; an empty want follows none.
func (p *Publisher) switchService(ctx context.Context, sw *serviceWatch, want string) {
	sw.cancel()
	sctx, stop := context.WithCancel(ctx)
	sw.cancel = stop
	p.mu.Lock()
	p.svcName, p.svc = want, nil
	p.mu.Unlock()
	if want != "" {
		sw.wg.Go(func() { p.followService(sctx, want) })
	}
}

// followRelay keeps p.relay the Relay as the API server has it, until ctx
// is done.
func (p *Publisher) followRelay(ctx context.Context) {
	watchOne(ctx, p.log, p.o.Name,
		func(ctx context.Context, name string) (runtime.Object, error) {
			return p.o.Relays.GetRelay(ctx, p.o.Namespace, name)
		},
		func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return p.o.Relays.WatchRelays(ctx, p.o.Namespace, opts)
		},
		func(obj runtime.Object) {
			r, _ := obj.(*v1alpha1.Relay)
			p.mu.Lock()
			p.relay = r
			p.mu.Unlock()
			p.poke()
		})
}
