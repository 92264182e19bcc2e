package peersync

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/status"
)

// fakeAPI is an in-memory RelayPeer store with watches and a record of the
// status writes.
type fakeAPI struct {
	mu        sync.Mutex
	objs      map[string]*v1alpha1.RelayPeer
	watchers  []fakeWatch
	rv        int
	writes    []statusWrite
	failList  bool
	failApply error
	calls     int
}

func (f *fakeAPI) applyCalls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

type fakeWatch struct {
	w   *watch.FakeWatcher
	sel labels.Selector
}

type statusWrite struct {
	name string
	st   v1alpha1.RelayPeerStatus
}

var _ API = (*fakeAPI)(nil)

// IsWatchListSemanticsUnSupported tells the informer to list, then watch:
// the fake cannot stream the initial list as watch events.
func (f *fakeAPI) IsWatchListSemanticsUnSupported() bool { return true }

func newFakeAPI() *fakeAPI { return &fakeAPI{objs: map[string]*v1alpha1.RelayPeer{}} }

func (f *fakeAPI) ListRelayPeers(_ context.Context, _ string, opts metav1.ListOptions) (*v1alpha1.RelayPeerList, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failList {
		return nil, fmt.Errorf("connection refused")
	}
	sel, err := labels.Parse(opts.LabelSelector)
	if err != nil {
		return nil, err
	}
	out := &v1alpha1.RelayPeerList{ListMeta: metav1.ListMeta{ResourceVersion: fmt.Sprint(f.rv)}}
	for _, o := range f.objs {
		if sel.Matches(labels.Set(o.Labels)) {
			out.Items = append(out.Items, *o.DeepCopy())
		}
	}
	return out, nil
}

func (f *fakeAPI) WatchRelayPeers(_ context.Context, _ string, opts metav1.ListOptions) (watch.Interface, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sel, err := labels.Parse(opts.LabelSelector)
	if err != nil {
		return nil, err
	}
	w := watch.NewFakeWithChanSize(100, false)
	f.watchers = append(f.watchers, fakeWatch{w, sel})
	return w, nil
}

func (f *fakeAPI) ApplyRelayPeerStatus(_ context.Context, _, name string, st v1alpha1.RelayPeerStatus) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.failApply != nil {
		return f.failApply
	}
	o, ok := f.objs[name]
	if !ok {
		return apierrors.NewNotFound(v1alpha1.Resource("relaypeers"), name)
	}
	o.Status = *st.DeepCopy()
	f.writes = append(f.writes, statusWrite{name, *st.DeepCopy()})
	return nil
}

// put creates or updates an object (bumping its generation on update) and
// tells the watchers.
func (f *fakeAPI) put(o *v1alpha1.RelayPeer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rv++
	o = o.DeepCopy()
	o.ResourceVersion = fmt.Sprint(f.rv)
	old, exists := f.objs[o.Name]
	if exists {
		o.Generation = old.Generation + 1
		o.Status = old.Status
	} else if o.Generation == 0 {
		o.Generation = 1
	}
	f.objs[o.Name] = o
	for _, w := range f.watchers {
		switch {
		case !w.sel.Matches(labels.Set(o.Labels)):
		case exists:
			w.w.Modify(o.DeepCopy())
		default:
			w.w.Add(o.DeepCopy())
		}
	}
}

func (f *fakeAPI) remove(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o, ok := f.objs[name]
	if !ok {
		return
	}
	delete(f.objs, name)
	f.rv++
	for _, w := range f.watchers {
		if w.sel.Matches(labels.Set(o.Labels)) {
			w.w.Delete(o.DeepCopy())
		}
	}
}

func (f *fakeAPI) statusWrites() []statusWrite {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]statusWrite(nil), f.writes...)
}

// fakeAgent records applied configurations and serves a scripted status.
type fakeAgent struct {
	mu      sync.Mutex
	applied []*config.Config
	fail    error
	status  status.Status
}

var _ Agent = (*fakeAgent)(nil)

func (a *fakeAgent) Apply(_ context.Context, cfg *config.Config) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.fail != nil {
		return a.fail
	}
	a.applied = append(a.applied, cfg.Clone())
	return nil
}

func (a *fakeAgent) Status(context.Context) (status.Status, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.status, nil
}

func (a *fakeAgent) last() *config.Config {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.applied) == 0 {
		return nil
	}
	return a.applied[len(a.applied)-1]
}

func (a *fakeAgent) applies() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.applied)
}

func (a *fakeAgent) setStatus(s status.Status) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.status = s
}

type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) Inc() { c.mu.Lock(); c.n++; c.mu.Unlock() }

// events records events as "name type reason note".
type events struct {
	mu   sync.Mutex
	list []string
}

func (e *events) Eventf(regarding, _ runtime.Object, eventtype, reason, _, note string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	name := ""
	if o, ok := regarding.(*v1alpha1.RelayPeer); ok {
		name = o.Name
	}
	e.list = append(e.list, fmt.Sprintf("%s %s %s %s", name, eventtype, reason, fmt.Sprintf(note, args...)))
}
