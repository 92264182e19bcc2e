// Package provider runs a relay as a Kubernetes citizen of its provider
// cluster: it connects to the API server (a kubeconfig, or in-cluster),
// reads or creates the relay's private key in its Secret, publishes the
// relay's Relay object and drives the relay's peers from its RelayPeers
// (provider/relaypublish, provider/peersync). The data plane never waits
// for the API server: when it goes away the relay keeps its last applied
// state, and the loops reconnect with backoff and resync.
package provider

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/events"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/keys"
	"github.com/liqo-relay/relay/internal/kube/client"
	"github.com/liqo-relay/relay/internal/kube/keysecret"
	"github.com/liqo-relay/relay/internal/kube/liqo"
	"github.com/liqo-relay/relay/internal/kube/provider/dnsfeed"
	"github.com/liqo-relay/relay/internal/kube/provider/keyrotate"
	"github.com/liqo-relay/relay/internal/kube/provider/peersync"
	"github.com/liqo-relay/relay/internal/kube/provider/relaypublish"
)

// namespaceFile is where a pod finds its own namespace.
const namespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Cluster is a connection to the provider's API server, in the relay's
// namespace.
type Cluster struct {
	Namespace string
	core      kubernetes.Interface
	relays    *client.Client
}

// Connect reaches the API server of kubeconfig, or the in-cluster one when
// kubeconfig is empty. namespace defaults to the pod's namespace.
func Connect(kubeconfig, namespace string) (*Cluster, error) {
	cfg, err := client.RESTConfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	if namespace == "" {
		namespace, err = podNamespace(kubeconfig)
		if err != nil {
			return nil, err
		}
	}
	cfg.UserAgent = "liqo-relay"
	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: %w", err)
	}
	rc, err := client.New(cfg)
	if err != nil {
		return nil, err
	}
	return &Cluster{Namespace: namespace, core: core, relays: rc}, nil
}

func podNamespace(kubeconfig string) (string, error) {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns, nil
	}
	if b, err := os.ReadFile(namespaceFile); err == nil {
		if ns := strings.TrimSpace(string(b)); ns != "" {
			return ns, nil
		}
	}
	if kubeconfig != "" {
		rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}
		ns, _, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, nil).Namespace()
		if err == nil && ns != "" {
			return ns, nil
		}
	}
	return "", errors.New("kubernetes: no namespace: pass --namespace, or set POD_NAMESPACE")
}

// LoadKey fills cfg's private key from its privateKeySecret, creating the
// Secret with a new key when it does not exist. It does nothing when the
// key is given otherwise.
func (c *Cluster) LoadKey(ctx context.Context, cfg *config.Config, log *slog.Logger) error {
	if cfg.PrivateKeySecret.IsZero() {
		return nil
	}
	k, created, err := keysecret.Load(ctx, c.core.CoreV1().Secrets(c.Namespace), cfg.PrivateKeySecret, cfg.Name)
	if err != nil {
		return err
	}
	if created {
		log.Info("generated a private key and stored it", "secret", c.Namespace+"/"+cfg.PrivateKeySecret.Name)
	}
	cfg.SetKeyFromSecret(k)
	// A rotation staged before a restart resumes (docs/kubernetes.md, "Keys").
	next, ok, err := keysecret.LoadNext(ctx, c.core.CoreV1().Secrets(c.Namespace), cfg.PrivateKeySecret)
	if err != nil {
		return err
	}
	if ok {
		log.Info("resuming the key rotation staged in the Secret", "nextPublicKey", next.PublicKey().String())
		cfg.NextPrivateKey = next
	}
	return nil
}

// Agent is the running relay.
type Agent interface {
	peersync.Agent
	Ready() (bool, string)
	ListenPort() uint16
	PublicKey() keys.Public
}

// Options of Run.
type Options struct {
	Base     *config.Config
	Agent    Agent
	Version  string
	Protocol int
	Registry prometheus.Registerer
	Logger   *slog.Logger
	// Services, when not nil, receives the Services of DNSConsumer from
	// this cluster's EndpointSlices (dnsfeed.Run): set when the DNS
	// responder is enabled (docs/dns.md, Kubernetes mode: Services).
	Services dnsfeed.Sink
	// DNSConsumer is the Liqo cluster ID of the relay's consumer; required
	// with Services.
	DNSConsumer string
}

// Control is the relay's Kubernetes control loop.
type Control struct {
	peers  *peersync.Controller
	pub    *relaypublish.Publisher
	events events.EventBroadcaster
	// rot follows key rotations; nil when the key is not kept in a Secret.
	rot *keyrotate.Rotator
	// dns feeds the DNS responder's Services; zero Sink when off.
	dns dnsfeed.Options
	log *slog.Logger

	mu   sync.Mutex
	base *config.Config // the file configuration last applied
}

// NewControl builds the control loop for the relay of o.Base.
func (c *Cluster) NewControl(o Options) (*Control, error) {
	writes := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "relay", Subsystem: "kube", Name: "status_writes_total",
		Help: "Status writes to the Kubernetes API server, by kind (Relay, RelayPeer).",
	}, []string{"kind"})
	if o.Registry != nil {
		if err := o.Registry.Register(writes); err != nil {
			return nil, fmt.Errorf("registering metrics: %w", err)
		}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Services != nil && o.DNSConsumer == "" {
		return nil, errors.New("dnsServer in Kubernetes mode needs the consumer's Liqo cluster ID (--consumer-cluster-id) to select its Services")
	}
	name := o.Base.Name
	eb := events.NewBroadcaster(&events.EventSinkImpl{Interface: c.core.EventsV1()})
	ctl := &Control{base: o.Base.Clone(), events: eb, log: o.Logger.With("component", "kube")}
	if o.Services != nil {
		ctl.dns = dnsfeed.Options{Client: c.core, Consumer: o.DNSConsumer, Sink: o.Services, Logger: o.Logger}
	}
	info := relaypublish.Info{
		PublicKey: o.Base.PublicKey().String(), Addresses: hostPrefixes(o.Base.Addresses), ListenPort: o.Agent.ListenPort(), Mode: string(o.Base.Mode),
		Version: o.Version, ProtocolVersion: o.Protocol, Ready: o.Agent.Ready,
	}
	if !o.Base.PrivateKeySecret.IsZero() {
		ctl.rot = keyrotate.New(keyrotate.Options{
			Secrets: c.core.CoreV1().Secrets(c.Namespace), Ref: o.Base.PrivateKeySecret, Agent: o.Agent,
			Stage: ctl.restage, Logger: o.Logger,
		}, o.Base.PrivateKey, o.Base.NextPrivateKey)
		info.Keys = ctl.rot.Status
	}
	ctl.peers = peersync.New(peersync.Options{
		Namespace: c.Namespace, Relay: name,
		Base: ctl.withKeys(o.Base), Agent: o.Agent, API: c.relays, Logger: o.Logger,
		Writes: writes.WithLabelValues("RelayPeer"),
		Events: eb.NewRecorder(client.Scheme, "liqo-relay/"+name),
	})
	ctl.pub = relaypublish.New(relaypublish.Options{
		Namespace: c.Namespace, Name: name,
		Labels: map[string]string{v1alpha1.RelayLabel: name, "app.kubernetes.io/managed-by": "liqo-relay"},
		Info:   info,
		Relays: c.relays, Services: c.core.CoreV1().Services(c.Namespace), Logger: o.Logger,
		Writes:  writes.WithLabelValues("Relay"),
		OnRelay: ctl.syncRotation,
	})
	return ctl, nil
}

// syncRotation lets the rotator see the Relay (its rotate-key annotation,
// and whether the relay switched keys).
func (ctl *Control) syncRotation(ctx context.Context, relay *v1alpha1.Relay) {
	if ctl.rot == nil {
		return
	}
	if err := ctl.rot.Sync(ctx, relay); err != nil {
		ctl.log.Warn("key rotation", "err", err)
	}
}

// withKeys returns cfg with the keys the relay runs with: a reload must
// carry a staged or finished rotation, which the file does not know of.
func (ctl *Control) withKeys(cfg *config.Config) *config.Config {
	if ctl.rot == nil {
		return cfg
	}
	c := cfg.Clone()
	priv, next := ctl.rot.Keys()
	c.SetKeyFromSecret(priv)
	c.NextPrivateKey = next
	return c
}

// restage applies the last file configuration again, with the rotator's
// keys (keyrotate.Options.Stage).
func (ctl *Control) restage(ctx context.Context) error {
	ctl.mu.Lock()
	defer ctl.mu.Unlock()
	return ctl.peers.SetBase(ctx, ctl.withKeys(ctl.base))
}

// Run runs the loops until ctx is done.
func (ctl *Control) Run(ctx context.Context) error {
	if err := ctl.events.StartRecordingToSinkWithContext(ctx); err != nil {
		return fmt.Errorf("events: %w", err)
	}
	defer ctl.events.Shutdown()
	var wg sync.WaitGroup
	var perr error
	wg.Go(func() { perr = ctl.peers.Run(ctx) })
	wg.Go(func() { _ = ctl.pub.Run(ctx) })
	if ctl.dns.Sink != nil {
		wg.Go(func() {
			if err := dnsfeed.Run(ctx, ctl.dns); err != nil {
				ctl.log.Error("DNS Services feed stopped", "err", err)
			}
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return perr
}

// SetBase applies a new file configuration (SIGHUP) together with the
// RelayPeers. On error the relay keeps running its previous configuration.
func (ctl *Control) SetBase(ctx context.Context, cfg *config.Config) error {
	ctl.mu.Lock()
	defer ctl.mu.Unlock()
	if err := ctl.peers.SetBase(ctx, ctl.withKeys(cfg)); err != nil {
		return err
	}
	ctl.base = cfg.Clone()
	return nil
}

// hostPrefixes are the relay's own addresses as host prefixes (an interface
// address 100.80.0.1/24 is published as 100.80.0.1/32): what a peer routes
// to this relay itself, never the rest of its subnet.
func hostPrefixes(addrs []netip.Prefix) []string {
	out := make([]string, 0, len(addrs))
	for _, a := range addrs {
		out = append(out, netip.PrefixFrom(a.Addr(), a.Addr().BitLen()).String())
	}
	return out
}

// ConsumerClusterID reads the consumer's Liqo cluster ID from the
// relay's namespace, Liqo's tenant namespace for that consumer
// (liqo.TenantClusterID).
func (c *Cluster) ConsumerClusterID(ctx context.Context) (string, error) {
	return liqo.TenantClusterID(ctx, c.core, c.Namespace)
}
