package agent

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"golang.zx2c4.com/wireguard/conn"

	"github.com/liqo-relay/relay/internal/control/dnsserver"
	"github.com/liqo-relay/relay/internal/control/metrics"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/engine"
	"github.com/liqo-relay/relay/internal/core/health"
	"github.com/liqo-relay/relay/internal/core/keys"
	"github.com/liqo-relay/relay/internal/core/status"
	"github.com/liqo-relay/relay/internal/dataplane/conn/multipath"
	"github.com/liqo-relay/relay/internal/resolver"
)

// Clock is the shell's source of time. Pure packages take `now` from it.
type Clock interface{ Now() time.Time }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// Resolver resolves path endpoint host names; a test's replacement for
// the agent's own resolver (internal/resolver, under the config's dns section).
// Its answers carry no TTL: names are looked up again every dns.minTTL.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options are the agent's collaborators. The zero value runs a production
// relay: real clock, real sockets, the host's resolver.
type Options struct {
	Logger *slog.Logger
	Clock  Clock
	// Bind is the inner transport under the multipath Bind; nil means
	// udpbind.New (batching across destinations, GSO, GRO, sticky
	// sockets).
	Bind conn.Bind
	// NetstackDial reaches exported destinations from a netstack relay;
	// nil means the host network. The demo injects in-process servers.
	NetstackDial func(ctx context.Context, network, address string) (net.Conn, error)
	// AdminAddr overrides the config's admin address; "-" disables the
	// admin server (in-process relays of the demo and tests).
	AdminAddr string
	Metrics   *metrics.Metrics
	// Resolver, when set, replaces the DNS lookups of endpoint names.
	Resolver Resolver
	// Rand draws the probe schedule's jitter; nil seeds one from the
	// clock. The golden traces give a seeded one.
	Rand health.Rand
	// LogLevel, when set, is the level of Logger's handler: Apply sets it
	// from log.level, so a reload changes the level. Without it a change
	// of log.level is refused (a restart is needed).
	LogLevel *slog.LevelVar
}

// Agent runs one relay. Build it with New, run it with Run.
type Agent struct {
	log     *slog.Logger
	clock   Clock
	opts    Options
	dp      *dataplane
	metrics *metrics.Metrics
	admin   *adminServers
	dns     *resolver.Watcher // keeps endpoint host names resolved (dns.go)
	dnsSrv  *dnsserver.Server // the DNS responder, nil when off (dnsserver.go)
	socks   net.Listener      // netstack mode: SOCKS5 into the mesh
	epoch   uint64
	started time.Time
	// listenPort is cfg.ListenPort, which only a restart changes.
	listenPort uint16
	// pubKey is our running public key: it changes when a key rotation
	// switches (rotation.go).
	pubKey atomic.Pointer[keys.Public]

	// cur is the running configuration, published by the owner goroutine
	// for Apply (to find the peers whose endpoints need resolving).
	cur atomic.Pointer[config.Config]
	// applyMu serialises Apply calls, so that cur does not change between
	// an Apply's resolution and its turn on the owner goroutine.
	applyMu sync.Mutex
	// wakes counts the owner loop's wake-ups by cause (tests).
	wakes struct{ timer, house atomic.Uint64 }

	// Owned by the Run goroutine.
	cfg      *config.Config
	services map[string][]netip.Addr // Services the DNS responder answers for (dnsserver.go)
	gen      int
	peers    map[string]*peerState
	eng      *engine.Engine // every decision (ready.go carries them out)
	events   eventLog
	next     *ownNext              // our staged next key, nil when none (rotation.go)
	pings    map[pingKey]*pingWait // outstanding `relay ping` probes by peer and nonce (ping.go)
	// Housekeeping buffers, kept between rounds.
	changedBuf []engine.PathIndex // paths whose stats moved (housemetrics.go)
	srcBuf     []multipath.Source // one peer's Bind counters at a time
	engSrc     []engine.Source    // every peer's sources for the engine
	trafficBuf []engine.Traffic

	// Shared with the Bind's receive goroutines (probe handling).
	probes atomic.Pointer[probeIndex]
	budget probeBudget // per-source verification budget (probe.go)

	// Requests into the owner goroutine.
	replyc  chan probeReply
	lazy    lazyReplies  // replies that wait for the owner's planned wake (replyq.go)
	lazyBuf []probeReply // owned by the Run goroutine
	// probeOut holds the requests of one step until it ends (flushProbes);
	// owned by the Run goroutine.
	probeOut multipath.Outbox
	reloadc  chan reloadReq
	callc    chan func()

	name    string        // immutable copy of cfg.Name for other goroutines
	stopped chan struct{} // closed when Run returns
	ready   atomic.Bool
	running atomic.Bool
	closeMu sync.Mutex
	closed  bool
}

// New builds the relay's data plane for cfg and configures every peer. It
// returns an error, with nothing left behind, when any of it fails.
func New(cfg *config.Config, opts Options) (*Agent, error) {
	opts = opts.withDefaults()
	if cfg.PrivateKey.IsZero() {
		if err := ResolveKey(cfg); err != nil {
			return nil, err
		}
	}
	a, err := newAgent(cfg, opts)
	if err != nil {
		return nil, err
	}
	cfg = cfg.Clone() // a.cfg must not change under the owner goroutine
	a.dns = a.newWatcher(cfg)
	a.probes.Store(&probeIndex{})
	adm, err := newAdminServers(cfg, opts, a) // before the data plane: nothing to undo
	if err != nil {
		return nil, err
	}
	a.admin = adm
	// Resolve before building anything: a slow resolver holds no sockets.
	rctx, cancel := context.WithTimeout(context.Background(), resolver.LookupTimeout(cfg.DNS))
	resolved := a.resolveChanged(rctx, nil, cfg)
	cancel()
	dp, err := buildDataplane(cfg, opts, opts.Logger)
	if err != nil {
		return nil, err
	}
	a.dp = dp
	ok := false
	defer func() {
		if !ok {
			a.closeBuilt()
		}
	}()
	if err := a.startDataplane(cfg, resolved); err != nil {
		return nil, err
	}
	ok = true
	return a, nil
}

// withDefaults fills the unset options: a discarding logger, the real
// clock and a fresh metrics registry.
func (opts Options) withDefaults() Options {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Clock == nil {
		opts.Clock = realClock{}
	}
	if opts.Metrics == nil {
		opts.Metrics = metrics.New()
	}
	if opts.Rand == nil {
		opts.Rand = newRand()
	}
	return opts
}

// newAgent returns the agent's state for cfg before anything is built:
// its engine, channels and a random boot epoch.
func newAgent(cfg *config.Config, opts Options) (*Agent, error) {
	var eb [8]byte
	if _, err := rand.Read(eb[:]); err != nil {
		return nil, fmt.Errorf("reading randomness for the boot epoch: %w", err)
	}
	a := &Agent{
		log:     opts.Logger.With("component", "agent"),
		clock:   opts.Clock,
		opts:    opts,
		metrics: opts.Metrics,
		epoch:   binary.LittleEndian.Uint64(eb[:]) | 1,
		peers:   map[string]*peerState{},
		pings:   map[pingKey]*pingWait{},
		replyc:  make(chan probeReply, 1024),
		reloadc: make(chan reloadReq),
		callc:   make(chan func()),
		stopped: make(chan struct{}),
		name:    cfg.Name,
	}
	a.eng = engine.New(engine.Options{
		Self:      cfg.PrivateKey.PublicKey(),
		Rand:      opts.Rand,
		Selection: failoverSettings(cfg.Health),
		Facts:     facts{a},
	})
	return a, nil
}

// startDataplane opens the listeners on a.dp (the DNS responder, the
// SOCKS5 proxy), hooks the probes into its Bind and applies cfg with the
// endpoints in resolved. On error the caller closes what it opened
// (closeBuilt).
func (a *Agent) startDataplane(cfg *config.Config, resolved map[string][]pathState) error {
	dp := a.dp
	if err := a.listenDNS(cfg); err != nil {
		return err
	}
	if dp.ns != nil && cfg.Netstack.SOCKS5 != "" {
		ln, err := net.Listen("tcp", cfg.Netstack.SOCKS5)
		if err != nil {
			return fmt.Errorf("netstack.socks5: %w", err)
		}
		a.socks = ln
	}
	dp.bind.SetProbePredicate(health.IsProbe)
	dp.bind.SetProbeHandler(a.handleProbe)
	// The bind dates received data for demand mode (LastRx). With the real
	// clock it reads the monotonic clock alone, once per batch.
	if _, ok := a.clock.(realClock); ok {
		dp.bind.SetClock(nil)
	} else {
		dp.bind.SetClock(a.clock.Now)
	}
	return a.applyFirst(cfg, resolved)
}

// applyFirst applies the first configuration, cfg, with the endpoints in
// resolved, to a data plane that is up.
func (a *Agent) applyFirst(cfg *config.Config, resolved map[string][]pathState) error {
	a.cfg = &config.Config{Name: cfg.Name, PrivateKey: cfg.PrivateKey, Health: cfg.Health}
	if err := a.apply(cfg, resolved, true); err != nil {
		return err
	}
	a.started = a.clock.Now()
	a.listenPort = cfg.ListenPort
	pub := cfg.PrivateKey.PublicKey()
	a.pubKey.Store(&pub)
	return nil
}

// closeBuilt undoes a New that failed after the data plane was built:
// it closes the SOCKS5 listener, the DNS responder and the data plane.
func (a *Agent) closeBuilt() {
	if a.socks != nil {
		_ = a.socks.Close()
	}
	if a.dnsSrv != nil {
		a.dnsSrv.Close()
	}
	_ = a.dp.close()
}

// statusTimeout bounds how long Status waits for the owner goroutine.
const statusTimeout = 5 * time.Second

// Status returns the relay's current status (admin.Source). It fails when
// the relay is not running or its owner goroutine does not answer within
// ctx (and at most statusTimeout).
func (a *Agent) Status(ctx context.Context) (status.Status, error) {
	var st status.Status
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	if err := a.do(ctx, func() { st = a.buildStatus() }); err != nil {
		return status.Status{}, fmt.Errorf("relay %s: status: %w", a.name, err)
	}
	return st, nil
}

// Ready reports whether the configuration is applied and the device is up
// (admin.Source). It never depends on peer reachability.
func (a *Agent) Ready() (bool, string) {
	if a.ready.Load() {
		return true, ""
	}
	return false, "starting or shutting down"
}

// ListenPort returns the UDP port the relay listens on. It is safe to call
// from any goroutine.
func (a *Agent) ListenPort() uint16 {
	return a.listenPort
}

// PublicKey returns the relay's running public key, which a key rotation
// changes (docs/protocol.md, "Key rotation"). It is safe to call from any
// goroutine.
func (a *Agent) PublicKey() keys.Public {
	return *a.pubKey.Load()
}

// DialContext connects from this relay's own overlay address into the mesh.
// Only netstack relays have one; local applications of a TUN relay use the
// host's routes.
func (a *Agent) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	if a.dp.ns == nil {
		return nil, errors.New("agent: DialContext needs netstack mode")
	}
	return a.dp.ns.DialContext(ctx, network, address)
}
