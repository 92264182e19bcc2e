package podrunner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// workers is how many pods sync at once.
const workers = 4

// Config is a runner's configuration.
type Config struct {
	Node          string
	NodeIP        netip.Addr
	PodCIDR       netip.Prefix
	StateDir      string
	Images        Images
	ClusterDNS    string
	ClusterDomain string
	// HostMountNS is the mount namespace in which pod network namespaces
	// are bound under /run/netns, where `ip netns` finds them. The
	// default is the mount namespace of the process that started the
	// runner: `ip netns exec` gives the runner a mount namespace of its
	// own, and its caller's is the one the lab's tools use.
	HostMountNS string
	// Self is the runner's binary, run as the init helper and for exec
	// probes.
	Self string
}

// Validate returns every problem of c.
func (c *Config) Validate() error {
	var errs []error
	if c.Node == "" {
		errs = append(errs, errors.New("--node: required"))
	}
	if !c.NodeIP.IsValid() {
		errs = append(errs, errors.New("--node-ip: required"))
	}
	if !c.PodCIDR.IsValid() {
		errs = append(errs, errors.New("--pod-cidr: required"))
	}
	if c.StateDir == "" {
		errs = append(errs, errors.New("--state-dir: required"))
	}
	if c.ClusterDNS == "" {
		errs = append(errs, errors.New("--cluster-dns: required"))
	}
	if c.Self == "" {
		errs = append(errs, errors.New("the runner's own binary is unknown"))
	}
	return errors.Join(errs...)
}

// Runner runs the pods bound to one node.
type Runner struct {
	cfg    Config
	client kubernetes.Interface
	log    *slog.Logger
	now    func() time.Time
	state  stateDir
	queue  workqueue.TypedRateLimitingInterface[string]

	ipMu sync.Mutex
	ipam *IPAM

	// hostMnt is HostMountNS, opened at the start: the runner's parent
	// may be gone later.
	hostMnt *os.File

	podLister corelisters.PodLister
	objects   Objects
	alloc     corev1.ResourceList

	mu   sync.Mutex
	pods map[string]*podState
	// deleted holds the UIDs of the pods the runner has deleted, by key,
	// until the informer stops showing them, so that a late event does
	// not take such a pod up again.
	deleted map[string]types.UID
	// wg counts the goroutines pods started: process waiters, probers,
	// terminations.
	wg sync.WaitGroup
}

// New returns a runner for cfg that talks to the API server with client.
func New(cfg Config, client kubernetes.Interface, log *slog.Logger) (*Runner, error) {
	if cfg.ClusterDomain == "" {
		cfg.ClusterDomain = "cluster.local"
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ipam, err := NewIPAM(cfg.PodCIDR)
	if err != nil {
		return nil, err
	}
	hostMnt, err := openHostMountNS(cfg.HostMountNS, log)
	if err != nil {
		return nil, err
	}
	return &Runner{
		hostMnt: hostMnt,
		cfg:     cfg,
		client:  client,
		log:     log.With("component", "podrunner", "node", cfg.Node),
		now:     time.Now,
		state:   stateDir(cfg.StateDir),
		ipam:    ipam,
		alloc:   capacity(),
		pods:    map[string]*podState{},
		deleted: map[string]types.UID{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "podrunner"}),
	}, nil
}

// openHostMountNS opens the mount namespace path, or when path is empty
// the first of these that opens: the runner's parent's (the caller of ip
// netns exec), init's, the runner's own (whose /run/netns mounts only the
// runner and its children see, which it logs).
func openHostMountNS(path string, log *slog.Logger) (*os.File, error) {
	if path != "" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("opening the host mount namespace: %w", err)
		}
		return f, nil
	}
	for _, p := range []string{fmt.Sprintf("/proc/%d/ns/mnt", os.Getppid()), "/proc/1/ns/mnt"} {
		if f, err := os.Open(p); err == nil {
			return f, nil
		}
	}
	log.Warn("neither the parent's nor init's mount namespace opens: pod network namespaces are bound in the runner's own, where ip netns outside the runner does not see them")
	f, err := os.Open("/proc/self/ns/mnt")
	if err != nil {
		return nil, fmt.Errorf("opening the runner's mount namespace: %w", err)
	}
	return f, nil
}

// Run registers the node, runs its pods until ctx ends, then stops every
// pod and removes what it created (the Node object stays).
func (r *Runner) Run(ctx context.Context) error {
	defer r.hostMnt.Close()
	if err := r.cleanStale(); err != nil {
		return fmt.Errorf("cleaning up after an earlier run: %w", err)
	}
	if err := SetupBridge(r.ipam.Gateway(), r.ipam.Prefix()); err != nil {
		return err
	}
	defer func() {
		if err := DeleteBridge(); err != nil {
			r.log.Error("deleting the bridge", "err", err)
		}
	}()
	agent := &nodeAgent{client: r.client, cfg: NodeConfig{Name: r.cfg.Node, IP: r.cfg.NodeIP.String(), PodCIDR: r.cfg.PodCIDR.String()}, log: r.log, now: r.now}
	node, err := agent.register(ctx)
	if err != nil {
		return err
	}
	r.log.Info("node registered", "podCIDR", r.cfg.PodCIDR, "ip", r.cfg.NodeIP)

	podFactory := informers.NewSharedInformerFactoryWithOptions(r.client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", r.cfg.Node).String()
		}))
	factory := informers.NewSharedInformerFactory(r.client, 0)
	pods := podFactory.Core().V1().Pods()
	cms := factory.Core().V1().ConfigMaps()
	secrets := factory.Core().V1().Secrets()
	svcs := factory.Core().V1().Services()
	r.podLister = pods.Lister()
	r.objects = listerObjects{cms: cms.Lister(), secrets: secrets.Lister(), svcs: svcs.Lister()}
	if _, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    r.enqueuePod,
		UpdateFunc: func(_, o any) { r.enqueuePod(o) },
		DeleteFunc: r.enqueuePod,
	}); err != nil {
		return fmt.Errorf("watching pods: %w", err)
	}
	for _, inf := range []cache.SharedIndexInformer{cms.Informer(), secrets.Informer()} {
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    r.enqueueNamespaceOf,
			UpdateFunc: func(_, o any) { r.enqueueNamespaceOf(o) },
			DeleteFunc: r.enqueueNamespaceOf,
		}); err != nil {
			return fmt.Errorf("watching configmaps and secrets: %w", err)
		}
	}
	_ = svcs.Informer()
	defer factory.Shutdown()
	defer podFactory.Shutdown()
	podFactory.Start(ctx.Done())
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), pods.Informer().HasSynced, cms.Informer().HasSynced,
		secrets.Informer().HasSynced, svcs.Informer().HasSynced) {
		return fmt.Errorf("waiting for the informers: %w", ctx.Err())
	}

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		agent.heartbeat(ctx, node)
	}()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r.processNext(ctx) {
			}
		}()
	}
	r.log.Info("running pods")
	<-ctx.Done()
	r.log.Info("stopping: stopping every pod")
	r.queue.ShutDown()
	wg.Wait()
	r.shutdownPods()
	return nil
}

// processNext syncs one key from the queue; false when the queue is shut
// down.
func (r *Runner) processNext(ctx context.Context) bool {
	key, quit := r.queue.Get()
	if quit {
		return false
	}
	defer r.queue.Done(key)
	after, err := r.sync(ctx, key)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("sync failed, retrying", "pod", key, "err", err)
		}
		r.queue.AddRateLimited(key)
		return true
	}
	r.queue.Forget(key)
	if after > 0 {
		r.queue.AddAfter(key, after)
	}
	return true
}

func (r *Runner) enqueuePod(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		r.log.Warn("pod event without a key", "err", err)
		return
	}
	r.queue.Add(key)
}

// enqueueNamespaceOf syncs every pod of the namespace of a ConfigMap or
// Secret that changed, so that their volumes follow.
func (r *Runner) enqueueNamespaceOf(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, ps := range r.pods {
		if ps.namespace == m.GetNamespace() {
			r.queue.Add(key)
		}
	}
}

// listerObjects reads API objects from informer caches.
type listerObjects struct {
	cms     corelisters.ConfigMapLister
	secrets corelisters.SecretLister
	svcs    corelisters.ServiceLister
}

var _ Objects = listerObjects{}

func (o listerObjects) ConfigMap(ns, name string) (*corev1.ConfigMap, error) {
	return o.cms.ConfigMaps(ns).Get(name)
}

func (o listerObjects) Secret(ns, name string) (*corev1.Secret, error) {
	return o.secrets.Secrets(ns).Get(name)
}

func (o listerObjects) Services(ns string) ([]*corev1.Service, error) {
	return o.svcs.Services(ns).List(labels.Everything())
}
