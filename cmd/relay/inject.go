package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/liqo-relay/relay/pkg/kube/inject"
	"github.com/liqo-relay/relay/pkg/kube/provider"
)

// cmdInject runs the sidecar-injection webhook and its per-gateway
// controller (docs/inject.md) until SIGINT or SIGTERM.
func cmdInject(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("inject", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o inject.Options
	fs.StringVar(&o.Listen, "listen", ":9443", "HTTPS address of the webhook (/mutate)")
	fs.StringVar(&o.Namespace, "namespace", os.Getenv("POD_NAMESPACE"), "the webhook's own namespace (default $POD_NAMESPACE)")
	fs.StringVar(&o.Service, "service", "", "the webhook's Service name (the serving certificate's DNS names)")
	fs.StringVar(&o.WebhookConfig, "webhook-config", "", "the MutatingWebhookConfiguration whose caBundle the webhook writes")
	fs.StringVar(&o.CertDir, "cert-dir", "", "directory of the serving certificate (tls.crt, tls.key; ca.crt, ca.key when self-managed)")
	fs.BoolVar(&o.CertManager, "cert-manager", false, "cert-manager provides tls.crt and tls.key in --cert-dir and the caBundle: do not manage them")
	fs.StringVar(&o.SidecarFile, "sidecar", "/etc/relay-inject/sidecar.yaml", "the sidecar file")
	fs.StringVar(&o.MetricsListen, "metrics-listen", ":9090", "address of /metrics")
	fs.StringVar(&o.HealthListen, "health-listen", ":8081", "address of /healthz and /readyz")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig (default: in-cluster)")
	hosts := fs.String("extra-hosts", "", "comma-separated extra DNS names or IPs in the self-managed serving certificate")
	logFormat := fs.String("log-format", "json", "text or json")
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	var missing []string
	for _, f := range []struct{ name, v string }{{"--namespace", o.Namespace}, {"--service", o.Service}, {"--cert-dir", o.CertDir}} {
		if f.v == "" {
			missing = append(missing, f.name)
		}
	}
	if o.WebhookConfig == "" && !o.CertManager {
		missing = append(missing, "--webhook-config (or --cert-manager)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s required", errUsage, strings.Join(missing, ", "))
	}
	if *hosts != "" {
		o.ExtraHosts = strings.Split(*hosts, ",")
	}
	var h slog.Handler = slog.NewJSONHandler(stderr, nil)
	if *logFormat == "text" {
		h = slog.NewTextHandler(stderr, nil)
	}
	o.Log = slog.New(h).With("component", "inject")
	provider.RouteClientLogs(o.Log)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return inject.Run(ctx, o)
}
