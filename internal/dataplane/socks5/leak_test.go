package socks5

import (
	"bytes"
	"net/netip"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestServeLeavesNoGoroutines leaves a CONNECT and a UDP ASSOCIATE open,
// stops the proxy, closes the mesh under it, and checks that every
// goroutine the proxy (and the mesh) started has exited.
func TestServeLeavesNoGoroutines(t *testing.T) {
	tcpPort := echoTCP(t)
	baseline := runtime.NumGoroutine()

	m := newTestMesh(t)
	server, stop := startSOCKS(t, New(m.a, Options{}))
	s := socksDial(t, server)
	if rep, _ := socksRequest(t, s, socksCmdConnect, socksAddr(netip.AddrPortFrom(netip.MustParseAddr("10.99.0.1"), tcpPort))); rep != socksRepOK {
		t.Fatalf("socks connect reply %d", rep)
	}
	if _, err := s.Write([]byte("z")); err != nil { // a round trip: the forward is established on b
		t.Fatal(err)
	}
	if _, err := s.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	a := socksDial(t, server)
	if rep, _ := socksRequest(t, a, socksCmdUDP, socksAddr(netip.MustParseAddrPort("0.0.0.0:0"))); rep != socksRepOK {
		t.Fatalf("socks associate reply %d", rep)
	}

	if err := stop(); err != nil {
		t.Fatal(err)
	}
	m.close()
	s.Close()
	a.Close()

	// Goroutines that were already told to exit need a moment to be
	// scheduled; poll for a bounded time, which never decides the outcome
	// on a healthy run but tolerates a loaded machine.
	deadline := time.Now().Add(testTimeout)
	for runtime.NumGoroutine() > baseline {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("%d goroutines after stop and Close, baseline %d:\n%s", runtime.NumGoroutine(), baseline, ourStacks(buf))
		}
		runtime.Gosched()
		time.Sleep(10 * time.Millisecond) // real: the proxy's goroutines take their time to exit
	}
}

// ourStacks keeps the goroutine dumps that mention gVisor, the netstack or
// this package.
func ourStacks(all []byte) string {
	var keep []string
	for _, g := range bytes.Split(all, []byte("\n\n")) {
		if bytes.Contains(g, []byte("gvisor")) || bytes.Contains(g, []byte("relay/internal/dataplane/")) {
			keep = append(keep, string(g))
		}
	}
	return strings.Join(keep, "\n\n")
}
