package webhook

import (
	"errors"
	"flag"
	"fmt"
	"strings"
)

// CommandLine is what relay inject's flags set (docs/inject.md): the
// Options but Log, Ready and ExtraHosts (set by Check), and the log format.
type CommandLine struct {
	Options    Options
	LogFormat  string
	extraHosts string
}

// NewFlagSet returns relay inject's flag set, which fills the returned
// CommandLine; getenv gives --namespace's default ($POD_NAMESPACE). The
// Helm chart's test parses the chart's arguments with it.
func NewFlagSet(getenv func(string) string) (*flag.FlagSet, *CommandLine) {
	fs := flag.NewFlagSet("inject", flag.ContinueOnError)
	c := &CommandLine{}
	o := &c.Options
	fs.StringVar(&o.Listen, "listen", ":9443", "HTTPS address of the webhook ("+WebhookPath+")")
	fs.StringVar(&o.Namespace, "namespace", getenv("POD_NAMESPACE"), "the webhook's own namespace (default $POD_NAMESPACE)")
	fs.StringVar(&o.Service, "service", "", "the webhook's Service name (the serving certificate's DNS names)")
	fs.StringVar(&o.WebhookConfig, "webhook-config", "", "the webhook's MutatingWebhookConfiguration: it writes its caBundle (unless --cert-manager), and it owns every object the controller writes, which Kubernetes deletes with it")
	fs.StringVar(&o.CertDir, "cert-dir", "", "directory of the serving certificate (tls.crt, tls.key; ca.crt, ca.key when self-managed)")
	fs.BoolVar(&o.CertManager, "cert-manager", false, "cert-manager provides tls.crt and tls.key in --cert-dir and the caBundle: do not manage them")
	fs.StringVar(&o.SidecarFile, "sidecar", "/etc/relay-inject/sidecar.yaml", "the sidecar file")
	fs.StringVar(&o.MetricsListen, "metrics-listen", ":9090", "address of /metrics")
	fs.StringVar(&o.HealthListen, "health-listen", ":8081", "address of /healthz and /readyz")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig (default: in-cluster)")
	fs.StringVar(&c.extraHosts, "extra-hosts", "", "comma-separated extra DNS names or IPs in the self-managed serving certificate")
	fs.StringVar(&c.LogFormat, "log-format", "json", "text or json")
	return fs, c
}

// Check reports the flags that are missing or wrong, after Parse, and
// fills Options.ExtraHosts.
func (c *CommandLine) Check(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	o := &c.Options
	var missing []string
	for _, f := range []struct{ name, v string }{{"--namespace", o.Namespace}, {"--service", o.Service}, {"--cert-dir", o.CertDir}} {
		if f.v == "" {
			missing = append(missing, f.name)
		}
	}
	if o.WebhookConfig == "" {
		missing = append(missing, "--webhook-config")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s required", strings.Join(missing, ", "))
	}
	if c.LogFormat != "json" && c.LogFormat != "text" {
		return errors.New("--log-format: want json or text")
	}
	o.ExtraHosts = nil
	if c.extraHosts != "" {
		o.ExtraHosts = strings.Split(c.extraHosts, ",")
	}
	return nil
}
