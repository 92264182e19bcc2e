package connect

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/kube/client"
	"github.com/liqo-relay/relay/internal/kube/liqo"
)

// fccAPI is what the FCC informer needs of the liqo-relay API.
type fccAPI interface {
	ListFCCs(ctx context.Context, opts metav1.ListOptions) (*v1alpha1.ForeignClusterConnectionList, error)
	WatchFCCs(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

var _ fccAPI = (*client.Client)(nil)

// newFCCInformer is the informer on the ForeignClusterConnections; it
// calls enqueue with an FCC added, deleted or changed so that it needs a
// sync (fccChanged).
func newFCCInformer(api fccAPI, enqueue func(any)) cache.SharedIndexInformer {
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return api.ListFCCs(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return api.WatchFCCs(ctx, opts)
		},
	}, &v1alpha1.ForeignClusterConnection{}, 0, cache.Indexers{})
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		UpdateFunc: func(old, cur any) {
			if fccChanged(old, cur) {
				enqueue(cur)
			}
		},
		DeleteFunc: enqueue,
	})
	return inf
}

// fccChanged reports whether an update of an FCC needs a sync: our own
// status writes change neither generation nor metadata that matters.
func fccChanged(old, cur any) bool {
	o, ok1 := old.(*v1alpha1.ForeignClusterConnection)
	n, ok2 := cur.(*v1alpha1.ForeignClusterConnection)
	return !ok1 || !ok2 || o.Generation != n.Generation || (o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil)
}

// liqoWatched are the consumer's Liqo resources whose changes trigger a
// sync of every FCC.
var liqoWatched = []schema.GroupVersionResource{liqo.ForeignClusters, liqo.Configurations, liqo.IPs}

// newLiqoInformers are the informers on liqoWatched: any change to Liqo's
// objects may change any FCC's mapping, so each calls enqueueAll.
func newLiqoInformers(dyn dynamic.Interface, enqueueAll func()) dynamicinformer.DynamicSharedInformerFactory {
	f := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	all := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { enqueueAll() },
		UpdateFunc: func(any, any) { enqueueAll() },
		DeleteFunc: func(any) { enqueueAll() },
	}
	for _, gvr := range liqoWatched {
		_, _ = f.ForResource(gvr).Informer().AddEventHandler(all)
	}
	return f
}
