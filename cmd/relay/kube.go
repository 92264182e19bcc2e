package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"

	"github.com/liqo-relay/relay/pkg/agent"
	"github.com/liqo-relay/relay/pkg/config"
	"github.com/liqo-relay/relay/pkg/health"
	"github.com/liqo-relay/relay/pkg/kube/provider"
	"github.com/liqo-relay/relay/pkg/metrics"
	"github.com/liqo-relay/relay/pkg/version"
)

// kubeOpts are the flags of Kubernetes mode (docs/kubernetes.md).
type kubeOpts struct {
	kubeconfig *string
	inCluster  *bool
	namespace  *string
	consumer   *string
}

func kubeFlags(fs *flag.FlagSet) kubeOpts {
	return kubeOpts{
		kubeconfig: fs.String("kubeconfig", "", "Kubernetes mode: the API server of this kubeconfig drives the relay"),
		inCluster:  fs.Bool("kubernetes", false, "Kubernetes mode with the in-cluster API server (in a pod)"),
		namespace:  fs.String("namespace", "", "Kubernetes mode: the relay's namespace (default: the pod's)"),
		consumer:   fs.String("consumer-cluster-id", "", "Kubernetes mode with dnsServer: the Liqo cluster ID of the relay's consumer, whose offloaded Services the DNS responder answers for"),
	}
}

func (k kubeOpts) enabled() bool { return *k.kubeconfig != "" || *k.inCluster }

// kubeMode is a relay driven by its provider's API server.
type kubeMode struct {
	cluster  *provider.Cluster
	consumer string
	control  *provider.Control
	base     *config.Config
}

// startKube connects and fills cfg's private key from its Secret; the
// relay is built after it.
func startKube(ctx context.Context, k kubeOpts, cfg *config.Config, log *slog.Logger) (*kubeMode, error) {
	if cfg.DNSServer.Enabled() && *k.consumer == "" {
		return nil, errors.New("dnsServer in Kubernetes mode needs --consumer-cluster-id: the Liqo cluster ID of the consumer whose Services it answers for")
	}
	provider.RouteClientLogs(log)
	c, err := provider.Connect(*k.kubeconfig, *k.namespace)
	if err != nil {
		return nil, err
	}
	if err := c.LoadKey(ctx, cfg, log); err != nil {
		return nil, err
	}
	log.Info("Kubernetes mode", "namespace", c.Namespace)
	return &kubeMode{cluster: c, consumer: *k.consumer}, nil
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
