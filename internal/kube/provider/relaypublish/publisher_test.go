package relaypublish

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/liqo-relay/relay/api/v1alpha1"
)

// fakeRelays holds one namespace's Relays and Services, with watches.
type fakeRelays struct {
	mu       sync.Mutex
	relays   map[string]*v1alpha1.Relay
	services map[string]*corev1.Service
	rw, sw   []*watch.RaceFreeFakeWatcher
	writes   int
}

func newFake() *fakeRelays {
	return &fakeRelays{relays: map[string]*v1alpha1.Relay{}, services: map[string]*corev1.Service{}}
}

func (f *fakeRelays) GetRelay(_ context.Context, _, name string) (*v1alpha1.Relay, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.relays[name]
	if !ok {
		return nil, apierrors.NewNotFound(v1alpha1.Resource("relays"), name)
	}
	return r.DeepCopy(), nil
}

func (f *fakeRelays) WatchRelays(context.Context, string, metav1.ListOptions) (watch.Interface, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := watch.NewRaceFreeFake()
	f.rw = append(f.rw, w)
	return w, nil
}

func (f *fakeRelays) ApplyRelay(_ context.Context, ns, name string, labels map[string]string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.relays[name]; !ok {
		r := &v1alpha1.Relay{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, Generation: 1, ResourceVersion: "1"}}
		f.relays[name] = r
		for _, w := range f.rw {
			w.Add(r.DeepCopy())
		}
	}
	return nil
}

func (f *fakeRelays) ApplyRelayStatus(_ context.Context, _, name string, st v1alpha1.RelayStatus) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.relays[name]
	if !ok {
		return apierrors.NewNotFound(v1alpha1.Resource("relays"), name)
	}
	r.Status = *st.DeepCopy()
	f.writes++
	for _, w := range f.rw {
		if !w.IsStopped() {
			w.Modify(r.DeepCopy())
		}
	}
	return nil
}

func (f *fakeRelays) setSpec(name string, spec v1alpha1.RelaySpec) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.relays[name]
	r.Spec = spec
	r.Generation++
	for _, w := range f.rw {
		w.Modify(r.DeepCopy())
	}
}

func (f *fakeRelays) Get(_ context.Context, name string, _ metav1.GetOptions) (*corev1.Service, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.services[name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "services"}, name)
	}
	return s.DeepCopy(), nil
}

func (f *fakeRelays) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := watch.NewRaceFreeFake()
	f.sw = append(f.sw, w)
	return w, nil
}

func (f *fakeRelays) putService(s *corev1.Service) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, existed := f.services[s.Name]
	f.services[s.Name] = s.DeepCopy()
	for _, w := range f.sw {
		if existed {
			w.Modify(s.DeepCopy())
		} else {
			w.Add(s.DeepCopy())
		}
	}
}

func (f *fakeRelays) relay(name string) *v1alpha1.Relay {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.relays[name]; ok {
		return r.DeepCopy()
	}
	return nil
}

func TestPublisherFollowsSpecAndService(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake()
		p := New(Options{Namespace: "ns", Name: "provider-a", Labels: map[string]string{"app": "relay"},
			Info: Info{PublicKey: "PUB=", Addresses: []string{"100.80.0.1/32"}, ListenPort: 51900, Mode: "tun", Version: "v1", ProtocolVersion: 1,
				Ready: func() (bool, string) { return true, "" }},
			Relays: f, Services: f})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- p.Run(ctx) }()

		settled(t, "the Relay with its status", func() bool {
			r := f.relay("provider-a")
			return r != nil && r.Status.PublicKey == "PUB=" && r.Status.ListenPort == 51900 && r.Status.Ready &&
				len(r.Status.Addresses) == 1 && r.Status.Addresses[0] == "100.80.0.1/32"
		})
		r := f.relay("provider-a")
		if c := meta.FindStatusCondition(r.Status.Conditions, v1alpha1.ConditionEndpointsKnown); c == nil || c.Reason != v1alpha1.ReasonNoEndpoints {
			t.Errorf("EndpointsKnown %+v, want False/NoEndpoints", c)
		}
		if r.Labels["app"] != "relay" {
			t.Errorf("labels %v", r.Labels)
		}
		f.setSpec("provider-a", v1alpha1.RelaySpec{ServiceRef: &v1alpha1.ServiceRef{Name: "relay"}})
		settled(t, "ServiceNotFound", func() bool {
			c := meta.FindStatusCondition(f.relay("provider-a").Status.Conditions, v1alpha1.ConditionEndpointsKnown)
			return c != nil && c.Reason == v1alpha1.ReasonServiceNotFound
		})
		f.putService(service([]corev1.ServicePort{{Port: 51900, Protocol: corev1.ProtocolUDP}}))
		f.putService(service([]corev1.ServicePort{{Port: 51900, Protocol: corev1.ProtocolUDP}}, corev1.LoadBalancerIngress{IP: "203.0.113.9"}))
		settled(t, "the Service's ingress", func() bool {
			eps := f.relay("provider-a").Status.Endpoints
			return len(eps) == 1 && eps[0] == "203.0.113.9:51900"
		})
		// Steady state: no more writes.
		defer func() {
			cancel()
			<-done
			if r := f.relay("provider-a"); r.Status.Ready {
				t.Error("status.ready still true after the publisher stopped")
			}
		}()
		f.mu.Lock()
		n := f.writes
		f.mu.Unlock()
		p.poke()
		p.poke()
		synctest.Wait() // the publisher has done all it would for the pokes
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.writes != n {
			t.Errorf("%d status writes without a change", f.writes-n)
		}
	})
}

// settled waits, in the test's synctest bubble, until cond holds once
// every goroutine of the bubble is blocked: the publisher has done all it does
// for what happened so far, its timers firing as the bubble's clock moves.
func settled(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		synctest.Wait()
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the publisher is idle without %s", what)
		}
		time.Sleep(10 * time.Millisecond) // synctest: moves the bubble's clock to the publisher's next timer
	}
}
