// Package operator runs `relay operator`: the consumer-side operator
// process. It connects to the consumer's API server, finds the consumer's
// Liqo cluster ID, serves /metrics and /healthz, /readyz, and runs the
// ForeignClusterConnection controller (consumer/connect) while it holds a
// coordination.k8s.io Lease, so that only one replica writes at a time.
package operator

import (
	"context"
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
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/liqo-relay/relay/internal/kube/client"
	"github.com/liqo-relay/relay/internal/kube/consumer/connect"
	"github.com/liqo-relay/relay/internal/kube/liqo"
)

// Options of Run; the flags of `relay operator` (docs/operator.md).
type Options struct {
	Kubeconfig string
	// Namespace is the operator's own: its Lease, the override Secrets,
	// the consumer-path IPs and the overlay record.
	Namespace string
	// ClusterID is the consumer's Liqo cluster ID; empty means read it from
	// Liqo's ConfigMap in LiqoNamespace.
	ClusterID     string
	LiqoNamespace string
	LeaderElect   bool
	LeaseName     string
	// Identity in the Lease; empty means hostname_random.
	Identity      string
	MetricsListen string
	HealthListen  string
	GiveUp        time.Duration
	// Lease timing; zero means 15s, 10s and 2s (client-go's usual values).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	Logger                                    *slog.Logger
	// Ready, when set, is called once the controller runs as leader (tests).
	Ready func()
}

// ErrLostLease is returned when another replica took the Lease: the
// process exits so that it restarts clean as a follower.
var ErrLostLease = errors.New("lost the leader lease")

// Run runs the operator until ctx is done.
func Run(ctx context.Context, o Options) error {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg, err := restConfig(o.Kubeconfig)
	if err != nil {
		return err
	}
	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("kubernetes: %w", err)
	}
	if o.Namespace == "" {
		return errors.New("--namespace is required (the operator's namespace: Lease, Secrets, IPs)")
	}
	if o.ClusterID == "" {
		if o.ClusterID, err = liqo.LocalClusterID(ctx, core, o.LiqoNamespace); err != nil {
			return fmt.Errorf("finding the consumer's cluster ID: %w", err)
		}
	}
	log.Info("operator starting", "consumer", o.ClusterID, "namespace", o.Namespace, "leaderElect", o.LeaderElect)

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	leader := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: "relay", Subsystem: "operator", Name: "leader",
		Help: "1 while this replica holds the Lease and runs the controller.",
	})
	reg.MustRegister(leader)
	ctl, err := connect.New(connect.Options{
		Config: cfg, Namespace: o.Namespace, ConsumerID: o.ClusterID,
		GiveUp: o.GiveUp, Registry: reg, Logger: log,
	})
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	var ready atomic.Bool
	errs := make(chan error, 4)
	serve := func(addr string, h http.Handler) error {
		if addr == "" {
			return nil
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("listening on %s: %w", addr, err)
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
		wg.Go(func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errs <- err
			}
		})
		wg.Go(func() {
			<-ctx.Done()
			sctx, c := context.WithTimeout(context.Background(), 2*time.Second)
			defer c()
			_ = srv.Shutdown(sctx)
		})
		return nil
	}
	metricsMux := http.NewServeMux()
	metricsMux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	healthMux := http.NewServeMux()
	healthMux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	healthMux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		// Ready once this replica either runs the controller with synced
		// caches, or stands by for the Lease.
		if !ready.Load() {
			http.Error(w, "not ready\n", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	if err := serve(o.MetricsListen, metricsMux); err != nil {
		return err
	}
	if err := serve(o.HealthListen, healthMux); err != nil {
		return err
	}

	// The controller runs at most once. client-go calls OnStartedLeading
	// in a goroutine of its own, so Run waits for ctlDone on its way out,
	// and a controller not yet started when Run leaves never starts.
	ctlDone := make(chan struct{})
	var mu sync.Mutex
	started, stopping := false, false
	defer func() {
		mu.Lock()
		stopping = true
		s := started
		mu.Unlock()
		cancel()
		if s {
			<-ctlDone
		}
	}()
	runController := func(ctx context.Context) {
		mu.Lock()
		if started || stopping {
			mu.Unlock()
			return
		}
		started = true
		mu.Unlock()
		defer close(ctlDone)
		leader.Set(1)
		defer leader.Set(0)
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			select {
			case <-ctl.Synced():
				ready.Store(true)
				if o.Ready != nil {
					o.Ready()
				}
			case <-ctx.Done():
			}
		}()
		defer func() { <-watched }()
		if err := ctl.Run(ctx); err != nil {
			errs <- err
		}
	}
	if !o.LeaderElect {
		wg.Go(func() { runController(ctx); cancel() })
	} else {
		ready.Store(true) // a standby is ready: it serves its probes
		if err := elect(ctx, &wg, o, core, log, runController, errs); err != nil {
			return err
		}
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-errs:
		return err
	}
}

// elect runs fn while this replica holds the Lease; the election runs in a
// goroutine of wg until ctx is done. Losing the Lease reports ErrLostLease
// (the controller is never restarted in the same process).
func elect(ctx context.Context, wg *sync.WaitGroup, o Options, core kubernetes.Interface, log *slog.Logger, fn func(context.Context), errs chan<- error) error {
	id := o.Identity
	if id == "" {
		host, _ := os.Hostname()
		id = fmt.Sprintf("%s_%d", host, time.Now().UnixNano())
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: o.Namespace, Name: o.LeaseName},
		Client:     core.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}
	or := func(d, def time.Duration) time.Duration {
		if d == 0 {
			return def
		}
		return d
	}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   or(o.LeaseDuration, 15*time.Second),
		RenewDeadline:   or(o.RenewDeadline, 10*time.Second),
		RetryPeriod:     or(o.RetryPeriod, 2*time.Second),
		ReleaseOnCancel: true,
		Name:            o.LeaseName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				log.Info("leading", "lease", o.Namespace+"/"+o.LeaseName, "identity", id)
				fn(ctx)
			},
			OnStoppedLeading: func() {
				if ctx.Err() == nil {
					errs <- fmt.Errorf("%w %s/%s", ErrLostLease, o.Namespace, o.LeaseName)
				}
			},
			OnNewLeader: func(who string) {
				if who != id {
					log.Info("standing by", "leader", who)
				}
			},
		},
	})
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	wg.Go(func() { le.Run(ctx) }) // returns when ctx is done or the Lease is lost
	return nil
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	cfg, err := client.RESTConfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = "liqo-relay-operator"
	return cfg, nil
}
