package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	networkingv1beta1 "github.com/liqotech/liqo/apis/networking/v1beta1"

	"github.com/liqo-relay/relay/test/liqo/tools/internal/geneveplan"
)

// resyncPeriod bounds how long a tunnel end that someone else removed or
// changed stays wrong: the objects may not change again, so the kernel is
// re-read this often. One link dump per period costs nothing.
const resyncPeriod = 30 * time.Second

// syncKey is the one work item: every event recomputes all ends of the
// namespace, so deletions need no memory of what an object held.
var syncKey = reconcile.Request{NamespacedName: types.NamespacedName{Name: "tunnel-ends"}}

// syncer is the kernel side (internal/vxlanlink.Links).
type syncer interface {
	Sync(want []geneveplan.End) (geneveplan.Changes, error)
}

// planner reads the objects and decides the ends (gatewayPlanner,
// nodePlanner).
type planner func(ctx context.Context, cl client.Reader) (geneveplan.Plan, error)

// endsReconciler keeps one network namespace's tunnel ends equal to the
// plan for the current objects.
type endsReconciler struct {
	cl    client.Reader
	plan  planner
	links syncer
	log   *slog.Logger

	mu        sync.Mutex
	lastNotes []geneveplan.Note
}

func (r *endsReconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	p, err := r.plan(ctx, r.cl)
	if err != nil {
		return reconcile.Result{}, err
	}
	r.logNotes(p.Notes)
	ch, err := r.links.Sync(p.Ends)
	if !ch.Empty() {
		r.log.Info("tunnel ends synced", "changes", ch.String(), "ends", len(p.Ends))
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("syncing tunnel ends: %w", err)
	}
	return reconcile.Result{RequeueAfter: resyncPeriod}, nil
}

// logNotes logs why tunnels wait, when that changes: the same reasons every
// resync would only bury the news.
func (r *endsReconciler) logNotes(notes []geneveplan.Note) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if slices.Equal(notes, r.lastNotes) {
		return
	}
	r.lastNotes = notes
	for _, n := range notes {
		r.log.Info("tunnel has no end yet", "tunnel", n.Tunnel, "reason", n.Reason)
	}
}

// setup registers the reconciler: any GeneveTunnel (passing tunnelFilter),
// InternalNode or InternalFabric event, and one event at start, enqueue the
// single work item.
func (r *endsReconciler) setup(mgr ctrl.Manager, name string, tunnelFilter predicate.Predicate) error {
	all := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{syncKey}
	})
	// The start event makes the first sync run even when no object exists,
	// so devices left by an earlier run are removed.
	start := make(chan event.GenericEvent, 1)
	start <- event.GenericEvent{Object: &networkingv1beta1.GeneveTunnel{}}
	return ctrl.NewControllerManagedBy(mgr).Named(name).
		Watches(&networkingv1beta1.GeneveTunnel{}, all, builder.WithPredicates(tunnelFilter)).
		Watches(&networkingv1beta1.InternalNode{}, all).
		Watches(&networkingv1beta1.InternalFabric{}, all).
		WatchesRawSource(source.Channel(start, all)).
		Complete(r)
}
