package connect

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/liqo-relay/relay/api/v1alpha1"
)

func TestFCCChanged(t *testing.T) {
	f := &v1alpha1.ForeignClusterConnection{ObjectMeta: metav1.ObjectMeta{Name: "x", Generation: 1}}
	statusOnly := f.DeepCopy()
	statusOnly.Status.Phase = v1alpha1.PhaseConnected
	edited := f.DeepCopy()
	edited.Generation = 2
	deleting := f.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	for _, tc := range []struct {
		name     string
		old, cur any
		want     bool
	}{
		{"our own status write", f, statusOnly, false},
		{"a spec edit", f, edited, true},
		{"deletion starts", f, deleting, true},
		{"not an FCC", f, cache.DeletedFinalStateUnknown{Key: "x", Obj: f}, true},
	} {
		if got := fccChanged(tc.old, tc.cur); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// fccList is an fccAPI holding fixed FCCs and no changes. A streamed list
// (a watch with sendInitialEvents) gets them as events, then the bookmark
// that ends them, as from an API server.
type fccList struct {
	items []v1alpha1.ForeignClusterConnection
}

func (l fccList) ListFCCs(context.Context, metav1.ListOptions) (*v1alpha1.ForeignClusterConnectionList, error) {
	return &v1alpha1.ForeignClusterConnectionList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: l.items}, nil
}

func (l fccList) WatchFCCs(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w := watch.NewFakeWithChanSize(len(l.items)+1, false)
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		for i := range l.items {
			w.Add(&l.items[i])
		}
		w.Action(watch.Bookmark, &v1alpha1.ForeignClusterConnection{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "1",
			Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}})
	}
	return w, nil
}

func TestFCCInformerEnqueuesWhatItLists(t *testing.T) {
	got := make(chan string, 2)
	inf := newFCCInformer(fccList{[]v1alpha1.ForeignClusterConnection{{ObjectMeta: metav1.ObjectMeta{Name: "x", ResourceVersion: "1"}}}},
		func(obj any) { got <- obj.(*v1alpha1.ForeignClusterConnection).Name })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); inf.RunWithContext(ctx) }()
	defer func() { cancel(); <-done }()
	select {
	case name := <-got:
		if name != "x" {
			t.Errorf("enqueued %q, want x", name)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the listed FCC was never enqueued")
	}
}

func TestNew(t *testing.T) {
	reg := prometheus.NewRegistry()
	c, err := New(Options{Config: &rest.Config{Host: "https://192.0.2.1:6443"}, Namespace: "liqo-relay", ConsumerID: "c", Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	if c.o.WriteQPS != DefaultWriteQPS || c.o.WriteBurst != DefaultWriteBurst || c.rec.ConsumerID != "c" {
		t.Errorf("options %+v, reconciler for %q", c.o, c.rec.ConsumerID)
	}
	// A second controller on the same registry: its metrics clash.
	if _, err := New(Options{Config: &rest.Config{Host: "https://192.0.2.1:6443"}, Registry: reg}); err == nil || !strings.Contains(err.Error(), "registering metrics") {
		t.Errorf("metrics registered twice: err %v", err)
	}
	if _, err := New(Options{Config: &rest.Config{Host: "https://192.0.2.1:6443", QPS: 1, Burst: -1}}); err == nil || !strings.HasPrefix(err.Error(), "consumer client: ") {
		t.Errorf("a client-go refused configuration: err %v, want consumer client: ...", err)
	}
}
