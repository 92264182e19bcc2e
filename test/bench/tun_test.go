package bench

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/keys"
	"github.com/liqo-relay/relay/internal/testbed/netns"
)

// BenchmarkTUNPair measures bulk TCP from a pod behind provider A to a pod
// behind provider B. Four namespaces, each variant its own set:
//
//	podA ──veth── gwA ══ veth 192.168.77.0/24 (the WAN) ══ gwB ──veth── podB
//
// The pods' default routes go through their gateway with MTU 1280 (the
// relay's default), so every variant carries the same TCP segments.
// Variants:
//   - relay: `relay run` in TUN mode in gwA and gwB (pipeline, multipath
//     Bind, probes), pods in 10.244.1.0/24 and 10.244.2.0/24;
//   - relay-translated: both pods in 10.244.0.0/24; A sees B's pods as
//     10.72.0.0/24 and B sees A's as 10.71.0.0/24 (seesUs on both sides),
//     so every packet is translated at both relays;
//   - wireguard-go: stock wireguard-go (same module version as ours, its
//     conn.NewDefaultBind) configured with wg(8) from wireguard-tools;
//   - routed: no tunnel, the gateways route the pod prefixes to each other:
//     the ceiling of this machine.
//
// It needs root and the wg binary for the wireguard-go variant.
//
//	go test -run '^$' -bench TUNPair -benchtime 1000x ./test/bench/
func BenchmarkTUNPair(b *testing.B) {
	netns.RequireRoot(b)
	bins := buildBinaries(b)
	b.Run("relay", func(b *testing.B) {
		tp := newTopology(b, "10.244.1", "10.244.2")
		startRelays(b, bins.relay, tp, false)
		tp.bench(b, "10.244.2.20:5001")
	})
	b.Run("relay-translated", func(b *testing.B) {
		tp := newTopology(b, "10.244.0", "10.244.0")
		startRelays(b, bins.relay, tp, true)
		tp.bench(b, "10.72.0.20:5001")
	})
	b.Run("wireguard-go", func(b *testing.B) {
		if _, err := exec.LookPath("wg"); err != nil {
			b.Skip("needs wg(8): apt-get install wireguard-tools (make bench does as root)")
		}
		tp := newTopology(b, "10.244.1", "10.244.2")
		startStock(b, bins.wireguardGo, tp)
		tp.bench(b, "10.244.2.20:5001")
	})
	b.Run("routed", func(b *testing.B) {
		tp := newTopology(b, "10.244.1", "10.244.2")
		tp.gwA.Run(b, "ip", "route", "add", "10.244.2.0/24", "via", wanB)
		tp.gwB.Run(b, "ip", "route", "add", "10.244.1.0/24", "via", wanA)
		tp.bench(b, "10.244.2.20:5001")
	})
}

const (
	wanA      = "192.168.77.1"
	wanB      = "192.168.77.2"
	wgPort    = 51900
	podMTU    = "1280"
	chunk     = 64 << 10
	waitLimit = 30 * time.Second // bounds set-up and stalls; asserts no speed
)

type binaries struct{ relay, wireguardGo string }

// buildBinaries builds the relay and stock wireguard-go (the module version
// in our go.mod) into a temporary directory.
func buildBinaries(b *testing.B) binaries {
	dir := b.TempDir()
	bins := binaries{relay: filepath.Join(dir, "relay"), wireguardGo: filepath.Join(dir, "wireguard-go")}
	for _, x := range []struct{ out, pkg string }{
		{bins.relay, "github.com/liqo-relay/relay/cmd/relay"},
		{bins.wireguardGo, "golang.zx2c4.com/wireguard"},
	} {
		if out, err := exec.Command("go", "build", "-o", x.out, x.pkg).CombinedOutput(); err != nil {
			b.Fatalf("go build %s: %v\n%s", x.pkg, err, out)
		}
	}
	return bins
}

// topology is the four namespaces of one variant.
type topology struct {
	podA, gwA, gwB, podB *netns.NS
	podAAddr, podBAddr   string
	netA, netB           string // the pods' /24 as each gateway exports it
	// tunnel are the processes that carry the traffic (relays or
	// wireguard-go); their CPU time per byte is reported.
	tunnel []*netns.Proc
}

// newTopology builds podA─gwA═gwB─podB; the pods are .10 (A) and .20 (B)
// of netA and netB (first three octets), their gateways .1.
func newTopology(b *testing.B, netA, netB string) *topology {
	tp := &topology{
		podA: netns.New(b, "bpodA"), gwA: netns.New(b, "bgwA"),
		gwB: netns.New(b, "bgwB"), podB: netns.New(b, "bpodB"),
		podAAddr: netA + ".10", podBAddr: netB + ".20",
		netA: netA + ".0/24", netB: netB + ".0/24",
	}
	netns.Veth(b, tp.podA, tp.podAAddr+"/24", tp.gwA, netA+".1/24")
	netns.Veth(b, tp.gwA, wanA+"/24", tp.gwB, wanB+"/24")
	netns.Veth(b, tp.gwB, netB+".1/24", tp.podB, tp.podBAddr+"/24")
	tp.podA.Run(b, "ip", "route", "add", "default", "via", netA+".1", "mtu", podMTU)
	tp.podB.Run(b, "ip", "route", "add", "default", "via", netB+".1", "mtu", podMTU)
	for _, gw := range []*netns.NS{tp.gwA, tp.gwB} {
		gw.Run(b, "sysctl", "-qw", "net.ipv4.ip_forward=1")
	}
	return tp
}

// relayConfig renders one relay's TUN-mode configuration.
func relayConfig(name string, key keys.Private, addr, exports, peer string, peerKey keys.Private,
	peerPrefixes, seesUs, endpoint string) string {
	var s strings.Builder
	fmt.Fprintf(&s, "name: %s\nprivateKey: %s\nlistenPort: %d\nmode: tun\naddresses: [%s]\nexports: [%s]\n",
		name, key.Reveal(), wgPort, addr, exports)
	fmt.Fprintf(&s, "peers:\n  - name: %s\n    publicKey: %s\n    prefixes: [%s]\n", peer, peerKey.PublicKey(), peerPrefixes)
	if seesUs != "" {
		fmt.Fprintf(&s, "    seesUs: [%s]\n", seesUs)
	}
	fmt.Fprintf(&s, "    paths: [{name: direct, endpoint: %q}]\n", endpoint)
	return s.String()
}

// startRelays runs `relay run` in both gateways and stops them (SIGTERM,
// clean exit expected) when the benchmark ends.
func startRelays(b *testing.B, bin string, tp *topology, translated bool) {
	ka, kb := newKey(b), newKey(b)
	aSeesB, bSeesA := tp.netB, tp.netA
	var aSeesUs, bSeesUs string
	if translated {
		aSeesB, bSeesA = "10.72.0.0/24", "10.71.0.0/24"
		aSeesUs = fmt.Sprintf("{real: %s, as: %s}", tp.netA, bSeesA)
		bSeesUs = fmt.Sprintf("{real: %s, as: %s}", tp.netB, aSeesB)
	}
	dir := b.TempDir()
	for _, r := range []struct {
		ns   *netns.NS
		name string
		cfg  string
	}{
		{tp.gwA, "a", relayConfig("a", ka, "100.80.0.1/32", tp.netA, "b", kb, "100.80.0.2/32, "+aSeesB, aSeesUs, fmt.Sprintf("%s:%d", wanB, wgPort))},
		{tp.gwB, "b", relayConfig("b", kb, "100.80.0.2/32", tp.netB, "a", ka, "100.80.0.1/32, "+bSeesA, bSeesUs, fmt.Sprintf("%s:%d", wanA, wgPort))},
	} {
		path := filepath.Join(dir, r.name+".yaml")
		if err := os.WriteFile(path, []byte(r.cfg), 0o600); err != nil {
			b.Fatal(err)
		}
		p := r.ns.Start(b, "relay-"+r.name, bin, "run", "-c", path)
		tp.tunnel = append(tp.tunnel, p)
		b.Cleanup(func() {
			if err := p.Stop(syscall.SIGTERM); err != nil {
				b.Errorf("relay %s: %v\n%s", r.name, err, p.Output())
			}
		})
	}
}

// startStock runs stock wireguard-go in both gateways, configured with wg.
// Interface names are unique per run: every instance's UAPI socket lives in
// the shared /var/run/wireguard.
func startStock(b *testing.B, bin string, tp *topology) {
	ka, kb := newKey(b), newKey(b)
	dir := b.TempDir()
	for _, r := range []struct {
		ns                 *netns.NS
		key, peer          keys.Private
		addr, peerPrefixes string
		endpoint           string
	}{
		{tp.gwA, ka, kb, "100.80.0.1/32", "100.80.0.2/32," + tp.netB, fmt.Sprintf("%s:%d", wanB, wgPort)},
		{tp.gwB, kb, ka, "100.80.0.2/32", "100.80.0.1/32," + tp.netA, fmt.Sprintf("%s:%d", wanA, wgPort)},
	} {
		ifname := "wgb" + randHex(b, 4)
		p := r.ns.Start(b, ifname, bin, "-f", ifname)
		tp.tunnel = append(tp.tunnel, p)
		b.Cleanup(func() { _ = p.Stop(syscall.SIGTERM) })
		sock := filepath.Join("/var/run/wireguard", ifname+".sock")
		deadline := time.Now().Add(waitLimit)
		for {
			if _, err := os.Stat(sock); err == nil {
				break
			}
			select {
			case <-p.Done():
				b.Fatalf("wireguard-go exited:\n%s", p.Output())
			case <-time.After(20 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				b.Fatalf("no UAPI socket %s after %v", sock, waitLimit)
			}
		}
		keyFile := filepath.Join(dir, ifname+".key")
		if err := os.WriteFile(keyFile, []byte(r.key.Reveal()+"\n"), 0o600); err != nil {
			b.Fatal(err)
		}
		r.ns.Run(b, "wg", "set", ifname, "private-key", keyFile, "listen-port", fmt.Sprint(wgPort),
			"peer", r.peer.PublicKey().String(), "endpoint", r.endpoint, "allowed-ips", r.peerPrefixes)
		r.ns.Run(b, "ip", "addr", "add", r.addr, "dev", ifname)
		r.ns.Run(b, "ip", "link", "set", ifname, "mtu", podMTU, "up")
		peerNet := strings.Split(r.peerPrefixes, ",")[1]
		r.ns.Run(b, "ip", "route", "add", peerNet, "dev", ifname)
	}
}

// bench serves a sink in podB, waits until podA reaches it through the
// variant's data path, then runs the bulk sub-benchmark "tcp".
func (tp *topology) bench(b *testing.B, dst string) {
	s := &counter{wake: make(chan struct{}, 1)}
	var ln net.Listener
	if err := tp.podB.Do(func() (err error) {
		ln, err = net.Listen("tcp", tp.podBAddr+":5001")
		return err
	}); err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(s, c)
			}()
		}
	}()
	b.Cleanup(func() { _ = ln.Close(); <-done })
	// The first connection proves the path (handshakes done, routes in).
	c := tp.dial(b, dst, waitLimit)
	_ = c.Close()
	b.Run("tcp", func(b *testing.B) {
		c := tp.dial(b, dst, 0)
		defer c.Close()
		buf := make([]byte, chunk)
		base := s.n.Load()
		cpu0 := tp.tunnelCPU(b)
		b.SetBytes(chunk)
		b.ResetTimer()
		for range b.N {
			if _, err := c.Write(buf); err != nil {
				b.Fatal(err)
			}
		}
		s.waitFor(b, base+int64(b.N)*chunk)
		b.StopTimer()
		if len(tp.tunnel) > 0 {
			// CPU per byte suffers less than MB/s from the other tenants
			// of a shared machine: compare it too.
			cpu := tp.tunnelCPU(b) - cpu0
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(int64(b.N)*chunk), "tunnel-cpu-ns/B")
		}
	})
}

// tunnelCPU is the CPU time (user and system, all threads) the tunnel
// processes have used so far, from /proc/PID/stat: `ip netns exec` execs
// the command, so the pid is the process itself.
func (tp *topology) tunnelCPU(b *testing.B) time.Duration {
	var total time.Duration
	for _, p := range tp.tunnel {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Pid()))
		if err != nil {
			b.Fatalf("%s: %v", p.Name, err)
		}
		// Fields after the command name, which is in parentheses and may
		// hold spaces: state is field 3, utime 14, stime 15.
		f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
		for _, i := range []int{14 - 3, 15 - 3} {
			ticks, err := strconv.ParseInt(f[i], 10, 64)
			if err != nil {
				b.Fatalf("%s: /proc stat field %d: %v", p.Name, i+3, err)
			}
			total += time.Duration(ticks) * time.Second / clockTicks
		}
	}
	return total
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat times: 100 on every
// Linux architecture Go supports.
const clockTicks = 100

// dial connects from podA to dst. With retry > 0 it retries (a relay that
// has not finished starting answers with an unreachable) for that long.
func (tp *topology) dial(b *testing.B, dst string, retry time.Duration) net.Conn {
	var c net.Conn
	deadline := time.Now().Add(retry)
	err := tp.podA.Do(func() error {
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			var d net.Dialer
			var err error
			c, err = d.DialContext(ctx, "tcp", dst)
			cancel()
			if err == nil || time.Now().After(deadline) {
				return err
			}
			time.Sleep(50 * time.Millisecond) // real: an external process is starting, with nothing to wait on
		}
	})
	if err != nil {
		b.Fatalf("dial %s from podA: %v", dst, err)
	}
	return c
}

// counter is an io.Writer that counts bytes and wakes a waiter.
type counter struct {
	n    atomic.Int64
	wake chan struct{}
}

func (c *counter) Write(p []byte) (int, error) {
	c.n.Add(int64(len(p)))
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return len(p), nil
}

// waitFor blocks until total bytes have arrived; a stall of waitLimit fails.
func (c *counter) waitFor(b *testing.B, total int64) {
	b.Helper()
	timer := time.NewTimer(waitLimit)
	defer timer.Stop()
	for c.n.Load() < total {
		select {
		case <-c.wake:
		case <-timer.C:
			b.Fatalf("sink got %d of %d bytes, then nothing for %v", c.n.Load(), total, waitLimit)
		}
		timer.Reset(waitLimit)
	}
}

func newKey(b *testing.B) keys.Private {
	var k keys.Private
	if _, err := rand.Read(k[:]); err != nil {
		b.Fatal(err)
	}
	k[0] &= 248
	k[31] = (k[31] & 127) | 64
	return k
}

func randHex(b *testing.B, n int) string {
	x := make([]byte, n)
	if _, err := rand.Read(x); err != nil {
		b.Fatal(err)
	}
	return fmt.Sprintf("%x", x)
}
