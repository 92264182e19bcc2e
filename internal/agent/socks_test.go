package agent

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/liqo-relay/relay/internal/control/metrics"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/keys"
	"github.com/liqo-relay/relay/internal/secretfile"
)

func socksTestConfig(t *testing.T, extra string) *config.Config {
	t.Helper()
	var k keys.Private
	if _, err := rand.Read(k[:]); err != nil {
		t.Fatal(err)
	}
	k[0] &= 248
	k[31] = (k[31] & 127) | 64
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := pc.LocalAddr().(*net.UDPAddr).Port
	pc.Close()
	doc := fmt.Sprintf("name: a\nprivateKey: %s\nlistenPort: %d\nmode: netstack\naddresses: [100.80.0.1/32]\nnetstack: {socks5: '127.0.0.1:0'%s}\n", k.Reveal(), port, extra)
	cfg, err := config.Parse([]byte(doc))
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	return cfg
}

func TestSOCKSAuthFileMissingFailsNew(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	_, err := New(socksTestConfig(t, ", socks5AuthFile: '"+missing+"'"), Options{AdminAddr: "-"})
	if err == nil || !strings.Contains(err.Error(), "netstack.socks5AuthFile") || !strings.Contains(err.Error(), missing) {
		t.Fatalf("New = %v, want an error naming netstack.socks5AuthFile and the path", err)
	}
}

// TestSOCKSAuthFileTooOpenFailsNew: the credentials file is checked like
// privateKeyFile (secretfile.Read); a world-readable one stops New with an
// error naming the field, the path and the cause.
func TestSOCKSAuthFileTooOpenFailsNew(t *testing.T) {
	file := filepath.Join(t.TempDir(), "socks")
	if err := os.WriteFile(file, []byte("app:right\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(file, 0o644); err != nil { // umask-proof
		t.Fatal(err)
	}
	_, err := New(socksTestConfig(t, ", socks5AuthFile: '"+file+"'"), Options{AdminAddr: "-"})
	if !errors.Is(err, secretfile.ErrTooOpen) || !strings.Contains(err.Error(), "netstack.socks5AuthFile") || !strings.Contains(err.Error(), file) {
		t.Fatalf("New = %v, want %v naming netstack.socks5AuthFile and %s", err, secretfile.ErrTooOpen, file)
	}
}

// TestSOCKSAuthWiredAndCounted runs a netstack relay whose proxy requires
// authentication and checks that a wrong password is refused and shows in
// relay_socks5_refused_total{reason="auth"}.
func TestSOCKSAuthWiredAndCounted(t *testing.T) {
	file := filepath.Join(t.TempDir(), "socks")
	if err := os.WriteFile(file, []byte("app:right\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := metrics.New()
	a, err := New(socksTestConfig(t, ", socks5AuthFile: '"+file+"', socks5MaxConns: 3"), Options{AdminAddr: "-", Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()

	c, err := net.Dial("tcp", a.socks.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	c.Write([]byte{5, 2, 0, 2})
	c.Write([]byte{1, 3, 'a', 'p', 'p', 5, 'w', 'r', 'o', 'n', 'g'})
	got := make([]byte, 4)
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "\x05\x02\x01\x01" {
		t.Fatalf("server answered %v (%v), want method 2 then status 1 (refused)", got, err)
	}
	if _, err := c.Read(got); err == nil {
		t.Fatal("connection still open after a refused authentication")
	}
	want := `
# HELP relay_socks5_refused_total SOCKS5 clients refused, by reason (limit, udp_limit or auth).
# TYPE relay_socks5_refused_total counter
relay_socks5_refused_total{reason="auth"} 1
relay_socks5_refused_total{reason="limit"} 0
relay_socks5_refused_total{reason="udp_limit"} 0
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "relay_socks5_refused_total"); err != nil {
		t.Fatal(err)
	}
}
