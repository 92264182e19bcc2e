package agent

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"

	"golang.zx2c4.com/wireguard/device"
	wgtun "golang.zx2c4.com/wireguard/tun"

	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/packet"
	"github.com/liqo-relay/relay/internal/dataplane/conn/multipath"
	"github.com/liqo-relay/relay/internal/dataplane/conn/udpbind"
	"github.com/liqo-relay/relay/internal/dataplane/netlink"
	"github.com/liqo-relay/relay/internal/dataplane/netstack"
	"github.com/liqo-relay/relay/internal/dataplane/pipe"
	"github.com/liqo-relay/relay/internal/dataplane/socks5"
	"github.com/liqo-relay/relay/internal/dataplane/tun"
)

// dataplane is what packets cross: the device (kernel TUN or netstack),
// the pipeline that filters and translates them, the multipath Bind and
// the wireguard-go device between them. It is built whole or not at all.
type dataplane struct {
	dev    *device.Device
	wg     wgDevice   // dev's UAPI: every run-time IpcSet and IpcGet goes through it
	hs     handshaker // dev's handshake initiations
	bind   *multipath.Bind
	paths  pathBind // bind, as the owner loop uses it (tests wrap it)
	pipe   *pipe.Device
	ns     *netstack.Netstack // netstack mode
	proxy  *socks5.Server     // netstack mode: SOCKS5 into ns
	routes routeTable         // tun mode (a *netlink.RouteManager); nil in netstack mode
	liqo   *liqoRoutes        // also routes, with a liqo section; else nil
}

// undoStack holds the teardown of what was built so far; run undoes it in
// reverse order.
type undoStack []func()

func (u *undoStack) push(f func()) { *u = append(*u, f) }

func (u undoStack) run() {
	for i := len(u) - 1; i >= 0; i-- {
		u[i]()
	}
}

// buildDataplane creates the devices for cfg. On error everything already
// created is torn down again: a relay never starts half-configured.
func buildDataplane(cfg *config.Config, opts Options, log *slog.Logger) (dp *dataplane, err error) {
	dp = &dataplane{}
	var undo undoStack
	defer func() {
		if err != nil {
			undo.run()
			dp = nil
		}
	}()

	var inner wgtun.Device
	switch cfg.Mode {
	case config.ModeTUN:
		inner, err = dp.kernelDevice(cfg, opts, log, &undo)
	case config.ModeNetstack:
		inner, err = dp.netstackDevice(cfg, opts, log, &undo)
	default:
		err = fmt.Errorf("mode: unknown mode %q", cfg.Mode)
	}
	if err != nil {
		return nil, err
	}

	rules, err := compileRules(cfg)
	if err != nil {
		return nil, err
	}
	dp.pipe = pipe.Wrap(inner)
	dp.pipe.SetRules(rules)
	if err := dp.startWireGuard(cfg, opts, log, &undo); err != nil {
		return nil, err
	}
	return dp, nil
}

// kernelDevice creates the kernel TUN device of tun mode and its routes
// (with a Liqo section when cfg.Liqo is enabled), first cleaning up what
// an earlier run left behind.
func (dp *dataplane) kernelDevice(cfg *config.Config, opts Options, log *slog.Logger, undo *undoStack) (wgtun.Device, error) {
	ropts := routeOptions(cfg, log)
	if err := netlink.CleanupStale(ropts); err != nil {
		log.Warn("cleaning up leftovers of an earlier run", "err", err)
	}
	k, err := tun.CreateKernel(cfg.Tun.Name, cfg.MTU)
	if err != nil {
		return nil, fmt.Errorf("creating TUN %q: %w", cfg.Tun.Name, err)
	}
	undo.push(func() { _ = k.Close() })
	rm, err := netlink.NewRouteManager(ropts)
	if err != nil {
		return nil, fmt.Errorf("configuring %q: %w", cfg.Tun.Name, err)
	}
	undo.push(func() { _ = rm.Close() })
	dp.routes = rm
	if cfg.Liqo.Enabled {
		lr, err := newLiqoRoutes(cfg, rm, opts.Metrics, log)
		if err != nil {
			return nil, err
		}
		undo.push(func() { _ = lr.net.Close() })
		dp.routes, dp.liqo = lr, lr
	}
	return k, nil
}

// netstackDevice creates the userspace network stack of netstack mode.
func (dp *dataplane) netstackDevice(cfg *config.Config, opts Options, log *slog.Logger, undo *undoStack) (wgtun.Device, error) {
	dial := opts.NetstackDial
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	socks, err := socksOptions(cfg.Netstack, log)
	if err != nil {
		return nil, err
	}
	ns, err := netstack.New(netstack.Options{
		Addresses:      cfg.Addresses,
		MTU:            cfg.MTU,
		Exports:        cfg.Exports,
		Dial:           dial,
		UDPIdleTimeout: cfg.Netstack.UDPIdleTimeout,
		UDPMaxFlows:    cfg.Netstack.UDPMaxFlows,
		Logger:         log,
	})
	if err != nil {
		return nil, fmt.Errorf("creating netstack: %w", err)
	}
	undo.push(func() { _ = ns.Close() })
	dp.ns = ns
	dp.proxy = socks5.New(ns, socks)
	exportNetstackMetrics(opts.Metrics, ns, dp.proxy)
	return ns, nil
}

// startWireGuard puts the multipath Bind and the wireguard-go device
// between dp.pipe and the network, and brings the device up with cfg's
// key and port.
func (dp *dataplane) startWireGuard(cfg *config.Config, opts Options, log *slog.Logger, undo *undoStack) error {
	innerBind := opts.Bind
	if innerBind == nil {
		innerBind = udpbind.New()
	}
	dp.bind = multipath.New(innerBind)
	dp.paths = dp.bind
	// The Bind credits received data to a path only when WireGuard writes
	// it to the TUN side, i.e. after authentication and the replay check.
	dp.dev = device.NewDevice(dp.bind.WrapTUN(dp.pipe), dp.bind, wireguardLogger(log))
	dp.wg = dp.dev
	dp.hs = deviceHandshaker{dp.dev}
	undo.push(dp.dev.Close)
	// Our Bind picks the path on every send; WireGuard must never replace
	// the logical endpoint with the address a packet came from.
	dp.dev.DisableSomeRoamingForBrokenMobileSemantics()

	var mark uint32
	if cfg.Mode == config.ModeTUN {
		mark = cfg.Tun.FwMark
	}
	if err := dp.dev.IpcSet(deviceUAPI(cfg.PrivateKey, cfg.ListenPort, mark)); err != nil {
		return fmt.Errorf("configuring WireGuard (listenPort %d): %w", cfg.ListenPort, err)
	}
	if err := dp.dev.Up(); err != nil {
		return fmt.Errorf("bringing WireGuard up: %w", err)
	}
	return nil
}

func routeOptions(cfg *config.Config, log *slog.Logger) netlink.RouteOptions {
	return netlink.RouteOptions{
		Link:      cfg.Tun.Name,
		Addresses: cfg.Addresses,
		MTU:       cfg.MTU,
		Table:     cfg.Tun.Table,
		Priority:  cfg.Tun.RulePriority,
		FwMark:    cfg.Tun.FwMark,
		Logger:    log,
	}
}

// compileRules turns the configuration into the pipeline's rules.
func compileRules(cfg *config.Config) (*pipe.Compiled, error) {
	r := pipe.Rules{
		Exports: cfg.Exports,
		MTU:     cfg.MTU,
	}
	r.Local = append(append([]netip.Prefix{}, cfg.Exports...), cfg.Addresses...)
	for _, a := range cfg.Addresses {
		if a.Addr().Is4() && !r.Relay4.IsValid() {
			r.Relay4 = a.Addr()
		}
		if a.Addr().Is6() && !r.Relay6.IsValid() {
			r.Relay6 = a.Addr()
		}
	}
	for _, p := range cfg.Peers {
		pr := pipe.PeerRules{Name: p.Name, Prefixes: p.Prefixes}
		if len(p.SeesUs) > 0 {
			ms := make([]packet.Mapping, len(p.SeesUs))
			for i, m := range p.SeesUs {
				ms[i] = packet.Mapping{Real: m.Real, As: m.As}
			}
			t, err := packet.NewTranslator(ms)
			if err != nil {
				return nil, fmt.Errorf("peers[%s].seesUs: %w", p.Name, err)
			}
			pr.Translator = t
		}
		r.Peers = append(r.Peers, pr)
	}
	c, err := pipe.Compile(r)
	if err != nil {
		return nil, fmt.Errorf("compiling packet rules: %w", err)
	}
	return c, nil
}

// close tears the data plane down: WireGuard first (it closes the Bind and
// the device), then routes and rules.
func (dp *dataplane) close() error {
	dp.dev.Close()
	var errs []error
	if dp.routes != nil {
		if err := dp.routes.Close(); err != nil {
			errs = append(errs, fmt.Errorf("removing routes and rules: %w", err))
		}
	}
	return errors.Join(errs...)
}
