package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"syscall"

	"github.com/liqo-relay/relay/pkg/config"
	"github.com/liqo-relay/relay/pkg/kube/connect"
	"github.com/liqo-relay/relay/pkg/kube/operator"
	"github.com/liqo-relay/relay/pkg/kube/provider"
)

// cmdOperator runs the consumer-side operator (docs/operator.md).
func cmdOperator(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("operator", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o operator.Options
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "the consumer's API server (default: in-cluster)")
	fs.StringVar(&o.Namespace, "namespace", "", "the operator's namespace: its Lease, override Secrets, consumer-path IPs (required)")
	fs.StringVar(&o.ClusterID, "cluster-id", "", "the consumer's Liqo cluster ID (default: read from Liqo's clusterid ConfigMap)")
	fs.StringVar(&o.LiqoNamespace, "liqo-namespace", "liqo", "Liqo's namespace, where its clusterid ConfigMap is")
	fs.BoolVar(&o.LeaderElect, "leader-elect", true, "run only while holding the Lease (several replicas)")
	fs.StringVar(&o.LeaseName, "lease-name", "liqo-relay-operator", "name of the coordination.k8s.io Lease in --namespace")
	fs.StringVar(&o.MetricsListen, "metrics-listen", ":9090", "address of /metrics (empty: off)")
	fs.StringVar(&o.HealthListen, "health-listen", ":8081", "address of /healthz and /readyz (empty: off)")
	fs.DurationVar(&o.GiveUp, "give-up", connect.DefaultGiveUp, "how long a deleting connection waits for an unreachable provider")
	level := fs.String("log-level", "info", "debug, info, warn or error")
	format := fs.String("log-format", "text", "text or json")
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if o.Namespace == "" {
		return fmt.Errorf("%w: --namespace is required", errUsage)
	}
	log, _ := newLogger(stderr, config.Log{Level: *level, Format: *format})
	o.Logger = log
	provider.RouteClientLogs(log) // process-wide: client-go's own logs
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err := operator.Run(ctx, o)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
