package agent_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/agent"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/keys"
)

// soloConfig is a netstack relay with no peers on a free UDP port.
func soloConfig(t *testing.T) *config.Config {
	t.Helper()
	var k keys.Private
	if _, err := rand.Read(k[:]); err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := pc.LocalAddr().(*net.UDPAddr).Port
	pc.Close()
	text := fmt.Sprintf("name: solo\nprivateKey: %s\nlistenPort: %d\nmode: netstack\naddresses: [100.81.0.1/32]\n", k.Reveal(), port)
	cfg, err := config.Parse([]byte(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return cfg
}

// runSolo builds and runs an agent for cfg until the test ends.
func runSolo(t *testing.T, cfg *config.Config, opts agent.Options) *agent.Agent {
	t.Helper()
	opts.AdminAddr = "-"
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	a, err := agent.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return a
}

func mentions(err error, subs ...string) bool {
	if err == nil {
		return false
	}
	for _, s := range subs {
		if !strings.Contains(err.Error(), s) {
			return false
		}
	}
	return true
}

// TestReloadLogLevel: with Options.LogLevel a reload of log.level takes
// effect; without it the change is refused, naming the field, as is any
// change of log.format.
func TestReloadLogLevel(t *testing.T) {
	cfg := soloConfig(t)
	level := new(slog.LevelVar)
	a := runSolo(t, cfg, agent.Options{LogLevel: level})
	next := cfg.Clone()
	next.Log.Level = config.LogLevelDebug
	if err := a.Reload(next); err != nil {
		t.Fatalf("reload to log level debug: %v", err)
	}
	if got := level.Level(); got != slog.LevelDebug {
		t.Errorf("log level %v after the reload, want debug", got)
	}
	next = next.Clone()
	next.Log.Format = config.LogFormatJSON
	if err := a.Reload(next); !mentions(err, "log.format", "restart") {
		t.Errorf("log.format change: %v, want a refusal naming log.format", err)
	}

	cfgB := soloConfig(t)
	b := runSolo(t, cfgB, agent.Options{})
	nextB := cfgB.Clone()
	nextB.Log.Level = config.LogLevelDebug
	if err := b.Reload(nextB); !mentions(err, "log.level", "restart") {
		t.Errorf("log.level change without a LevelVar: %v, want a refusal naming log.level", err)
	}
}

// TestIdleOwnerLoopSleeps: with no peers there is no deadline, and the
// owner loop's timer must not fire (say, every millisecond, as a zero
// deadline would make it) while housekeeping ticks go by.
func TestIdleOwnerLoopSleeps(t *testing.T) {
	a := runSolo(t, soloConfig(t), agent.Options{})
	for {
		if _, house := agent.Wakeups(a); house >= 5 {
			break
		}
		time.Sleep(20 * time.Millisecond) // real: polls the running relay's owner loop for its housekeeping wakes
	}
	timer, house := agent.Wakeups(a)
	// One wake-up is the loop's first step, at once.
	if timer > 1 {
		t.Errorf("the owner loop's timer fired %d times during %d housekeeping rounds with no peers, want at most 1", timer, house)
	}
}

func TestSleepFor(t *testing.T) {
	now := time.Unix(1000, 0)
	for _, tc := range []struct {
		deadline time.Time
		want     time.Duration
		ok       bool
	}{
		{time.Time{}, 0, false}, // no paths: no deadline
		{now.Add(30 * time.Millisecond), 30 * time.Millisecond, true},
		{now.Add(-time.Second), time.Millisecond, true}, // overdue: soon, never a spin
		{now.Add(time.Hour), 100 * time.Millisecond, true},
	} {
		d, ok := agent.SleepFor(now, tc.deadline)
		if d != tc.want || ok != tc.ok {
			t.Errorf("sleepFor(deadline %v from now) = %v, %v; want %v, %v", tc.deadline.Sub(now), d, ok, tc.want, tc.ok)
		}
	}
}

// TestListenPortDuringReload reads ListenPort from another goroutine while
// reloads run; the race detector (make test runs it) catches unsynchronised
// reads of the running configuration.
func TestListenPortDuringReload(t *testing.T) {
	cfg := soloConfig(t)
	a := runSolo(t, cfg, agent.Options{LogLevel: new(slog.LevelVar)})
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if p := a.ListenPort(); p != cfg.ListenPort {
				t.Errorf("ListenPort %d, want %d", p, cfg.ListenPort)
				return
			}
		}
	}()
	for i := range 20 {
		next := cfg.Clone()
		next.Log.Level = []string{config.LogLevelDebug, config.LogLevelInfo}[i%2]
		if err := a.Reload(next); err != nil {
			t.Error(err)
		}
	}
	close(stop)
	<-done
}

// TestNewFailureClosesSOCKS: when New fails after opening the SOCKS5
// listener (here: a peer with an unusable public key), the listener is
// closed, and the address can be listened on again.
func TestNewFailureClosesSOCKS(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := soloConfig(t)
	cfg.Netstack.SOCKS5 = addr
	// The all-zero key is a low-order point: no shared secret, so New fails
	// after the data plane and the listener exist.
	p := config.DefaultPeer(cfg.Health)
	p.Name = "zero"
	p.Prefixes = []netip.Prefix{netip.MustParsePrefix("10.98.0.0/24")}
	p.Paths = []config.Path{{Name: "direct", Endpoint: "127.0.0.1:1", Host: "127.0.0.1", Port: 1}}
	cfg.Peers = append(cfg.Peers, p)
	a, err := agent.New(cfg, agent.Options{AdminAddr: "-", Logger: testLogger(t)})
	if err == nil {
		a.Close()
		t.Fatal("New accepted a peer with the all-zero public key")
	}
	t.Logf("New: %v", err)
	again, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the SOCKS5 address is still taken after New failed: %v", err)
	}
	again.Close()
}

// TestStatusErrorWhenNotAnswering: Status of a relay whose owner goroutine
// does not answer (here: never started) fails with the context's error
// instead of returning an empty status.
func TestStatusErrorWhenNotAnswering(t *testing.T) {
	a, err := agent.New(soloConfig(t), agent.Options{AdminAddr: "-", Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	st, err := a.Status(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Status of a relay that does not answer: %+v, %v; want context.DeadlineExceeded", st, err)
	}
}
