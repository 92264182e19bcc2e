package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"time"

	"github.com/liqo-relay/relay/internal/core/health"
	"github.com/liqo-relay/relay/internal/demo/mesh"
)

// scale mesh: one process runs N netstack relays in a full mesh, two paths
// per peer, and measures over --seconds what they cost: CPU time, memory,
// and probe traffic per relay, per peer and per path.
//
// "direct" is the peer's port on 127.0.0.1, with no emulated link.
// "consumer" crosses one zero-delay internal/demo/linkem hop, a NAT-like
// UDP relay in this process, whose CPU is part of the figures (a few
// goroutines and one copy per probe). A bare second endpoint such as
// 127.0.0.2 on the same port does not work: the peer's one wildcard socket
// answers from 127.0.0.1, and the relay rightly drops an answer that
// arrives from another path's address (answersOtherPath).

// udpIPHeaders is what IPv4 and UDP add to every probe on the wire.
const udpIPHeaders = 28

// meshSetupAttempts is how often building the mesh is tried: a relay's
// port, chosen free, may be taken by another process before it is held.
const meshSetupAttempts = 3

// meshResult is the JSON of one scale mesh run; perf/scenarios/scale.sh
// merges the runs, and perf/table.sh reads them.
type meshResult struct {
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

func cmdMesh(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o common
	var n int
	fs := newFlagSet("mesh", stderr)
	o.register(fs)
	fs.IntVar(&n, "relays", 20, "relays in the mesh, 2 to 250")
	if err := parse(fs, args); err != nil {
		return err
	}
	if n < 2 || n > 250 {
		return fmt.Errorf("%w: --relays %d: want 2 to 250", errUsage, n)
	}
	if o.seconds <= 0 {
		return fmt.Errorf("%w: --seconds %d: want a positive number", errUsage, o.seconds)
	}
	log, err := newLogger(o.logLevel, stderr)
	if err != nil {
		return err
	}
	res, err := runMesh(ctx, n, o, log, stderr)
	if err != nil {
		return err
	}
	logMesh(stderr, res)
	if err := writeResult(o.out, res, stdout); err != nil {
		return err
	}
	if res.ProbesSent == 0 {
		return errors.New("no probes sent during the window")
	}
	return nil
}

// runMesh builds and runs the mesh of n relays, measures it, and stops it.
func runMesh(ctx context.Context, n int, o common, log *slog.Logger, stderr io.Writer) (res *meshResult, err error) {
	rssBase, err := procRSS(0)
	if err != nil {
		return nil, err
	}
	goroutinesBase := runtime.NumGoroutine()
	var (
		fed      *mesh.Federation
		relays   []*mesh.Relay
		consumer map[[2]int]*mesh.Path
	)
	for attempt := 1; ; attempt++ {
		fed, relays, consumer, err = buildMesh(n, log)
		if err == nil || attempt == meshSetupAttempts {
			break
		}
		logf(stderr, "setting up the mesh, attempt %d: %v", attempt, err)
	}
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, fed.Close()) }()
	configs := make([]string, n)
	for i := range relays {
		configs[i] = meshConfig(relays, i, consumer, o.health)
	}
	fl, err := startFleet(relays, configs, log)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, fl.close()) }()

	logf(stderr, "%d relays started, waiting for their %d paths", n, n*(n-1)*2)
	settleBound := time.Duration(30+n) * time.Second
	settle, err := waitAllUp(ctx, time.Now(), n*(n-1)*2, settleBound, settlePoll, func() int { return fl.pathsUp(ctx) })
	if err != nil {
		return nil, err
	}
	admins, err := fl.admins()
	if err != nil {
		return nil, err
	}
	w, err := measureWindow(ctx, o.seconds, selfCPU, func() (map[string]float64, error) { return probesSent(ctx, admins) })
	if err != nil {
		return nil, err
	}
	res, err = meshFigures(n, o.health, w)
	if err != nil {
		return nil, err
	}
	res.SettleSeconds = settle.Seconds()
	res.RSSBaseMB = rssBase / 1e6
	res.RSSPerRelayMB = (res.RSSMB - res.RSSBaseMB) / float64(n)
	res.GoroutinesBase = goroutinesBase
	res.PathsUp = fl.pathsUp(ctx)
	return res, fl.failed()
}

// meshFigures derives the figures of a mesh of n relays from window w and
// the process's memory now.
func meshFigures(n int, healthCfg string, w window) (*meshResult, error) {
	rss, err := procRSS(0)
	if err != nil {
		return nil, err
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	peers := n * (n - 1)
	paths := peers * 2
	res := &meshResult{
		Scenario: "scale", Relays: n, PeersPerRelay: n - 1, PathsPerPeer: 2, Paths: paths,
		Health: healthCfg, Seconds: w.seconds,
		GOMAXPROCS: runtime.GOMAXPROCS(0), NumCPU: runtime.NumCPU(),
		CPUSeconds:            w.cpu,
		RSSMB:                 rss / 1e6,
		HeapInuseMB:           float64(ms.HeapInuse) / 1e6,
		HeapAllocMB:           float64(ms.HeapAlloc) / 1e6,
		Goroutines:            runtime.NumGoroutine(),
		ProbesPerSecondByPath: map[string]float64{},
	}
	res.CPUPercent = 100 * res.CPUSeconds / w.seconds
	res.CPUPercentPerRelay = res.CPUPercent / float64(n)
	res.CPUPercentPerPeer = res.CPUPercent / float64(peers)
	res.HeapPerRelayMB = res.HeapInuseMB / float64(n)
	for name, v := range w.sent1 {
		d := v - w.sent0[name]
		res.ProbesSent += d
		res.ProbesPerSecondByPath[name] = d / w.seconds / float64(peers)
	}
	res.ProbesPerSecond = res.ProbesSent / w.seconds
	res.ProbesPerSecondPerPath = res.ProbesPerSecond / float64(paths)
	// Every request is answered: requests plus replies.
	res.PayloadBytesPerSecond = 2 * res.ProbesPerSecond * health.ProbeSize
	res.WireBytesPerSecond = 2 * res.ProbesPerSecond * (health.ProbeSize + udpIPHeaders)
	res.WireBytesPerSecPerPath = res.WireBytesPerSecond / float64(paths)
	res.WireBytesPerSecPerPeer = res.WireBytesPerSecond / float64(peers)
	res.WireBytesPerSecPerRelay = res.WireBytesPerSecond / float64(n)
	return res, nil
}

// buildMesh adds n relays to a new federation (keys and ports) and one
// linkem consumer path per pair. The relays' ports are held bound while
// the linkem hops take theirs, so no hop lands on a relay's port; it fails
// if a port was taken meanwhile. On an error the federation is closed.
func buildMesh(n int, log *slog.Logger) (*mesh.Federation, []*mesh.Relay, map[[2]int]*mesh.Path, error) {
	f := mesh.New(log)
	fail := func(err error) (*mesh.Federation, []*mesh.Relay, map[[2]int]*mesh.Path, error) {
		return nil, nil, nil, errors.Join(err, f.Close())
	}
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
			return fail(err)
		}
		c, err := net.ListenUDP("udp4", &net.UDPAddr{Port: int(r.Port)})
		if err != nil {
			return fail(fmt.Errorf("holding %s's port: %w", r.Name, err))
		}
		held = append(held, c)
		relays[i] = r
	}
	consumer := map[[2]int]*mesh.Path{}
	for i := range relays {
		for j := i + 1; j < n; j++ {
			p, err := f.Connect(relays[i].Name, relays[j].Name, "consumer")
			if err != nil {
				return fail(err)
			}
			consumer[[2]int{i, j}], consumer[[2]int{j, i}] = p, p
		}
	}
	return f, relays, consumer, nil
}

// logMesh prints the figures of a mesh run.
func logMesh(w io.Writer, res *meshResult) {
	logf(w, "%d relays, %d peers each, 2 paths per peer (%d directed paths), settled in %.1fs, %d/%d paths up at the end",
		res.Relays, res.PeersPerRelay, res.Paths, res.SettleSeconds, res.PathsUp, res.Paths)
	logf(w, "CPU %.1f%% of one core over %.1fs (%.2f%% per relay, %.3f%% per peer); GOMAXPROCS %d",
		res.CPUPercent, res.Seconds, res.CPUPercentPerRelay, res.CPUPercentPerPeer, res.GOMAXPROCS)
	logf(w, "RSS %.1f MB (base %.1f MB, %.2f MB per relay); heap in use %.1f MB (%.2f MB per relay), live %.1f MB; goroutines %d (base %d)",
		res.RSSMB, res.RSSBaseMB, res.RSSPerRelayMB, res.HeapInuseMB, res.HeapPerRelayMB, res.HeapAllocMB, res.Goroutines, res.GoroutinesBase)
	logf(w, "probes %.0f req/s total, %.2f req/s per path (by path %v); wire %.0f B/s per path, %.0f B/s per peer, %.0f B/s per relay (requests+replies, %d+%d bytes each)",
		res.ProbesPerSecond, res.ProbesPerSecondPerPath, res.ProbesPerSecondByPath,
		res.WireBytesPerSecPerPath, res.WireBytesPerSecPerPeer, res.WireBytesPerSecPerRelay, health.ProbeSize, udpIPHeaders)
}
