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
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

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

// Run runs the operator until ctx is done: it connects to the consumer's
// API server, resolves the consumer's ID, serves its probes and metrics
// (serve.go) and runs the controller once, as leader (lease.go) or
// directly (leading.go).
func Run(ctx context.Context, o Options) error {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg, core, err := connectConsumer(o.Kubeconfig)
	if err != nil {
		return err
	}
	if o.Namespace == "" {
		return errors.New("--namespace is required (the operator's namespace: Lease, Secrets, IPs)")
	}
	if o.ClusterID, err = consumerID(ctx, core, o); err != nil {
		return err
	}
	log.Info("operator starting", "consumer", o.ClusterID, "namespace", o.Namespace, "leaderElect", o.LeaderElect)
	reg, leader := newRegistry()
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
	if err := serve(ctx, &wg, o.MetricsListen, metricsHandler(reg), errs); err != nil {
		return err
	}
	if err := serve(ctx, &wg, o.HealthListen, healthHandler(ready.Load), errs); err != nil {
		return err
	}

	var once runOnce
	defer once.stop(cancel)
	runController := func(ctx context.Context) {
		once.run(func() {
			leader.Set(1)
			defer leader.Set(0)
			lead(ctx, ctl, func() {
				ready.Store(true)
				if o.Ready != nil {
					o.Ready()
				}
			}, errs)
		})
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

// connectConsumer builds the clients of the consumer's API server.
func connectConsumer(kubeconfig string) (*rest.Config, kubernetes.Interface, error) {
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		return nil, nil, err
	}
	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("kubernetes: %w", err)
	}
	return cfg, core, nil
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	cfg, err := client.RESTConfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = "liqo-relay-operator"
	return cfg, nil
}

// consumerID is o.ClusterID, or when empty the ID in Liqo's ConfigMap in
// o.LiqoNamespace.
func consumerID(ctx context.Context, core kubernetes.Interface, o Options) (string, error) {
	if o.ClusterID != "" {
		return o.ClusterID, nil
	}
	id, err := liqo.LocalClusterID(ctx, core, o.LiqoNamespace)
	if err != nil {
		return "", fmt.Errorf("finding the consumer's cluster ID: %w", err)
	}
	return id, nil
}
