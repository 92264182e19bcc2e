package agent

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"

	"github.com/liqo-relay/relay/internal/control/admin"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/secretfile"
)

// adminServers are the relay's admin servers (docs/config.md, admin): the
// full one on admin.listen and, when configured, the health-and-metrics
// one on admin.metricsListen.
type adminServers struct {
	main, metrics *admin.Server // nil when not configured (main: disabled)
	// mainAddr and metricsAddr are the bound addresses, once listening.
	mainAddr, metricsAddr atomic.Pointer[net.Addr]
}

// newAdminServers builds the servers of cfg.Admin, reading the token file.
// opts.AdminAddr overrides admin.listen, and "-" disables both servers. A
// listen address that is not loopback needs a token, whatever set it.
func newAdminServers(cfg *config.Config, opts Options, src admin.Source) (*adminServers, error) {
	s := &adminServers{}
	listen := cfg.Admin.Listen
	if opts.AdminAddr != "" {
		listen = opts.AdminAddr
	}
	if listen == "-" {
		return s, nil
	}
	var token string
	if f := cfg.Admin.TokenFile; f != "" {
		data, err := secretfile.Read(f)
		if err != nil {
			return nil, fmt.Errorf("admin.tokenFile: %w", err)
		}
		token, err = admin.ParseToken(data)
		clear(data)
		if err != nil {
			return nil, fmt.Errorf("admin.tokenFile: %s: %w", f, err)
		}
	}
	if host, _, err := net.SplitHostPort(listen); token == "" && (err != nil || !config.IsLoopbackHost(host)) {
		return nil, fmt.Errorf("admin.listen: %q is not a loopback address and no admin.tokenFile is set: /status and /ping would be open to anyone who reaches it", listen)
	}
	reg := opts.Metrics.Registry()
	s.main = admin.NewServerWith(listen, src, reg, opts.Logger, admin.Options{Token: token})
	if ml := cfg.Admin.MetricsListen; ml != "" {
		s.metrics = admin.NewServerWith(ml, src, reg, opts.Logger, admin.Options{HealthAndMetricsOnly: true})
	}
	return s, nil
}

// start starts the configured servers; they stop when ctx is done or on
// close.
func (s *adminServers) start(ctx context.Context) error {
	if s.main != nil {
		addr, err := s.main.Start(ctx)
		if err != nil {
			return err
		}
		s.mainAddr.Store(&addr)
	}
	if s.metrics != nil {
		addr, err := s.metrics.Start(ctx)
		if err != nil {
			return err
		}
		s.metricsAddr.Store(&addr)
	}
	return nil
}

// close stops the servers and waits for them.
func (s *adminServers) close() {
	for _, srv := range []*admin.Server{s.main, s.metrics} {
		if srv != nil {
			_ = srv.Close()
		}
	}
}

func loadAddr(p *atomic.Pointer[net.Addr]) net.Addr {
	if a := p.Load(); a != nil {
		return *a
	}
	return nil
}

// AdminAddr returns the address the admin server listens on (the port
// actually bound when the configured one is 0), or nil before Run has
// started it and when the admin server is disabled.
func (a *Agent) AdminAddr() net.Addr { return loadAddr(&a.admin.mainAddr) }

// MetricsAddr returns the address of the health-and-metrics server
// (admin.metricsListen), or nil before Run has started it and when none is
// configured.
func (a *Agent) MetricsAddr() net.Addr { return loadAddr(&a.admin.metricsAddr) }
