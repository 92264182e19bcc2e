package socks5

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/dataplane/netstack"
	"github.com/liqo-relay/relay/internal/secretfile"
)

// newSOCKSServer returns a proxy configured by opts into a netstack alone.
func newSOCKSServer(t *testing.T, opts Options) *Server {
	t.Helper()
	n, err := netstack.New(netstack.Options{Addresses: []netip.Prefix{ownA4}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return New(n, opts)
}

func dialRaw(t *testing.T, server string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", server)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(testTimeout))
	return c
}

// expect reads len(want) bytes and compares them.
func expect(t *testing.T, c net.Conn, want ...byte) {
	t.Helper()
	got := make([]byte, len(want))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("reading %v: %v", want, err)
	}
	if string(got) != string(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// expectEOF checks that the server closed the connection.
func expectEOF(t *testing.T, c net.Conn) {
	t.Helper()
	if k, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatalf("read %d more bytes, want the connection closed", k)
	}
}

func userPass(user, pass string) []byte {
	return append(append(append([]byte{1, byte(len(user))}, user...), byte(len(pass))), pass...)
}

func TestSOCKS5Auth(t *testing.T) {
	creds, err := ParseCredentials([]byte("# users\napp:s3cret:with:colons\r\n\nother:pw\n"))
	if err != nil {
		t.Fatal(err)
	}
	srv := newSOCKSServer(t, Options{Credentials: creds})
	server, _ := startSOCKS(t, srv)

	t.Run("accepted", func(t *testing.T) {
		c := dialRaw(t, server)
		c.Write([]byte{5, 2, 0, 2}) // offers none and user/pass
		expect(t, c, 5, 2)
		c.Write(userPass("app", "s3cret:with:colons"))
		expect(t, c, 1, 0)
		// Past authentication: a request gets a SOCKS5 reply.
		if rep, _ := socksRequest(t, c, socksCmdBind, socksAddr(netip.MustParseAddrPort("10.99.0.5:1"))); rep != socksRepCmdUnsupp {
			t.Fatalf("reply %d, want %d", rep, socksRepCmdUnsupp)
		}
	})
	refused := []struct {
		name  string
		greet []byte
		sel   byte
		auth  []byte
	}{
		{"wrong password", []byte{5, 1, 2}, 2, userPass("app", "s3cret")},
		{"unknown user", []byte{5, 1, 2}, 2, userPass("nobody", "pw")},
		{"other's password", []byte{5, 1, 2}, 2, userPass("other", "s3cret:with:colons")},
		{"no user/pass method", []byte{5, 1, 0}, 0xff, nil},
	}
	for i, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			c := dialRaw(t, server)
			c.Write(tt.greet)
			expect(t, c, 5, tt.sel)
			if tt.auth != nil {
				c.Write(tt.auth)
				expect(t, c, 1, 1)
			}
			expectEOF(t, c)
			if got := srv.Stats().RefusedAuth; got != uint64(i+1) {
				t.Errorf("SOCKSRefusedAuth = %d, want %d", got, i+1)
			}
		})
	}
}

func TestParseCredentials(t *testing.T) {
	for _, tt := range []struct{ in, err string }{
		{"", "no username:password line"},
		{"# only a comment\n\n", "no username:password line"},
		{"a:b\nnocolon\n", "line 2: expected username:password"},
		{":pw\n", "line 1: username of 0 bytes"},
		{"u:\n", "line 1: password of 0 bytes"},
		{"u:" + strings.Repeat("x", 256), "line 1: password of 256 bytes"},
		{"u:a\nv:b\nu:c\n", `line 3: duplicate username "u"`},
	} {
		_, err := ParseCredentials([]byte(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%q: error %v, want %q", tt.in, err, tt.err)
		}
	}
	c, err := ParseCredentials([]byte("u:p\n"))
	if err != nil || !c.check([]byte("u"), []byte("p")) || c.check([]byte("u"), []byte("q")) || c.check([]byte("p"), []byte("p")) {
		t.Fatalf("u:p parsed as %v, %v", c, err)
	}

	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("u:secretpw\nbroken\n"), 0o600)
	_, err = LoadCredentials(bad)
	if err == nil || !strings.Contains(err.Error(), bad+": line 2") || strings.Contains(err.Error(), "secretpw") {
		t.Errorf("bad file: %v (want the path and line, never the password)", err)
	}
	if _, err := LoadCredentials(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// TestLoadCredentialsFileChecks: the credentials file is a secret
// and gets the private key's checks (secretfile.Read): group- or
// world-accessible files, anything but a regular file and files over
// secretfile.MaxSize are refused, naming the path; a 0400 file behind a
// symbolic link (a Kubernetes Secret volume) is read.
func TestLoadCredentialsFileChecks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string, mode os.FileMode) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // umask-proof
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, path string
		want       error
	}{
		{"group-readable", write("group", "u:p\n", 0o640), secretfile.ErrTooOpen},
		{"world-readable", write("world", "u:p\n", 0o604), secretfile.ErrTooOpen},
		{"group-writable", write("gw", "u:p\n", 0o620), secretfile.ErrTooOpen},
		{"directory", dir, secretfile.ErrNotRegular},
		{"FIFO", fifo, secretfile.ErrNotRegular},
		{"oversized", write("big", strings.Repeat("#\n", secretfile.MaxSize/2)+"u:p\n", 0o600), secretfile.ErrTooLarge},
	} {
		_, err := LoadCredentials(tt.path)
		if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.path) {
			t.Errorf("%s: error %v, want %v naming %s", tt.name, err, tt.want, tt.path)
		}
	}

	target := write("secret", "app:pw\n", 0o400)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	c, err := LoadCredentials(link)
	if err != nil || !c.check([]byte("app"), []byte("pw")) {
		t.Fatalf("0400 file behind a symbolic link: %v, %v", c, err)
	}
}

// TestSOCKS5ConnCap fills the connection cap, checks that one more
// connection is refused and counted, then frees a place and connects again.
func TestSOCKS5ConnCap(t *testing.T) {
	srv := newSOCKSServer(t, Options{MaxConns: 2})
	server, _ := startSOCKS(t, srv)
	first := socksDial(t, server)
	socksDial(t, server) // both negotiated: the server holds two places
	over := dialRaw(t, server)
	expect(t, over, 5, 0xff)
	expectEOF(t, over)
	if s := srv.Stats(); s.RefusedLimit != 1 || s.Conns != 2 {
		t.Fatalf("refused %d, open %d; want 1, 2", s.RefusedLimit, s.Conns)
	}
	// The server ends the first connection (unsupported command): its
	// place is free before the client sees the close.
	if rep, _ := socksRequest(t, first, socksCmdBind, socksAddr(netip.MustParseAddrPort("10.99.0.5:1"))); rep != socksRepCmdUnsupp {
		t.Fatalf("reply %d", rep)
	}
	expectEOF(t, first)
	socksDial(t, server)
	if s := srv.Stats(); s.RefusedLimit != 1 {
		t.Fatalf("refused %d after a place was freed, want still 1", s.RefusedLimit)
	}
}

func TestSOCKS5UDPAssociationCap(t *testing.T) {
	srv := newSOCKSServer(t, Options{MaxUDPAssociations: 1})
	server, _ := startSOCKS(t, srv)
	any4 := socksAddr(netip.MustParseAddrPort("0.0.0.0:0"))
	if rep, _ := socksRequest(t, socksDial(t, server), socksCmdUDP, any4); rep != socksRepOK {
		t.Fatalf("first association: reply %d", rep)
	}
	c := socksDial(t, server)
	if rep, _ := socksRequest(t, c, socksCmdUDP, any4); rep != socksRepFailure {
		t.Fatalf("second association: reply %d, want %d (general failure)", rep, socksRepFailure)
	}
	expectEOF(t, c)
	if s := srv.Stats(); s.RefusedUDPLimit != 1 || s.Associations != 1 {
		t.Fatalf("refused %d, open %d; want 1, 1", s.RefusedUDPLimit, s.Associations)
	}
}

// flakyListener fails its first fails Accepts with err, then hands out conns
// until it is closed.
type flakyListener struct {
	err   error
	fails int
	conns chan net.Conn

	mu     sync.Mutex
	calls  int
	closed chan struct{}
	once   sync.Once
}

func (l *flakyListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	l.calls++
	fail := l.calls <= l.fails
	l.mu.Unlock()
	if fail {
		return nil, l.err
	}
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *flakyListener) Close() error   { l.once.Do(func() { close(l.closed) }); return nil }
func (l *flakyListener) Addr() net.Addr { return &net.TCPAddr{} }

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// TestSOCKS5AcceptErrorsRetried: Accept failing N times (EMFILE and the like)
// does not stop the server; it pauses 5 ms, doubling up to 1 s, then serves
// the next connection. Then the listener closing stops it.
func TestSOCKS5AcceptErrorsRetried(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
	}{
		{"EMFILE", &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}},
		{"ENFILE", &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.ENFILE)}},
		{"ECONNABORTED", &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.ECONNABORTED)}},
		{"timeout", &net.OpError{Op: "accept", Net: "tcp", Err: timeoutErr{}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newSOCKSServer(t, Options{})
			const fails = 10
			ln := &flakyListener{err: tt.err, fails: fails, conns: make(chan net.Conn), closed: make(chan struct{})}
			var pauses []time.Duration
			wait := func(ctx context.Context, d time.Duration) bool {
				pauses = append(pauses, d) // only the accept loop calls wait
				return true
			}
			errc := make(chan error, 1)
			go func() { errc <- srv.serve(context.Background(), ln, wait) }()

			client, server := net.Pipe()
			defer client.Close()
			client.SetDeadline(time.Now().Add(testTimeout))
			select {
			case ln.conns <- server:
			case err := <-errc:
				t.Fatalf("Serve returned %v after %d failed accepts, want it serving", err, fails)
			}
			client.Write([]byte{5, 1, 0})
			expect(t, client, 5, 0) // served after the failures

			ln.Close()
			var err error
			select {
			case err = <-errc:
			case <-time.After(testTimeout):
				t.Fatal("Serve did not return after the listener closed")
			}
			if !errors.Is(err, net.ErrClosed) {
				t.Errorf("Serve = %v, want net.ErrClosed", err)
			}
			want := []time.Duration{5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000}
			for i := range want {
				want[i] *= time.Millisecond
			}
			if len(pauses) != len(want) {
				t.Fatalf("pauses %v, want %v", pauses, want)
			}
			for i := range want {
				if pauses[i] != want[i] {
					t.Fatalf("pauses %v, want %v", pauses, want)
				}
			}
			if got := srv.Stats().AcceptErrors; got != fails {
				t.Errorf("SOCKSAcceptErrors = %d, want %d", got, fails)
			}
		})
	}
}

// TestSOCKS5AcceptDelay: the pause doubles, and after a success (prev 0) the next
// failure pauses 5 ms again.
func TestSOCKS5AcceptDelay(t *testing.T) {
	d := time.Duration(0)
	for range 3 {
		d = socksNextDelay(d)
	}
	if d != 20*time.Millisecond {
		t.Fatalf("third pause %s, want 20ms", d)
	}
	if got := socksNextDelay(0); got != socksAcceptMinDelay {
		t.Fatalf("pause after a success %s, want %s", got, socksAcceptMinDelay)
	}
}

// TestSOCKS5AcceptPauseEndsOnCancel: cancelling during a pause stops the
// server with nil.
func TestSOCKS5AcceptPauseEndsOnCancel(t *testing.T) {
	srv := newSOCKSServer(t, Options{})
	ln := &flakyListener{err: errors.New("accept: something odd"), fails: 1 << 30, conns: make(chan net.Conn), closed: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	waiting := make(chan struct{})
	var once sync.Once
	wait := func(ctx context.Context, d time.Duration) bool {
		once.Do(func() { close(waiting) })
		<-ctx.Done()
		return false
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.serve(ctx, ln, wait) }()
	<-waiting
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("Serve = %v after cancel, want nil", err)
	}
}
