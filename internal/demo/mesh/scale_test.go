package mesh_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/agent"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/health"
	"github.com/liqo-relay/relay/internal/demo/mesh"
)

// This file is perf scenario 5, "scale" (perf/scenarios/scale.sh): one
// process runs SCALE_RELAYS netstack relays in a full mesh, two paths per
// peer, and measures over SCALE_SECONDS what they cost: CPU time, memory,
// and probe traffic per relay, per peer and per path. It runs only when
// RELAY_PERF_SCALE=1, so `make test` never pays for it:
//
//	RELAY_PERF_SCALE=1 SCALE_RELAYS=20 SCALE_SECONDS=20 \
//	    go test -run TestPerfScale -count=1 -v ./internal/demo/mesh/
//
// "direct" is the peer's port on 127.0.0.1, with no emulated link.
// "consumer" crosses one zero-delay internal/demo/linkem hop, a NAT-like UDP relay
// in this process, whose CPU is part of the figures (a few goroutines and
// one copy per probe). A bare second endpoint such as 127.0.0.2 on the
// same port does not work: the peer's one wildcard socket answers from
// 127.0.0.1, and the relay rightly drops an answer that arrives from
// another path's address (answersOtherPath).

// udpIPHeaders is what IPv4 and UDP add to every probe on the wire.
const udpIPHeaders = 28

// scaleResult is the JSON the test writes to SCALE_OUT.
type scaleResult struct {
	Scenario      string  `json:"scenario"`
	Relays        int     `json:"relays"`
	PeersPerRelay int     `json:"peersPerRelay"`
	PathsPerPeer  int     `json:"pathsPerPeer"`
	Paths         int     `json:"paths"` // directed (relay, peer, path) triples
	Health        string  `json:"health"`
	Seconds       float64 `json:"seconds"`
	SettleSeconds float64 `json:"settleSeconds"`
	GOMAXPROCS    int     `json:"gomaxprocs"`
	NumCPU        int     `json:"numCPU"`
	PathsUp       int     `json:"pathsUp"` // at the end of the window

	CPUSeconds         float64 `json:"cpuSeconds"`
	CPUPercent         float64 `json:"cpuPercent"` // of one core, whole process
	CPUPercentPerRelay float64 `json:"cpuPercentPerRelay"`
	CPUPercentPerPeer  float64 `json:"cpuPercentPerPeer"` // per directed (relay, peer)

	RSSBaseMB      float64 `json:"rssBaseMB"` // before any relay started
	RSSMB          float64 `json:"rssMB"`     // at the end
	RSSPerRelayMB  float64 `json:"rssPerRelayMB"`
	HeapInuseMB    float64 `json:"heapInuseMB"` // spans in use, may exceed RSS: untouched pages
	HeapAllocMB    float64 `json:"heapAllocMB"` // live objects
	HeapPerRelayMB float64 `json:"heapPerRelayMB"`
	Goroutines     int     `json:"goroutines"`
	GoroutinesBase int     `json:"goroutinesBase"`

	// Probe requests sent (relay_probes_sent_total); each is answered by
	// one reply of the same size, so the wire carries twice as much.
	ProbesSent              float64            `json:"probesSent"`
	ProbesPerSecond         float64            `json:"probesPerSecond"`
	ProbesPerSecondPerPath  float64            `json:"probesPerSecondPerPath"`
	ProbesPerSecondByPath   map[string]float64 `json:"probesPerSecondByPath"` // per directed path, by path name
	PayloadBytesPerSecond   float64            `json:"payloadBytesPerSecond"` // requests and replies, 56 bytes each
	WireBytesPerSecond      float64            `json:"wireBytesPerSecond"`    // plus IPv4+UDP headers
	WireBytesPerSecPerPath  float64            `json:"wireBytesPerSecondPerPath"`
	WireBytesPerSecPerPeer  float64            `json:"wireBytesPerSecondPerPeer"`
	WireBytesPerSecPerRelay float64            `json:"wireBytesPerSecondPerRelay"`
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return n
}

func TestPerfScale(t *testing.T) {
	if os.Getenv("RELAY_PERF_SCALE") != "1" {
		t.Skip("perf scenario: set RELAY_PERF_SCALE=1 to run (perf/scenarios/scale.sh)")
	}
	n := envInt(t, "SCALE_RELAYS", 20)
	secs := envInt(t, "SCALE_SECONDS", 20)
	healthCfg := os.Getenv("SCALE_HEALTH") // YAML flow mapping, "" = defaults
	if n < 2 || n > 250 {
		t.Fatalf("SCALE_RELAYS=%d: want 2..250", n)
	}

	rssBase := vmRSS(t)
	goroutinesBase := runtime.NumGoroutine()

	var (
		relays   []*mesh.Relay
		consumer map[[2]int]*mesh.Path
		err      error
	)
	for attempt := 1; ; attempt++ {
		relays, consumer, err = scaleMesh(t, n)
		if err == nil || attempt == 3 {
			break
		}
		t.Logf("setting up the mesh, attempt %d: %v", attempt, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	agents := make([]*agent.Agent, n)
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		for _, a := range agents {
			if a != nil {
				a.Close()
			}
		}
	})
	for i, r := range relays {
		cfg, err := config.Parse([]byte(scaleConfig(relays, i, consumer, healthCfg)))
		if err != nil {
			t.Fatalf("config of %s: %v", r.Name, err)
		}
		a, err := agent.New(cfg, agent.Options{Logger: testLogger().With("relay", r.Name), AdminAddr: "127.0.0.1:0"})
		if err != nil {
			t.Fatalf("starting %s: %v", r.Name, err)
		}
		agents[i] = a
		wg.Go(func() {
			if err := a.Run(ctx); err != nil && ctx.Err() == nil {
				t.Errorf("%s stopped: %v", r.Name, err)
			}
		})
	}

	// Settle: every relay sees every path of every peer up. A bound, not a
	// speed assertion: a mesh that never settles fails here.
	start := time.Now()
	settleBound := time.Duration(30+n) * time.Second
	for up := pathsUp(agents); up < n*(n-1)*2; up = pathsUp(agents) {
		if time.Since(start) > settleBound {
			t.Fatalf("only %d of %d paths up after %s", up, n*(n-1)*2, settleBound)
		}
		time.Sleep(200 * time.Millisecond)
	}
	settle := time.Since(start)
	// Let the first handshakes and the settle burst pass.
	time.Sleep(2 * time.Second)

	sent0 := probesSent(t, agents)
	cpu0, t0 := cpuTime(t), time.Now()
	time.Sleep(time.Duration(secs) * time.Second)
	cpu1, t1 := cpuTime(t), time.Now()
	sent1 := probesSent(t, agents)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)

	wall := t1.Sub(t0).Seconds()
	peers := n * (n - 1)
	paths := peers * 2
	res := scaleResult{
		Scenario: "scale", Relays: n, PeersPerRelay: n - 1, PathsPerPeer: 2, Paths: paths,
		Health: healthCfg, Seconds: wall, SettleSeconds: settle.Seconds(),
		GOMAXPROCS: runtime.GOMAXPROCS(0), NumCPU: runtime.NumCPU(), PathsUp: pathsUp(agents),
		CPUSeconds:            cpu1 - cpu0,
		RSSBaseMB:             rssBase / 1e6,
		RSSMB:                 vmRSS(t) / 1e6,
		HeapInuseMB:           float64(ms.HeapInuse) / 1e6,
		HeapAllocMB:           float64(ms.HeapAlloc) / 1e6,
		Goroutines:            runtime.NumGoroutine(),
		GoroutinesBase:        goroutinesBase,
		ProbesPerSecondByPath: map[string]float64{},
	}
	res.CPUPercent = 100 * res.CPUSeconds / wall
	res.CPUPercentPerRelay = res.CPUPercent / float64(n)
	res.CPUPercentPerPeer = res.CPUPercent / float64(peers)
	res.RSSPerRelayMB = (res.RSSMB - res.RSSBaseMB) / float64(n)
	res.HeapPerRelayMB = res.HeapInuseMB / float64(n)
	for name, v := range sent1 {
		d := v - sent0[name]
		res.ProbesSent += d
		res.ProbesPerSecondByPath[name] = d / wall / float64(peers)
	}
	res.ProbesPerSecond = res.ProbesSent / wall
	res.ProbesPerSecondPerPath = res.ProbesPerSecond / float64(paths)
	// Every request is answered: requests plus replies.
	res.PayloadBytesPerSecond = 2 * res.ProbesPerSecond * health.ProbeSize
	res.WireBytesPerSecond = 2 * res.ProbesPerSecond * (health.ProbeSize + udpIPHeaders)
	res.WireBytesPerSecPerPath = res.WireBytesPerSecond / float64(paths)
	res.WireBytesPerSecPerPeer = res.WireBytesPerSecond / float64(peers)
	res.WireBytesPerSecPerRelay = res.WireBytesPerSecond / float64(n)

	t.Logf("scale: %d relays, %d peers each, 2 paths per peer (%d directed paths), settled in %.1fs, %d/%d paths up at the end",
		n, n-1, paths, res.SettleSeconds, res.PathsUp, paths)
	t.Logf("scale: CPU %.1f%% of one core over %.1fs (%.2f%% per relay, %.3f%% per peer); GOMAXPROCS %d",
		res.CPUPercent, wall, res.CPUPercentPerRelay, res.CPUPercentPerPeer, res.GOMAXPROCS)
	t.Logf("scale: RSS %.1f MB (base %.1f MB, %.2f MB per relay); heap in use %.1f MB (%.2f MB per relay), live %.1f MB; goroutines %d (base %d)",
		res.RSSMB, res.RSSBaseMB, res.RSSPerRelayMB, res.HeapInuseMB, res.HeapPerRelayMB, res.HeapAllocMB, res.Goroutines, res.GoroutinesBase)
	t.Logf("scale: probes %.0f req/s total, %.2f req/s per path (by path %v); wire %.0f B/s per path, %.0f B/s per peer, %.0f B/s per relay (requests+replies, %d+%d bytes each)",
		res.ProbesPerSecond, res.ProbesPerSecondPerPath, res.ProbesPerSecondByPath,
		res.WireBytesPerSecPerPath, res.WireBytesPerSecPerPeer, res.WireBytesPerSecPerRelay, health.ProbeSize, udpIPHeaders)

	if out := os.Getenv("SCALE_OUT"); out != "" {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if res.ProbesSent == 0 {
		t.Error("no probes sent during the window")
	}
}

// scaleMesh adds n relays to a new federation (keys and ports) and one
// linkem consumer path per pair; the federation is closed at cleanup. The
// relays' ports are held bound while the linkem hops take theirs, so no hop
// lands on a relay's port; it fails if a port was taken meanwhile.
func scaleMesh(t *testing.T, n int) ([]*mesh.Relay, map[[2]int]*mesh.Path, error) {
	f := mesh.New(testLogger())
	t.Cleanup(func() { _ = f.Close() })
	relays := make([]*mesh.Relay, n)
	var held []*net.UDPConn
	defer func() {
		for _, c := range held {
			_ = c.Close()
		}
	}()
	for i := range relays {
		r, err := f.Add(&mesh.Relay{Name: fmt.Sprintf("r%03d", i),
			Overlay: netip.PrefixFrom(netip.AddrFrom4([4]byte{100, 80, 0, byte(i + 1)}), 32),
			Exports: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i + 1), 0, 0}), 16)})
		if err != nil {
			return nil, nil, err
		}
		c, err := net.ListenUDP("udp4", &net.UDPAddr{Port: int(r.Port)})
		if err != nil {
			return nil, nil, fmt.Errorf("holding %s's port: %w", r.Name, err)
		}
		held = append(held, c)
		relays[i] = r
	}
	consumer := map[[2]int]*mesh.Path{}
	for i := range relays {
		for j := i + 1; j < n; j++ {
			p, err := f.Connect(relays[i].Name, relays[j].Name, "consumer")
			if err != nil {
				return nil, nil, err
			}
			consumer[[2]int{i, j}], consumer[[2]int{j, i}] = p, p
		}
	}
	return relays, consumer, nil
}

// scaleConfig renders relay i's config: every other relay is a peer with a
// "direct" path to its port on 127.0.0.1 and a "consumer" path through
// the pair's linkem hop.
func scaleConfig(relays []*mesh.Relay, i int, consumer map[[2]int]*mesh.Path, healthCfg string) string {
	r := relays[i]
	var b strings.Builder
	writeHead(&b, r, healthCfg)
	for j, p := range relays {
		if j == i {
			continue
		}
		fmt.Fprintf(&b, "  - name: %s\n    publicKey: %s\n    prefixes: [%s, %s]\n    paths:\n", p.Name, p.Key.PublicKey(), p.Overlay, p.Exports)
		fmt.Fprintf(&b, "      - {name: direct, endpoint: \"127.0.0.1:%d\"}\n", p.Port)
		fmt.Fprintf(&b, "      - {name: consumer, endpoint: \"%s\"}\n", consumer[[2]int{i, j}].Endpoint(r.Name))
	}
	return b.String()
}

// writeHead writes relay r's config up to its peers: list.
func writeHead(b *strings.Builder, r *mesh.Relay, healthCfg string) {
	fmt.Fprintf(b, "name: %s\nprivateKey: %s\nlistenPort: %d\nmode: netstack\naddresses: [%s]\nexports: [%s]\n",
		r.Name, r.Key.Reveal(), r.Port, r.Overlay, r.Exports)
	if healthCfg != "" {
		fmt.Fprintf(b, "health: %s\n", healthCfg)
	}
	b.WriteString("peers:\n")
}

// pathsUp counts, over every relay, the paths to its peers that are up.
func pathsUp(agents []*agent.Agent) int {
	up := 0
	for _, a := range agents {
		st, _ := a.Status(context.Background())
		for _, p := range st.Peers {
			for _, ps := range p.Paths {
				if ps.State == "up" {
					up++
				}
			}
		}
	}
	return up
}

// probesSent sums relay_probes_sent_total over every relay, by path name,
// scraped from each relay's admin /metrics.
func probesSent(t *testing.T, agents []*agent.Agent) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, a := range agents {
		resp, err := http.Get("http://" + a.AdminAddr().String() + "/metrics")
		if err != nil {
			t.Fatalf("scraping metrics: %v", err)
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "relay_probes_sent_total{") {
				continue
			}
			name := labelValue(line, "path")
			sp := strings.LastIndexByte(line, ' ')
			v, err := strconv.ParseFloat(line[sp+1:], 64)
			if err != nil {
				t.Fatalf("metrics line %q: %v", line, err)
			}
			out[name] += v
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if err := sc.Err(); err != nil {
			t.Fatalf("reading metrics: %v", err)
		}
	}
	return out
}

// labelValue returns the value of label in a Prometheus text-format line.
func labelValue(line, label string) string {
	i := strings.Index(line, label+`="`)
	if i < 0 {
		return ""
	}
	rest := line[i+len(label)+2:]
	if j := strings.IndexByte(rest, '"'); j >= 0 {
		return rest[:j]
	}
	return ""
}

// cpuTime is the process's user plus system CPU time, in seconds.
func cpuTime(t *testing.T) float64 {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatalf("getrusage: %v", err)
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// vmRSS is the process's resident set size in bytes, from /proc/self/status.
func vmRSS(t *testing.T) float64 {
	t.Helper()
	return statusRSS(t, "/proc/self/status")
}

// statusRSS is the VmRSS of a /proc/PID/status file, in bytes.
func statusRSS(t *testing.T, path string) float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest) // "123456 kB"
			kb, err := strconv.ParseFloat(f[0], 64)
			if err != nil {
				t.Fatalf("VmRSS %q: %v", rest, err)
			}
			return kb * 1024
		}
	}
	t.Fatalf("no VmRSS in %s", path)
	return 0
}
