package operator

import (
	"flag"
	"fmt"

	"github.com/liqo-relay/relay/internal/kube/consumer/connect"
)

// CommandLine is what relay operator's flags set (docs/operator.md): the
// Options but Logger and Ready, and the log settings.
type CommandLine struct {
	Options             Options
	LogLevel, LogFormat string
}

// NewFlagSet returns relay operator's flag set, which fills the returned
// CommandLine. The Helm chart's test parses the chart's arguments with it.
func NewFlagSet() (*flag.FlagSet, *CommandLine) {
	fs := flag.NewFlagSet("operator", flag.ContinueOnError)
	c := &CommandLine{}
	o := &c.Options
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "the consumer's API server (default: in-cluster)")
	fs.StringVar(&o.Namespace, "namespace", "", "the operator's namespace: its Lease, override Secrets, consumer-path IPs (required)")
	fs.StringVar(&o.ClusterID, "cluster-id", "", "the consumer's Liqo cluster ID (default: read from Liqo's clusterid ConfigMap)")
	fs.StringVar(&o.LiqoNamespace, "liqo-namespace", "liqo", "Liqo's namespace, where its clusterid ConfigMap is")
	fs.BoolVar(&o.LeaderElect, "leader-elect", true, "run only while holding the Lease (several replicas)")
	fs.StringVar(&o.LeaseName, "lease-name", "liqo-relay-operator", "name of the coordination.k8s.io Lease in --namespace")
	fs.StringVar(&o.MetricsListen, "metrics-listen", ":9090", "address of /metrics (empty: off)")
	fs.StringVar(&o.HealthListen, "health-listen", ":8081", "address of /healthz and /readyz (empty: off)")
	fs.DurationVar(&o.GiveUp, "give-up", connect.DefaultGiveUp, "how long a deleting connection waits for an unreachable provider")
	fs.StringVar(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.LogFormat, "log-format", "text", "text or json")
	return fs, c
}

// Check reports a missing or wrong flag, after Parse.
func (c *CommandLine) Check(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if c.Options.Namespace == "" {
		return fmt.Errorf("--namespace is required")
	}
	return nil
}
