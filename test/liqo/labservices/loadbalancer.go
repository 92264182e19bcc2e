package labservices

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// LoadBalancers gives every LoadBalancer Service of the cluster (without a
// spec.loadBalancerClass: those belong to another implementation) an
// address from Pool and routes it with Router.
type LoadBalancers struct {
	client   kubernetes.Interface
	services corelisters.ServiceLister
	synced   cache.InformerSynced
	pool     *Pool
	router   Router
	log      *slog.Logger
	queue    workqueue.TypedRateLimitingInterface[string]
}

// NewLoadBalancers builds the controller on the factory's Service
// informer; start the factory, then Run.
func NewLoadBalancers(client kubernetes.Interface, f informers.SharedInformerFactory, pool *Pool, r Router, log *slog.Logger) *LoadBalancers {
	inf := f.Core().V1().Services()
	c := &LoadBalancers{
		client: client, services: inf.Lister(), synced: inf.Informer().HasSynced,
		pool: pool, router: r, log: log.With("component", "loadbalancers"),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "services"}),
	}
	enqueue := func(obj any) {
		if k, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			c.queue.Add(k)
		}
	}
	_, _ = inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, o any) { enqueue(o) }, DeleteFunc: enqueue,
	})
	return c
}

// ours reports whether the controller serves s.
func ours(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeLoadBalancer && s.Spec.LoadBalancerClass == nil
}

// ingressAddr is the address s's status holds, if it is one address.
func ingressAddr(s *corev1.Service) netip.Addr {
	if len(s.Status.LoadBalancer.Ingress) != 1 {
		return netip.Addr{}
	}
	a, err := netip.ParseAddr(s.Status.LoadBalancer.Ingress[0].IP)
	if err != nil {
		return netip.Addr{}
	}
	return a
}

// Run seeds the pool with the addresses the Services already hold (a
// restart keeps them), then syncs until ctx is done.
func (c *LoadBalancers) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), c.synced) {
		return fmt.Errorf("services informer: %w", ctx.Err())
	}
	all, err := c.services.List(everything)
	if err != nil {
		return fmt.Errorf("listing services: %w", err)
	}
	for _, s := range all {
		if a := ingressAddr(s); ours(s) && c.pool.Contains(a) {
			if _, err := c.pool.Take(key(s), a); err != nil {
				c.log.Warn("an address held twice: the later Service gets a new one", "service", key(s), "address", a, "err", err)
			}
		}
	}
	if err := c.dropStaleRoutes(ctx); err != nil {
		return err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		<-ctx.Done()
		c.queue.ShutDown()
	})
	for c.next(ctx) {
	}
	return nil
}

// dropStaleRoutes removes the routes of pool addresses no Service holds:
// those of Services deleted, or no longer LoadBalancers, while the
// controller was down.
func (c *LoadBalancers) dropStaleRoutes(ctx context.Context) error {
	routed, err := c.router.Routed(ctx)
	if err != nil {
		return err
	}
	held := map[netip.Addr]bool{}
	for _, s := range c.pool.byOwner {
		held[s] = true
	}
	for _, a := range routed {
		if c.pool.Contains(a) && !held[a] {
			if err := c.router.Unroute(ctx, a); err != nil {
				return err
			}
			c.log.Info("stale route removed", "address", a)
		}
	}
	return nil
}

var everything = labels.Everything()

func key(s *corev1.Service) string { return s.Namespace + "/" + s.Name }

func (c *LoadBalancers) next(ctx context.Context) bool {
	k, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(k)
	if err := c.Sync(ctx, k); err != nil {
		c.log.Error("sync failed; retrying", "service", k, "err", err)
		c.queue.AddRateLimited(k)
		return true
	}
	c.queue.Forget(k)
	return true
}

// Sync brings one Service's address, route and status to what its spec
// asks for. It is idempotent.
func (c *LoadBalancers) Sync(ctx context.Context, k string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(k)
	if err != nil {
		return fmt.Errorf("key %q: %w", k, err)
	}
	s, err := c.services.Services(ns).Get(name)
	if apierrors.IsNotFound(err) || err == nil && !ours(s) {
		if a, ok := c.pool.Release(k); ok {
			if err := c.router.Unroute(ctx, a); err != nil {
				c.pool.Take(k, a) //nolint:errcheck // re-held so that the retry unroutes it
				return err
			}
			c.log.Info("address released", "service", k, "address", a)
		}
		if err == nil && len(s.Status.LoadBalancer.Ingress) > 0 && c.pool.Contains(ingressAddr(s)) {
			return c.writeStatus(ctx, s, nil)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("service %s: %w", k, err)
	}
	var want netip.Addr
	if s.Spec.LoadBalancerIP != "" {
		if want, err = netip.ParseAddr(s.Spec.LoadBalancerIP); err != nil {
			return fmt.Errorf("service %s: spec.loadBalancerIP %q: %w", k, s.Spec.LoadBalancerIP, err)
		}
	}
	old, had := c.pool.Owned(k)
	a, err := c.pool.Take(k, want)
	if err != nil {
		return fmt.Errorf("service %s: %w", k, err)
	}
	if err := c.router.Route(ctx, a); err != nil {
		return err
	}
	if had && old != a {
		// The Service asked for another address: the old one goes.
		if err := c.router.Unroute(ctx, old); err != nil {
			return err
		}
	}
	if ingressAddr(s) == a {
		return nil
	}
	c.log.Info("address assigned", "service", k, "address", a)
	vip := corev1.LoadBalancerIPModeVIP
	return c.writeStatus(ctx, s, []corev1.LoadBalancerIngress{{IP: a.String(), IPMode: &vip}})
}

func (c *LoadBalancers) writeStatus(ctx context.Context, s *corev1.Service, in []corev1.LoadBalancerIngress) error {
	s = s.DeepCopy()
	s.Status.LoadBalancer.Ingress = in
	if _, err := c.client.CoreV1().Services(s.Namespace).UpdateStatus(ctx, s, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("service %s/%s: writing status: %w", s.Namespace, s.Name, err)
	}
	return nil
}
