package admin

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/liqo-relay/relay/internal/core/status"
)

// pipeListener is an in-memory net.Listener whose connections are
// net.Pipe pairs, so the whole server runs inside a synctest bubble.
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

type staticSource struct{}

func (staticSource) Status(context.Context) (status.Status, error) {
	return status.Status{Name: "a"}, nil
}
func (staticSource) Ready() (bool, string) { return true, "" }
func (staticSource) Ping(context.Context, string) ([]status.PingResult, error) {
	return nil, nil
}

// TestCloseLeavesNoGoroutine runs the server inside a synctest bubble and
// leaves a keep-alive connection idle. synctest.Test fails if any goroutine
// started in the bubble is still blocked when the test function returns,
// so a serve loop, connection or watcher left behind by Close fails here.
func TestCloseLeavesNoGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := newPipeListener()
		s := NewServer("pipe", staticSource{}, nil, nil)
		if err := s.serve(context.Background(), ln); err != nil {
			t.Fatal(err)
		}
		client := &http.Client{Transport: &http.Transport{DialContext: ln.dial}}
		for _, path := range []string{"/healthz", "/status", "/ping?peer=a"} {
			resp, err := client.Get("http://relay" + path)
			if err != nil {
				t.Fatal(err)
			}
			// Read to the end, or the transport drops the connection
			// instead of keeping it idle for reuse.
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: %s", path, resp.Status)
			}
		}
		// The client keeps its connection open; Close must end the server
		// side of it, which in turn ends the client's.
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		// No client.CloseIdleConnections: the server must have closed the
		// idle connection, which ends the client's side of it too.
	})
}

// When the listener breaks under the server, the connections it already
// accepted are shut down too, and Close reports the failure.
func TestListenerFailureEndsConnections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := newPipeListener()
		s := NewServer("pipe", staticSource{}, nil, nil)
		if err := s.serve(context.Background(), ln); err != nil {
			t.Fatal(err)
		}
		client := &http.Client{Transport: &http.Transport{DialContext: ln.dial}}
		resp, err := client.Get("http://relay/healthz")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close() // the connection stays open, idle

		ln.Close() // Accept now fails: Serve returns on its own
		synctest.Wait()
		if err := s.Close(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Close = %v, want the serve error (net.ErrClosed)", err)
		}
		// No client.CloseIdleConnections: the server must have closed the
		// idle connection, which ends the client's side of it too.
	})
}
