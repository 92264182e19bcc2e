package admin_test

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/liqo-relay/relay/internal/control/admin"
	"github.com/liqo-relay/relay/internal/control/admin/admintest"
	"github.com/liqo-relay/relay/internal/core/status"
)

func startServer(t *testing.T, ctx context.Context, src admin.Source) (*admin.Server, string) {
	t.Helper()
	s := admin.NewServer("127.0.0.1:0", src, nil, nil)
	a, err := s.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, a.String()
}

func TestServerLifecycle(t *testing.T) {
	src := &admintest.Source{}
	src.SetStatus(status.Status{Name: "provider-a"})
	s, addr := startServer(t, context.Background(), src)

	st, err := admin.FetchStatus(context.Background(), addr)
	if err != nil || st.Name != "provider-a" {
		t.Fatalf("FetchStatus = %+v, %v", st, err)
	}
	if _, err := s.Start(context.Background()); !errors.Is(err, admin.ErrAlreadyStarted) {
		t.Errorf("second Start: %v, want ErrAlreadyStarted", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := admin.FetchStatus(context.Background(), addr); !errors.Is(err, admin.ErrNoRelay) {
		t.Errorf("after Close: %v, want ErrNoRelay", err)
	}
	if _, err := s.Start(context.Background()); !errors.Is(err, admin.ErrServerClosed) {
		t.Errorf("Start after Close: %v, want ErrServerClosed", err)
	}
}

func TestServerCloseBeforeStart(t *testing.T) {
	s := admin.NewServer("127.0.0.1:0", &admintest.Source{}, nil, nil)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Start(context.Background()); !errors.Is(err, admin.ErrServerClosed) {
		t.Errorf("Start after Close: %v, want ErrServerClosed", err)
	}
}

func TestServerStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s, addr := startServer(t, ctx, &admintest.Source{})
	cancel()
	if err := s.Close(); err != nil { // waits for the shutdown ctx started
		t.Fatal(err)
	}
	if _, err := admin.FetchStatus(context.Background(), addr); !errors.Is(err, admin.ErrNoRelay) {
		t.Errorf("after cancel: %v, want ErrNoRelay", err)
	}
}

func TestServerAddressInUse(t *testing.T) {
	_, addr := startServer(t, context.Background(), &admintest.Source{})
	s := admin.NewServer(addr, &admintest.Source{}, nil, nil)
	defer s.Close()
	_, err := s.Start(context.Background())
	if err == nil {
		t.Fatal("second server on the same address started")
	}
	if !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), "admin server: address "+addr+" is already in use") {
		t.Errorf("error %q does not say the address is in use", err)
	}
}

func TestServerBadAddress(t *testing.T) {
	s := admin.NewServer("127.0.0.1:notaport", &admintest.Source{}, nil, nil)
	if _, err := s.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "admin server: listen on 127.0.0.1:notaport") {
		t.Errorf("error %v", err)
	}
}

// Close must not wait for a ping that waits for its context: shutdown
// cancels requests in flight.
func TestServerCloseCancelsPing(t *testing.T) {
	src := &admintest.Source{}
	src.SetPing("b", nil)
	entered := make(chan struct{})
	src.SetPingHook(func(ctx context.Context, _ string) error {
		close(entered)
		<-ctx.Done()
		return ctx.Err()
	})
	s, addr := startServer(t, context.Background(), src)

	pingErr := make(chan error, 1)
	go func() {
		_, err := admin.FetchPing(context.Background(), addr, "b")
		pingErr <- err
	}()
	<-entered
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// Either the 503 got out before the connection closed, or the
	// connection closed first; never success.
	if err := <-pingErr; err == nil {
		t.Error("ping cut by shutdown reported success")
	}
}
