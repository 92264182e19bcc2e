package mesh_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/agent"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/health"
	"github.com/liqo-relay/relay/internal/demo/mesh"
)

// The star variant of the scale scenario (perf/scenarios/scale.sh with
// SCALE_TOPOLOGY=star): one hub relay with SCALE_PEERS spokes and
// SCALE_PATHS paths to each ("direct" on loopback, the others through a
// zero-delay linkem hop each), so the hub has SCALE_PEERS x SCALE_PATHS
// directed paths. The hub runs in a child process (this test binary run
// again as TestPerfScaleHub), so that its CPU time is measured alone, from
// /proc/PID/stat; the spokes and the linkem hops run in this process.
// Nothing carries traffic: every peer is idle, as most peers of a relay
// with many peers are most of the time.
//
//	RELAY_PERF_SCALE=1 SCALE_PEERS=250 SCALE_PATHS=4 SCALE_SECONDS=20 \
//	    go test -run TestPerfScaleStar -count=1 -v ./internal/demo/mesh/

// starResult is the JSON TestPerfScaleStar writes to SCALE_OUT.
type starResult struct {
	Scenario      string  `json:"scenario"`
	Topology      string  `json:"topology"`
	Peers         int     `json:"peers"`
	PathsPerPeer  int     `json:"pathsPerPeer"`
	HubPaths      int     `json:"hubPaths"` // directed paths of the hub
	Health        string  `json:"health"`
	Seconds       float64 `json:"seconds"`
	SettleSeconds float64 `json:"settleSeconds"`
	NumCPU        int     `json:"numCPU"`
	HubPathsUp    int     `json:"hubPathsUp"`

	HubCPUSeconds       float64 `json:"hubCpuSeconds"`
	HubCPUPercent       float64 `json:"hubCpuPercent"` // of one core: the whole hub process, probing and all
	HubCPUPercentPer1k  float64 `json:"hubCpuPercentPer1000Paths"`
	HubRSSMB            float64 `json:"hubRssMB"`
	HubProbesPerSecond  float64 `json:"hubProbesPerSecond"` // requests the hub sent
	HubProbesPerSecPath float64 `json:"hubProbesPerSecondPerPath"`
	HubWireBytesPerSec  float64 `json:"hubWireBytesPerSecond"` // its requests and their replies, plus the spokes' requests and the hub's replies
}

func TestPerfScaleStar(t *testing.T) {
	if os.Getenv("RELAY_PERF_SCALE") != "1" {
		t.Skip("perf scenario: set RELAY_PERF_SCALE=1 to run (perf/scenarios/scale.sh)")
	}
	peers := envInt(t, "SCALE_PEERS", 250)
	k := envInt(t, "SCALE_PATHS", 4)
	secs := envInt(t, "SCALE_SECONDS", 20)
	healthCfg := os.Getenv("SCALE_HEALTH")
	if peers > 60000 || k > 16 {
		t.Fatalf("SCALE_PEERS=%d SCALE_PATHS=%d: want at most 60000 and 16", peers, k)
	}

	f := mesh.New(testLogger())
	t.Cleanup(func() { _ = f.Close() })
	relays := make([]*mesh.Relay, peers+1)
	for i := range relays {
		r, err := f.Add(&mesh.Relay{Name: fmt.Sprintf("r%05d", i),
			Overlay: netip.PrefixFrom(netip.AddrFrom4([4]byte{100, 80, byte(i >> 8), byte(i)}), 32),
			Exports: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 0}), 24)})
		if err != nil {
			t.Fatal(err)
		}
		relays[i] = r
	}
	hub := relays[0]
	hops := make([][]*mesh.Path, peers+1) // hops[spoke][j]: the hub-spoke path j+1
	for s := 1; s <= peers; s++ {
		for j := 1; j < k; j++ {
			p, err := f.Connect(hub.Name, relays[s].Name, fmt.Sprintf("hop%d", j))
			if err != nil {
				t.Fatal(err)
			}
			hops[s] = append(hops[s], p)
		}
	}

	// The hub, in a child process.
	dir := t.TempDir()
	hubCfg := filepath.Join(dir, "hub.yaml")
	if err := os.WriteFile(hubCfg, []byte(starConfig(relays, hops, 0, healthCfg)), 0o600); err != nil {
		t.Fatal(err)
	}
	addrFile := filepath.Join(dir, "hub.addr")
	cmd := exec.Command(os.Args[0], "-test.run", "^TestPerfScaleHub$", "-test.count=1")
	cmd.Env = append(os.Environ(), "SCALE_HUB_CONFIG="+hubCfg, "SCALE_HUB_ADDR="+addrFile)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = stdin.Close() // the hub stops when its stdin closes
		_ = cmd.Wait()
	})

	// The spokes, here.
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var agents []*agent.Agent
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		for _, a := range agents {
			a.Close()
		}
	})
	for s := 1; s <= peers; s++ {
		cfg, err := config.Parse([]byte(starConfig(relays, hops, s, healthCfg)))
		if err != nil {
			t.Fatalf("config of %s: %v", relays[s].Name, err)
		}
		a, err := agent.New(cfg, agent.Options{Logger: testLogger().With("relay", relays[s].Name), AdminAddr: "127.0.0.1:0"})
		if err != nil {
			t.Fatalf("starting %s: %v", relays[s].Name, err)
		}
		agents = append(agents, a)
		name := relays[s].Name
		wg.Go(func() {
			if err := a.Run(ctx); err != nil && ctx.Err() == nil {
				t.Errorf("%s stopped: %v", name, err)
			}
		})
	}

	var admin string
	start := time.Now()
	settleBound := time.Duration(60+peers/5) * time.Second
	for {
		if b, err := os.ReadFile(addrFile); err == nil && len(b) > 0 {
			admin = strings.TrimSpace(string(b))
			if hubPathsUp(t, admin) >= peers*k {
				break
			}
		}
		if time.Since(start) > settleBound {
			t.Fatalf("the hub's %d paths not all up after %s", peers*k, settleBound)
		}
		time.Sleep(500 * time.Millisecond)
	}
	settle := time.Since(start)
	time.Sleep(2 * time.Second) // the settle burst and first handshakes pass

	pid := cmd.Process.Pid
	sent0 := scrapeSum(t, admin, "relay_probes_sent_total")
	cpu0, t0 := procCPU(t, pid), time.Now()
	time.Sleep(time.Duration(secs) * time.Second)
	cpu1, t1 := procCPU(t, pid), time.Now()
	sent1 := scrapeSum(t, admin, "relay_probes_sent_total")
	wall := t1.Sub(t0).Seconds()

	res := starResult{
		Scenario: "scale", Topology: "star", Peers: peers, PathsPerPeer: k, HubPaths: peers * k,
		Health: healthCfg, Seconds: wall, SettleSeconds: settle.Seconds(), NumCPU: runtime.NumCPU(),
		HubPathsUp: hubPathsUp(t, admin), HubCPUSeconds: cpu1 - cpu0, HubRSSMB: procRSS(t, pid) / 1e6,
	}
	res.HubCPUPercent = 100 * res.HubCPUSeconds / wall
	res.HubCPUPercentPer1k = res.HubCPUPercent / float64(res.HubPaths) * 1000
	res.HubProbesPerSecond = (sent1 - sent0) / wall
	res.HubProbesPerSecPath = res.HubProbesPerSecond / float64(res.HubPaths)
	// The spokes probe the hub about as often as it probes them; every
	// request is answered.
	res.HubWireBytesPerSec = 4 * res.HubProbesPerSecond * (health.ProbeSize + udpIPHeaders)
	t.Logf("scale star: hub with %d peers x %d paths = %d directed paths (%d up), settled in %.1fs; hub CPU %.2f%% of one core over %.1fs (%.2f%% per 1000 paths), RSS %.1f MB; hub probes %.0f req/s (%.3f per path)",
		peers, k, res.HubPaths, res.HubPathsUp, res.SettleSeconds, res.HubCPUPercent, wall, res.HubCPUPercentPer1k, res.HubRSSMB,
		res.HubProbesPerSecond, res.HubProbesPerSecPath)
	if out := os.Getenv("SCALE_OUT"); out != "" {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if sent1 <= sent0 {
		t.Error("the hub sent no probes during the window")
	}
}

// TestPerfScaleHub is the hub of TestPerfScaleStar, in its own process: it
// runs the relay configured in SCALE_HUB_CONFIG, writes its admin address
// to SCALE_HUB_ADDR, and stops when its stdin closes.
func TestPerfScaleHub(t *testing.T) {
	path := os.Getenv("SCALE_HUB_CONFIG")
	if path == "" {
		t.Skip("the hub process of TestPerfScaleStar")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(cfg, agent.Options{Logger: testLogger(), AdminAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	for a.AdminAddr() == nil { // Run starts the admin server
		time.Sleep(10 * time.Millisecond)
	}
	if err := os.WriteFile(os.Getenv("SCALE_HUB_ADDR"), []byte(a.AdminAddr().String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if prof := os.Getenv("SCALE_HUB_PROFILE"); prof != "" { // a CPU profile of the hub, for a second look
		f, err := os.Create(prof)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if d, err := time.ParseDuration(os.Getenv("SCALE_HUB_PROFILE_DELAY")); err == nil {
			time.Sleep(d) // past the settle burst: the steady state alone
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			t.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	_, _ = io.Copy(io.Discard, os.Stdin) // until the parent closes it
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
}

// starConfig renders relay i's config: the hub (0) has every spoke as a
// peer, a spoke only the hub; each pair has "direct" and its hops.
func starConfig(relays []*mesh.Relay, hops [][]*mesh.Path, i int, healthCfg string) string {
	r := relays[i]
	var b strings.Builder
	writeHead(&b, r, healthCfg)
	peer := func(p *mesh.Relay, s int) {
		fmt.Fprintf(&b, "  - name: %s\n    publicKey: %s\n    prefixes: [%s, %s]\n    paths:\n", p.Name, p.Key.PublicKey(), p.Overlay, p.Exports)
		fmt.Fprintf(&b, "      - {name: direct, endpoint: \"127.0.0.1:%d\"}\n", p.Port)
		for _, h := range hops[s] {
			fmt.Fprintf(&b, "      - {name: %s, endpoint: \"%s\"}\n", h.Name, h.Endpoint(r.Name))
		}
	}
	if i == 0 {
		for s := 1; s < len(relays); s++ {
			peer(relays[s], s)
		}
	} else {
		peer(relays[0], i)
	}
	return b.String()
}

// hubPathsUp counts the hub's paths that are up, from its admin status.
func hubPathsUp(t *testing.T, admin string) int {
	t.Helper()
	resp, err := http.Get("http://" + admin + "/status")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var st struct {
		Peers []struct {
			Paths []struct {
				State string `json:"state"`
			} `json:"paths"`
		} `json:"peers"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return 0
	}
	up := 0
	for _, p := range st.Peers {
		for _, ps := range p.Paths {
			if ps.State == "up" {
				up++
			}
		}
	}
	return up
}

// scrapeSum sums every series of metric on the relay's admin /metrics.
func scrapeSum(t *testing.T, admin, metric string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		t.Fatalf("scraping metrics: %v", err)
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, metric+"{") && !strings.HasPrefix(line, metric+" ") {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		sum += v
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading metrics: %v", err)
	}
	return sum
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's CPU times: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// procCPU is process pid's user plus system CPU time in seconds, all
// threads, from /proc/PID/stat.
func procCPU(t *testing.T, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("reading the hub's stat: %v", err)
	}
	// Fields after the command name (which may hold spaces), from field 3.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, err1 := strconv.ParseFloat(f[11], 64)
	stime, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("the hub's stat %q: %v %v", b, err1, err2)
	}
	return (utime + stime) / clockTicks
}

// procRSS is process pid's resident set size in bytes.
func procRSS(t *testing.T, pid int) float64 {
	t.Helper()
	return statusRSS(t, fmt.Sprintf("/proc/%d/status", pid))
}
