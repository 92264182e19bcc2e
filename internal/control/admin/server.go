package admin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultAddr is the admin address when the configuration names none.
const DefaultAddr = "127.0.0.1:9586"

const (
	// readHeaderTimeout bounds how long a client may take to send request
	// headers; the admin port is local, so anything slower is stuck.
	readHeaderTimeout = 5 * time.Second
	// shutdownGrace is how long Close lets in-flight requests finish before
	// it cuts their connections. Pings are cancelled at the start of
	// shutdown, so every request should end well within it.
	shutdownGrace = 5 * time.Second
)

// Errors returned by Start.
var (
	ErrAlreadyStarted = errors.New("admin server already started")
	ErrServerClosed   = errors.New("admin server closed")
)

// Server is the admin HTTP server. Create it with NewServer, run it with
// Start, stop it with Close or by cancelling Start's context.
type Server struct {
	addr    string
	what    string // "admin server" or "admin metrics server", for logs and errors
	log     *slog.Logger
	handler http.Handler

	mu      sync.Mutex
	started bool
	closed  bool
	stop    chan struct{} // closed by Close
	done    chan struct{} // closed when the serving goroutines have exited
	err     error         // shutdown error, valid once done is closed
}

// Options are a Server's optional settings; the zero value serves every
// endpoint without a token.
type Options struct {
	// Token, when not empty, is the bearer token that /status and /ping
	// require ("Authorization: Bearer TOKEN"). /healthz, /readyz and
	// /metrics never require it.
	Token string
	// HealthAndMetricsOnly serves /healthz, /readyz and /metrics only, for
	// an address that the kubelet and Prometheus reach.
	HealthAndMetricsOnly bool
	// Now is the clock of the /ping rate limit; nil means time.Now.
	Now func() time.Time
}

// NewServer returns a server for addr that shows src and, when reg is not
// nil, serves reg on /metrics. A nil log discards.
func NewServer(addr string, src Source, reg *prometheus.Registry, log *slog.Logger) *Server {
	return NewServerWith(addr, src, reg, log, Options{})
}

// NewServerWith is NewServer with options.
func NewServerWith(addr string, src Source, reg *prometheus.Registry, log *slog.Logger, opts Options) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("component", "admin")
	what := "admin server"
	if opts.HealthAndMetricsOnly {
		what = "admin metrics server"
	}
	return &Server{
		addr:    addr,
		what:    what,
		log:     log,
		handler: newHandler(src, reg, log, opts),
		stop:    make(chan struct{}),
	}
}

// Handler returns the server's request router, for tests and embedding.
func (s *Server) Handler() http.Handler { return s.handler }

// Start listens on the server's address and serves in the background until
// ctx is done or Close is called. It returns the address actually bound
// (useful with port 0). A busy address yields an error that says so and
// wraps the system error. Start may be called once.
func (s *Server) Start(ctx context.Context) (net.Addr, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("%s: address %s is already in use (another relay running? choose another in the admin settings): %w", s.what, s.addr, err)
		}
		return nil, fmt.Errorf("%s: listen on %s: %w", s.what, s.addr, err)
	}
	if err := s.serve(ctx, ln); err != nil {
		ln.Close()
		return nil, err
	}
	return ln.Addr(), nil
}

// serve runs the HTTP server on ln. It owns ln from here on when it returns
// nil.
func (s *Server) serve(ctx context.Context, ln net.Listener) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return ErrServerClosed
	case s.started:
		return ErrAlreadyStarted
	}
	s.started = true
	s.done = make(chan struct{})

	// Requests run under base, which is cancelled when shutdown begins so
	// that a ping in flight gives up instead of holding Close.
	base, cancelBase := context.WithCancel(context.WithoutCancel(ctx))
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: readHeaderTimeout,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	s.log.Info(s.what+" listening", "addr", ln.Addr().String())

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	go func() {
		defer close(s.done)
		serving := true
		select {
		case err := <-served:
			// Serve failed on its own (the listener broke). Connections
			// already accepted may still be open: shut them down too.
			serving = false
			s.log.Error(s.what+" stopped accepting", "err", err)
			s.err = fmt.Errorf("admin: serve: %w", err)
		case <-ctx.Done():
		case <-s.stop:
		}
		cancelBase()
		sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			s.log.Warn(s.what+": graceful shutdown incomplete, closing connections", "err", err)
			srv.Close()
		}
		if serving {
			<-served // http.ErrServerClosed
		}
		s.log.Info(s.what + " stopped")
	}()
	return nil
}

// Close stops the server: it stops accepting, cancels pings in flight, lets
// other requests finish (up to a grace period), and returns once every
// goroutine the server started has exited. It is safe to call more than
// once and before Start; after Close, Start fails with ErrServerClosed.
func (s *Server) Close() error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.stop)
	}
	done := s.done
	s.mu.Unlock()
	if done == nil {
		return nil
	}
	<-done
	return s.err
}
