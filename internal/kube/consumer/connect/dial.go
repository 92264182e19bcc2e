package connect

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/kube/client"
	"github.com/liqo-relay/relay/internal/kube/consumer/peering"
	"github.com/liqo-relay/relay/internal/kube/liqo"
)

// Client settings for a provider's API server: a modest rate (the
// operator's own limiter bounds RelayPeer writes below this) and a
// timeout, so that one unreachable provider does not hold a sync for long.
const (
	providerQPS     = 10
	providerBurst   = 20
	providerTimeout = 15 * time.Second
)

// kubeDialer connects to providers with kubeconfig Secrets in the
// consumer, keeps one client per provider and rebuilds it when its Secret
// changes. For each provider it also watches the Relays and this
// consumer's RelayPeers in the tenant namespace, and calls changed with the
// provider's cluster ID on every event, so that a key rotation, a
// hand-deleted RelayPeer or a relay's status reaches Sync at once.
type kubeDialer struct {
	base     context.Context // the lifetime of the watches
	ns       string          // the operator's namespace (override Secrets)
	consumer string
	core     kubernetes.Interface
	dyn      dynamic.Interface
	changed  func(provider string)
	log      *slog.Logger

	mu    sync.Mutex
	conns map[string]*providerConn
	wg    sync.WaitGroup
}

type providerConn struct {
	secret string // ns/name/key@resourceVersion the client was built from
	prov   *kubeProvider
	stop   context.CancelFunc
}

var _ Dialer = (*kubeDialer)(nil)

func (d *kubeDialer) Provider(ctx context.Context, fc peering.ForeignCluster, override *v1alpha1.KubeconfigSecretRef) (Provider, error) {
	ns, name, key := d.ns, "", liqo.KubeconfigKey
	if override != nil {
		name = override.Name
		if override.Key != "" {
			key = override.Key
		}
	} else {
		ns = fc.LocalTenant
		var err error
		if name, err = peering.KubeconfigSecretName(ctx, d.dyn, fc); err != nil {
			return nil, fmt.Errorf("credentials for %s: %w", fc.ID, err)
		}
	}
	sec, err := d.core.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("credentials for %s: Secret %s/%s: %w", fc.ID, ns, name, err)
	}
	id := fmt.Sprintf("%s/%s/%s@%s", ns, name, key, sec.ResourceVersion)
	d.mu.Lock()
	defer d.mu.Unlock()
	if c, ok := d.conns[fc.ID]; ok && c.secret == id {
		return c.prov, nil
	}
	data := sec.Data[key]
	if len(data) == 0 {
		return nil, fmt.Errorf("credentials for %s: Secret %s/%s has no data.%s", fc.ID, ns, name, key)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		return nil, fmt.Errorf("credentials for %s: Secret %s/%s data.%s: %w", fc.ID, ns, name, key, err)
	}
	cfg.QPS, cfg.Burst, cfg.Timeout = providerQPS, providerBurst, providerTimeout
	cfg.UserAgent = "liqo-relay-operator"
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", fc.ID, err)
	}
	rc, err := client.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", fc.ID, err)
	}
	if old, ok := d.conns[fc.ID]; ok {
		old.stop() // the Secret changed: drop the old client and its watches
		d.log.Info("provider credentials changed: reconnecting", "cluster", fc.ID)
	}
	wctx, stop := context.WithCancel(d.base)
	c := &providerConn{secret: id, prov: &kubeProvider{dyn: dyn, relays: rc}, stop: stop}
	d.conns[fc.ID] = c
	d.watch(wctx, fc, rc)
	return c.prov, nil
}

// watch starts the Relay and RelayPeer informers of one provider; they
// stop with ctx.
func (d *kubeDialer) watch(ctx context.Context, fc peering.ForeignCluster, rc *client.Client) {
	ns, id := fc.RemoteTenant, fc.ID
	notify := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { d.changed(id) },
		UpdateFunc: func(any, any) { d.changed(id) },
		DeleteFunc: func(any) { d.changed(id) },
	}
	sel := LabelConsumer + "=" + d.consumer
	informers := []cache.SharedIndexInformer{
		cache.NewSharedIndexInformer(&cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return rc.ListRelays(ctx, ns, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return rc.WatchRelays(ctx, ns, o)
			},
		}, &v1alpha1.Relay{}, 0, cache.Indexers{}),
		cache.NewSharedIndexInformer(&cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				o.LabelSelector = sel
				return rc.ListRelayPeers(ctx, ns, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				o.LabelSelector = sel
				return rc.WatchRelayPeers(ctx, ns, o)
			},
		}, &v1alpha1.RelayPeer{}, 0, cache.Indexers{}),
	}
	for _, inf := range informers {
		_, _ = inf.AddEventHandler(notify)
		d.wg.Go(func() { inf.RunWithContext(ctx) })
	}
}

// close stops every provider's watches and waits for them.
func (d *kubeDialer) close() {
	d.mu.Lock()
	for _, c := range d.conns {
		c.stop()
	}
	d.mu.Unlock()
	d.wg.Wait()
}
