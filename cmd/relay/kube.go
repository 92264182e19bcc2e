package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"

	"github.com/liqo-relay/relay/internal/agent"
	"github.com/liqo-relay/relay/internal/control/metrics"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/health"
	"github.com/liqo-relay/relay/internal/kube/client"
	"github.com/liqo-relay/relay/internal/kube/provider"
	"github.com/liqo-relay/relay/internal/version"
)

// kubeOpts are the flags of Kubernetes mode (docs/kubernetes.md).
type kubeOpts struct {
	kubeconfig *string
	inCluster  *bool
	namespace  *string
	consumer   *string
	dnsListen  *string
}

func kubeFlags(fs *flag.FlagSet) kubeOpts {
	return kubeOpts{
		kubeconfig: fs.String("kubeconfig", "", "Kubernetes mode: the API server of this kubeconfig `FILE` drives the relay"),
		inCluster:  fs.Bool("kubernetes", false, "Kubernetes mode with the in-cluster API server (in a pod)"),
		namespace:  fs.String("namespace", "", "Kubernetes mode: the relay's namespace (default: the pod's)"),
		consumer:   fs.String("consumer-cluster-id", "", "Kubernetes mode with dnsServer: the Liqo cluster ID of the relay's consumer, whose offloaded Services the DNS responder answers for (default: the liqo.io/remote-cluster-id label of the relay's tenant namespace)"),
		dnsListen:  fs.String("dns-listen", "", "Kubernetes mode: comma-separated IP:port addresses of the DNS responder, replacing the file's dnsServer.listen (a pod passes --dns-listen=$(POD_IP):5353)"),
	}
}

func (k kubeOpts) enabled() bool { return *k.kubeconfig != "" || *k.inCluster }

// kubeMode is a relay driven by its provider's API server.
type kubeMode struct {
	cluster  *provider.Cluster
	consumer string
	control  *provider.Control
	base     *config.Config
	// dnsListen replaces dnsServer.listen of every file read; nil: the
	// file's.
	dnsListen []netip.AddrPort
}

// startKube connects and fills cfg's private key from its Secret; the
// relay is built after it. cfg's dnsServer.listen is replaced by
// --dns-listen when given. With dnsServer enabled, the consumer's cluster
// ID is --consumer-cluster-id, else the label Liqo puts on the relay's
// tenant namespace.
func startKube(ctx context.Context, k kubeOpts, cfg *config.Config, log *slog.Logger) (*kubeMode, error) {
	listen, err := parseDNSListen(*k.dnsListen)
	if err != nil {
		return nil, err
	}
	if listen != nil {
		cfg.DNSServer.Listen = listen
	}
	client.RouteClientLogs(log)
	c, err := provider.Connect(*k.kubeconfig, *k.namespace)
	if err != nil {
		return nil, err
	}
	consumer := *k.consumer
	if cfg.DNSServer.Enabled() && consumer == "" {
		if consumer, err = c.ConsumerClusterID(ctx); err != nil {
			return nil, fmt.Errorf("dnsServer in Kubernetes mode needs the consumer's Liqo cluster ID: %w", err)
		}
		log.Info("consumer cluster ID read from the tenant namespace", "consumer", consumer, "namespace", c.Namespace)
	}
	if err := c.LoadKey(ctx, cfg, log); err != nil {
		return nil, err
	}
	log.Info("Kubernetes mode", "namespace", c.Namespace)
	return &kubeMode{cluster: c, consumer: consumer, dnsListen: listen}, nil
}

// parseDNSListen parses --dns-listen: nil when empty.
func parseDNSListen(v string) ([]netip.AddrPort, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var out []netip.AddrPort
	for i, f := range strings.Split(v, ",") {
		ap, err := netip.ParseAddrPort(strings.TrimSpace(f))
		switch {
		case err != nil:
			return nil, fmt.Errorf("--dns-listen[%d]: %q is not IP:port (IPv6 in brackets)", i, f)
		case ap.Addr().IsUnspecified():
			return nil, fmt.Errorf("--dns-listen[%d]: %s listens on every address: name the pod's address (it is not an open resolver)", i, ap)
		case slices.Contains(out, ap):
			return nil, fmt.Errorf("--dns-listen[%d]: %s is listed twice", i, ap)
		}
		out = append(out, netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()))
	}
	return out, nil
}

// run starts the control loop; done is closed when it has stopped.
func (km *kubeMode) run(ctx context.Context, cfg *config.Config, a *agent.Agent, m *metrics.Metrics, log *slog.Logger) (<-chan struct{}, error) {
	o := provider.Options{
		Base: cfg, Agent: a, Version: version.String(), Protocol: health.Version,
		Registry: m.Registry(), Logger: log,
	}
	if cfg.DNSServer.Enabled() {
		o.Services, o.DNSConsumer = a, km.consumer
	}
	ctl, err := km.cluster.NewControl(o)
	if err != nil {
		return nil, err
	}
	km.control, km.base = ctl, cfg
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := ctl.Run(ctx); err != nil {
			log.Error("Kubernetes control loop stopped", "err", err)
		}
	}()
	return done, nil
}

// reload re-reads the file and applies it with the RelayPeers. The private
// key stays the one read from the Secret at start.
func (km *kubeMode) reload(ctx context.Context, path string, log *slog.Logger) {
	cfg, err := agent.ParseFile(path)
	if err == nil && km.dnsListen != nil {
		cfg.DNSServer.Listen = km.dnsListen
	}
	if err == nil {
		if cfg.PrivateKeySecret != km.base.PrivateKeySecret {
			err = errors.New("privateKeySecret cannot change while running: restart the relay to change it")
		} else if !cfg.PrivateKeySecret.IsZero() {
			cfg.SetKeyFromSecret(km.base.PrivateKey)
		} else {
			err = agent.ResolveKey(cfg)
		}
	}
	if err == nil {
		err = km.control.SetBase(ctx, cfg)
	}
	switch {
	case errors.Is(err, agent.ErrRollbackFailed):
		log.Error("reload failed and could not be fully rolled back", "err", err)
	case err != nil:
		log.Error("reload rejected: keeping the running configuration", "err", fmt.Errorf("%s: %w", path, err))
	default:
		km.base = cfg
	}
}
