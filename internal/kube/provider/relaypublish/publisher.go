package relaypublish

import (
	"context"
	"log/slog"
	"reflect"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/liqo-relay/relay/api/v1alpha1"
)

// Info is what the relay says about itself.
type Info struct {
	PublicKey string
	// Addresses are the relay's own overlay addresses (config addresses).
	Addresses       []string
	ListenPort      uint16
	Mode            string
	Version         string
	ProtocolVersion int
	// Ready reports whether the relay serves, and why not.
	Ready func() (bool, string)
	// Keys, when set, gives the keys of the status as they change with a
	// key rotation: publicKey (instead of PublicKey), nextPublicKey and
	// keyRotation (package keyrotate).
	Keys func() (publicKey, nextPublicKey, keyRotation string)
}

// RelayAPI is what the publisher needs of the liqo-relay API.
type RelayAPI interface {
	GetRelay(ctx context.Context, ns, name string) (*v1alpha1.Relay, error)
	WatchRelays(ctx context.Context, ns string, opts metav1.ListOptions) (watch.Interface, error)
	ApplyRelay(ctx context.Context, ns, name string, labels map[string]string) error
	ApplyRelayStatus(ctx context.Context, ns, name string, st v1alpha1.RelayStatus) error
}

// ServiceAPI is what the publisher needs of the Services of its namespace.
type ServiceAPI interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Service, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// Options configure a Publisher.
type Options struct {
	Namespace string
	Name      string // the relay's name, and its Relay's
	Labels    map[string]string
	Info      Info
	Relays    RelayAPI
	Services  ServiceAPI
	Logger    *slog.Logger
	Now       func() time.Time
	// Writes counts status writes.
	Writes interface{ Inc() }
	// OnRelay, when set, sees the Relay before each status computation:
	// on every change and every resync (keyrotate.Rotator.Sync). It runs
	// on the publisher's goroutine; its errors are its own to log.
	OnRelay func(ctx context.Context, relay *v1alpha1.Relay)
}

// resync is how often the publisher re-checks readiness and rewrites a
// status that someone else changed.
const resync = 10 * time.Second

// Publisher keeps the Relay object of one relay.
type Publisher struct {
	o       Options
	log     *slog.Logger
	changed chan struct{}

	mu      sync.Mutex
	relay   *v1alpha1.Relay // nil while it does not exist
	svc     *corev1.Service
	svcName string // the Service the watcher follows
}

// New builds a Publisher; Run runs it.
func New(o Options) *Publisher {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Publisher{o: o, log: o.Logger.With("component", "relaypublish"), changed: make(chan struct{}, 1)}
}

func (p *Publisher) poke() {
	select {
	case p.changed <- struct{}{}:
	default:
	}
}

// Run creates the Relay, follows it and its Service, and writes its status
// until ctx is done. API errors are retried; they never stop the relay.
// Each change, and each resync, is one step.
func (p *Publisher) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wg.Go(func() { p.followRelay(ctx) })
	sw := &serviceWatch{wg: &wg, cancel: func() {}}
	defer func() { sw.cancel() }()
	var last *v1alpha1.RelayStatus
	t := time.NewTicker(resync)
	defer t.Stop()
	p.poke()
	for {
		select {
		case <-ctx.Done():
			p.stopped(last)
			return nil
		case <-p.changed:
		case <-t.C:
			last = nil // rewrite if someone else changed it
		}
		last = p.step(ctx, sw, last)
	}
}

// stopTimeout bounds the last status write on shutdown, within the relay's
// shutdown budget.
const stopTimeout = time.Second

// stopped writes, best effort, that the relay no longer serves, so that
// status.ready does not outlive the process.
func (p *Publisher) stopped(last *v1alpha1.RelayStatus) {
	if last == nil {
		return
	}
	st := *last.DeepCopy()
	st.Ready = false
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse,
		Reason: v1alpha1.ReasonStopped, Message: "the relay has stopped", ObservedGeneration: st.ObservedGeneration,
		LastTransitionTime: metav1.NewTime(p.o.Now())})
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	if err := p.o.Relays.ApplyRelayStatus(ctx, p.o.Namespace, p.o.Name, st); err != nil {
		p.log.Debug("writing the stopped Relay status", "err", err)
	}
}

func (p *Publisher) followService(ctx context.Context, name string) {
	watchOne(ctx, p.log, name,
		func(ctx context.Context, name string) (runtime.Object, error) {
			return p.o.Services.Get(ctx, name, metav1.GetOptions{})
		},
		p.o.Services.Watch,
		func(obj runtime.Object) {
			s, _ := obj.(*corev1.Service)
			p.mu.Lock()
			if p.svcName == name {
				p.svc = s
			}
			p.mu.Unlock()
			p.poke()
		})
}

func serviceName(spec v1alpha1.RelaySpec) string {
	if spec.ServiceRef == nil {
		return ""
	}
	return spec.ServiceRef.Name
}

// status computes the Relay's status, keeping the conditions' transition
// times when their status did not change.
func (p *Publisher) status(relay *v1alpha1.Relay, svc *corev1.Service) v1alpha1.RelayStatus {
	in := p.o.Info
	ready, why := true, ""
	if in.Ready != nil {
		ready, why = in.Ready()
	}
	st := v1alpha1.RelayStatus{
		ObservedGeneration: relay.Generation,
		PublicKey:          in.PublicKey,
		Addresses:          append([]string(nil), in.Addresses...),
		ListenPort:         int32(in.ListenPort),
		Mode:               in.Mode,
		Version:            in.Version,
		ProtocolVersion:    int32(in.ProtocolVersion),
		Ready:              ready,
		KeyRotation:        relay.Status.KeyRotation,
		Conditions:         append([]metav1.Condition(nil), relay.Status.Conditions...),
	}
	if in.Keys != nil {
		st.PublicKey, st.NextPublicKey, st.KeyRotation = in.Keys()
	}
	now := metav1.NewTime(p.o.Now())
	set := func(typ string, ok bool, reason, msg string) {
		s := metav1.ConditionFalse
		if ok {
			s = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: typ, Status: s, Reason: reason, Message: msg,
			ObservedGeneration: relay.Generation, LastTransitionTime: now})
	}
	if ready {
		set(v1alpha1.ConditionReady, true, v1alpha1.ReasonRunning, "the relay runs and serves")
	} else {
		set(v1alpha1.ConditionReady, false, v1alpha1.ReasonNotReady, why)
	}
	eps, reason, msg := endpoints(relay.Spec, svc)
	st.Endpoints = eps
	if len(eps) > 0 {
		set(v1alpha1.ConditionEndpointsKnown, true, v1alpha1.ReasonEndpoints, "other providers reach this relay at status.endpoints")
	} else {
		set(v1alpha1.ConditionEndpointsKnown, false, reason, msg)
	}
	return st
}

// statusEqual compares statuses ignoring condition transition times.
func statusEqual(a, b v1alpha1.RelayStatus) bool {
	strip := func(s v1alpha1.RelayStatus) v1alpha1.RelayStatus {
		s.Conditions = append([]metav1.Condition(nil), s.Conditions...)
		for i := range s.Conditions {
			s.Conditions[i].LastTransitionTime = metav1.Time{}
		}
		if len(s.Endpoints) == 0 {
			s.Endpoints = nil
		}
		if len(s.Conditions) == 0 {
			s.Conditions = nil
		}
		return s
	}
	return reflect.DeepEqual(strip(a), strip(b))
}
