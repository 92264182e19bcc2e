package webhook

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/events"
)

// certCheckEvery is how often the certificates and the caBundle are
// checked: often enough that a caBundle reset by `helm upgrade` is
// restored within a minute, rarely enough to cost nothing.
const certCheckEvery = time.Minute

// WebhookPath is the URL path the webhook serves AdmissionReviews on: the
// MutatingWebhookConfiguration's clientConfig.service.path.
const WebhookPath = "/mutate"

// Options are relay inject's flags (docs/inject.md).
type Options struct {
	Listen, MetricsListen, HealthListen string
	Namespace, Service, WebhookConfig   string
	CertDir                             string
	CertManager                         bool
	SidecarFile                         string
	Kubeconfig                          string
	// ExtraHosts are added to the serving certificate (tests register
	// the webhook by URL, https://127.0.0.1:PORT).
	ExtraHosts []string
	// Ready, when set, gets the addresses the servers listen on once all
	// three serve (tests listen on port 0).
	Ready func(webhook, metrics, health net.Addr)
	Log   *slog.Logger
}

// LoadSidecar reads and parses the sidecar file.
func LoadSidecar(path string) (*Sidecar, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the sidecar file: %w", err)
	}
	s, err := ParseSidecar(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Run serves the webhook and runs the controller until ctx ends: it
// builds the clients, the serving certificate (startCerts), the informers
// and the controller, serves the webhook, /metrics and the probes
// (servers.go), and keeps the certificates good (reconcileCerts).
func Run(ctx context.Context, o Options) error {
	log := o.Log
	sc, err := LoadSidecar(o.SidecarFile)
	if err != nil {
		return err
	}
	cs, dyn, err := newClients(o.Kubeconfig)
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := NewMetrics(reg)
	clusterID := cachedClusterID(sc, cs)
	certs, err := startCerts(ctx, o, cs, log, m)
	if err != nil {
		return err
	}

	inf := newInformers(cs)
	eb := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	ctl := NewController(ControllerOptions{
		Client: cs, Dynamic: dyn, Sidecar: sc, Pods: inf.pods.Lister(), ClusterID: clusterID,
		Anchor: WebhookConfigAnchor(cs, o.WebhookConfig),
		Events: eb.NewRecorder(scheme.Scheme, "liqo-relay-inject"), Metrics: m, Log: log,
	})
	if _, err := inf.pods.Informer().AddEventHandler(ctl.PodHandler()); err != nil {
		return fmt.Errorf("pod informer: %w", err)
	}
	h := &Handler{Sidecar: sc, ClusterID: clusterID, Log: log, Metrics: m, NamespaceLabels: namespaceLabels(inf.namespaces.Lister())}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := eb.StartRecordingToSinkWithContext(ctx); err != nil {
		return fmt.Errorf("events: %w", err)
	}
	defer eb.Shutdown()
	inf.start(ctx)
	defer inf.shutdown()

	var synced atomic.Bool
	srvs, err := listen([]server{webhookServer(o.Listen, h, certs, log), metricsServer(o.MetricsListen, reg),
		healthServer(o.HealthListen, func() bool { return synced.Load() && certs.Ready() })})
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	errc := srvs.serve(&wg)
	defer func() {
		cancel() // the controller's goroutine ends with ctx; wg waits for it
		srvs.shutdown(5 * time.Second)
		wg.Wait()
	}()
	addrs := srvs.addrs()
	log.Info("relay inject serving", "webhook", addrs[0].String(), "metrics", addrs[1].String(),
		"health", addrs[2].String(), "mode", sc.Mode, "certManager", o.CertManager)

	wg.Go(func() {
		if inf.waitForSync(ctx) {
			synced.Store(true)
			ctl.Run(ctx)
		}
	})
	if o.Ready != nil {
		o.Ready(addrs[0], addrs[1], addrs[2])
	}
	tick := time.NewTicker(certCheckEvery)
	defer tick.Stop()
	return reconcileCerts(ctx, certs.Reconcile, errc, tick.C, log)
}

// newClients builds the clients of the API server of kubeconfig, or of the
// pod's when it is empty.
func newClients(kubeconfig string) (kubernetes.Interface, dynamic.Interface, error) {
	var cfg *rest.Config
	var err error
	if kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	} else {
		cfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("API server configuration: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("API client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("API client: %w", err)
	}
	return cs, dyn, nil
}

// startCerts builds the webhook's certificates and makes them good once.
// A failure that leaves a certificate to serve with (the caBundle not
// written yet) is logged and retried by reconcileCerts; without one, Run
// cannot serve and fails.
func startCerts(ctx context.Context, o Options, cs kubernetes.Interface, log *slog.Logger, m *Metrics) (*Certs, error) {
	hosts := append(ServiceHosts(o.Service, o.Namespace), o.ExtraHosts...)
	certs := &Certs{Dir: o.CertDir, Hosts: hosts, CertManager: o.CertManager, WebhookConfig: o.WebhookConfig, Client: cs, Log: log, Metrics: m}
	if err := certs.Reconcile(ctx, time.Now()); err != nil {
		if !certs.Ready() {
			return nil, err
		}
		log.Warn("certificates: will retry", "err", err) // served, caBundle not written yet
	}
	return certs, nil
}

// caches are Run's informers: gateway pods only (by label), from one
// factory, and every namespace, from another.
type caches struct {
	gwPods, all informers.SharedInformerFactory
	pods        corev1informers.PodInformer
	namespaces  corev1informers.NamespaceInformer
}

// newInformers registers the pod and namespace informers of cs; start
// starts them.
func newInformers(cs kubernetes.Interface) *caches {
	c := &caches{
		gwPods: informers.NewSharedInformerFactoryWithOptions(cs, 10*time.Minute,
			informers.WithTweakListOptions(func(lo *metav1.ListOptions) { lo.LabelSelector = ComponentLabel + "=" + ComponentGateway })),
		all: informers.NewSharedInformerFactory(cs, 10*time.Minute),
	}
	c.pods = c.gwPods.Core().V1().Pods()
	c.namespaces = c.all.Core().V1().Namespaces()
	c.pods.Informer()
	c.namespaces.Informer()
	return c
}

func (c *caches) start(ctx context.Context) {
	c.gwPods.Start(ctx.Done())
	c.all.Start(ctx.Done())
}

// shutdown waits for the informers to end, once ctx is done.
func (c *caches) shutdown() {
	c.all.Shutdown()
	c.gwPods.Shutdown()
}

// waitForSync reports whether both informers synced before ctx ended.
func (c *caches) waitForSync(ctx context.Context) bool {
	return cache.WaitForCacheSync(ctx.Done(), c.pods.Informer().HasSynced, c.namespaces.Informer().HasSynced)
}

// namespaceLabels is Handler.NamespaceLabels over the namespace lister.
func namespaceLabels(l corev1listers.NamespaceLister) func(string) (map[string]string, error) {
	return func(ns string) (map[string]string, error) {
		n, err := l.Get(ns)
		if err != nil {
			return nil, err
		}
		return n.Labels, nil
	}
}

// cachedClusterID returns the local cluster ID: the sidecar file's, or
// read from Liqo once it succeeds (it never changes).
func cachedClusterID(sc *Sidecar, cs kubernetes.Interface) func(context.Context) (string, error) {
	var mu sync.Mutex
	id := sc.LocalClusterID
	return func(ctx context.Context) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if id != "" {
			return id, nil
		}
		got, err := ReadLocalClusterID(ctx, cs, sc.LiqoNamespace)
		if err != nil {
			return "", err
		}
		id = got
		return id, nil
	}
}
