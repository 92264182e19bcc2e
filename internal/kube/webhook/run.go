package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
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

// Run serves the webhook and runs the controller until ctx ends.
func Run(ctx context.Context, o Options) error {
	log := o.Log
	sc, err := LoadSidecar(o.SidecarFile)
	if err != nil {
		return err
	}
	var cfg *rest.Config
	if o.Kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	} else {
		cfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return fmt.Errorf("API server configuration: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("API client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("API client: %w", err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := NewMetrics(reg)

	clusterID := cachedClusterID(sc, cs)
	hosts := append(ServiceHosts(o.Service, o.Namespace), o.ExtraHosts...)
	certs := &Certs{Dir: o.CertDir, Hosts: hosts, CertManager: o.CertManager, WebhookConfig: o.WebhookConfig, Client: cs, Log: log, Metrics: m}
	if err := certs.Reconcile(ctx, time.Now()); err != nil {
		if !certs.Ready() {
			return err
		}
		log.Warn("certificates: will retry", "err", err) // served, caBundle not written yet
	}

	gwPods := informers.NewSharedInformerFactoryWithOptions(cs, 10*time.Minute,
		informers.WithTweakListOptions(func(lo *metav1.ListOptions) { lo.LabelSelector = ComponentLabel + "=" + ComponentGateway }))
	all := informers.NewSharedInformerFactory(cs, 10*time.Minute)
	podInf := gwPods.Core().V1().Pods()
	nsInf := all.Core().V1().Namespaces()

	eb := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	ctl := NewController(ControllerOptions{
		Client: cs, Dynamic: dyn, Sidecar: sc, Pods: podInf.Lister(), ClusterID: clusterID,
		Events: eb.NewRecorder(scheme.Scheme, "liqo-relay-inject"), Metrics: m, Log: log,
	})
	if _, err := podInf.Informer().AddEventHandler(ctl.PodHandler()); err != nil {
		return fmt.Errorf("pod informer: %w", err)
	}
	nsLister := nsInf.Lister()
	h := &Handler{
		Sidecar: sc, ClusterID: clusterID, Log: log, Metrics: m,
		NamespaceLabels: func(ns string) (map[string]string, error) {
			n, err := nsLister.Get(ns)
			if err != nil {
				return nil, err
			}
			return n.Labels, nil
		},
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := eb.StartRecordingToSinkWithContext(ctx); err != nil {
		return fmt.Errorf("events: %w", err)
	}
	defer eb.Shutdown()
	gwPods.Start(ctx.Done())
	all.Start(ctx.Done())
	defer gwPods.Shutdown()
	defer all.Shutdown()

	var synced atomic.Bool
	ready := func() bool { return synced.Load() && certs.Ready() }

	mux := http.NewServeMux()
	mux.Handle(WebhookPath, h)
	webhook := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: certs.GetCertificate},
		ErrorLog:  slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	metricsMux := http.NewServeMux()
	metricsMux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	metricsSrv := &http.Server{Handler: metricsMux, ReadHeaderTimeout: 10 * time.Second}
	healthMux := http.NewServeMux()
	healthMux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	healthMux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready() {
			http.Error(w, "not ready: informers syncing or no certificate", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	healthSrv := &http.Server{Handler: healthMux, ReadHeaderTimeout: 10 * time.Second}

	type served struct {
		srv *http.Server
		ln  net.Listener
		tls bool
	}
	var srvs []served
	for _, s := range []struct {
		srv  *http.Server
		addr string
		tls  bool
	}{{webhook, o.Listen, true}, {metricsSrv, o.MetricsListen, false}, {healthSrv, o.HealthListen, false}} {
		ln, err := net.Listen("tcp", s.addr)
		if err != nil {
			for _, x := range srvs {
				x.ln.Close()
			}
			return fmt.Errorf("listening on %s: %w", s.addr, err)
		}
		srvs = append(srvs, served{s.srv, ln, s.tls})
	}
	errc := make(chan error, len(srvs))
	var wg sync.WaitGroup
	for _, s := range srvs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if s.tls {
				err = s.srv.ServeTLS(s.ln, "", "")
			} else {
				err = s.srv.Serve(s.ln)
			}
			if !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("serving on %s: %w", s.ln.Addr(), err)
			}
		}()
	}
	defer func() {
		cancel() // the controller's goroutine ends with ctx; wg waits for it
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		for _, s := range srvs {
			_ = s.srv.Shutdown(sctx)
		}
		wg.Wait()
	}()
	log.Info("relay inject serving", "webhook", srvs[0].ln.Addr().String(), "metrics", srvs[1].ln.Addr().String(),
		"health", srvs[2].ln.Addr().String(), "mode", sc.Mode, "certManager", o.CertManager)

	wg.Add(1)
	go func() {
		defer wg.Done()
		if cache.WaitForCacheSync(ctx.Done(), podInf.Informer().HasSynced, nsInf.Informer().HasSynced) {
			synced.Store(true)
			ctl.Run(ctx)
		}
	}()
	if o.Ready != nil {
		o.Ready(srvs[0].ln.Addr(), srvs[1].ln.Addr(), srvs[2].ln.Addr())
	}

	tick := time.NewTicker(certCheckEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-errc:
			return err
		case now := <-tick.C:
			if err := certs.Reconcile(ctx, now); err != nil {
				log.Error("certificates", "err", err)
			}
		}
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
