package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/liqo-relay/relay/internal/control/admin"
	"github.com/liqo-relay/relay/internal/core/health"
	"github.com/liqo-relay/relay/internal/demo/mesh"
)

// scale star: one hub relay with --peers spokes and --paths paths to each
// ("direct" on loopback, the others through a zero-delay linkem hop each),
// so the hub has peers x paths directed paths. The hub runs in a child
// process (this binary run again as `scale hub`), so that its CPU time is
// measured alone, from /proc/PID/stat; the spokes and the linkem hops run
// in this process. Nothing carries traffic: every peer is idle, as most
// peers of a relay with many peers are most of the time.

// starResult is the JSON of one scale star run; perf/scenarios/
// scale-star.sh merges the runs, and perf/table.sh and perf/gate.sh read
// them.
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

// starOptions are the flags of scale star.
type starOptions struct {
	common
	peers, paths    int
	hubProfile      string
	hubProfileDelay time.Duration
}

// hubStatusPoll is how often the star looks at the hub's paths while they
// come up: its status at a thousand paths is a large document, and the
// hub's CPU is better left to the settling.
const hubStatusPoll = 500 * time.Millisecond

func cmdStar(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o starOptions
	fs := newFlagSet("star", stderr)
	o.register(fs)
	fs.IntVar(&o.peers, "peers", 250, "spokes of the hub, 1 to 60000")
	fs.IntVar(&o.paths, "paths", 4, "paths from the hub to each spoke, 1 to 16")
	fs.StringVar(&o.hubProfile, "hub-profile", "", "write a CPU profile of the hub to this file")
	fs.DurationVar(&o.hubProfileDelay, "hub-profile-delay", 0, "start the hub's profile this long after the hub (past the settle burst)")
	if err := parse(fs, args); err != nil {
		return err
	}
	switch {
	case o.peers < 1 || o.peers > 60000:
		return fmt.Errorf("%w: --peers %d: want 1 to 60000", errUsage, o.peers)
	case o.paths < 1 || o.paths > 16:
		return fmt.Errorf("%w: --paths %d: want 1 to 16", errUsage, o.paths)
	case o.seconds <= 0:
		return fmt.Errorf("%w: --seconds %d: want a positive number", errUsage, o.seconds)
	}
	log, err := newLogger(o.logLevel, stderr)
	if err != nil {
		return err
	}
	res, err := runStar(ctx, o, log, stderr)
	if err != nil {
		return err
	}
	logf(stderr, "star: hub with %d peers x %d paths = %d directed paths (%d up), settled in %.1fs; hub CPU %.2f%% of one core over %.1fs (%.2f%% per 1000 paths), RSS %.1f MB; hub probes %.0f req/s (%.3f per path)",
		res.Peers, res.PathsPerPeer, res.HubPaths, res.HubPathsUp, res.SettleSeconds, res.HubCPUPercent, res.Seconds,
		res.HubCPUPercentPer1k, res.HubRSSMB, res.HubProbesPerSecond, res.HubProbesPerSecPath)
	if err := writeResult(o.out, res, stdout); err != nil {
		return err
	}
	if res.HubProbesPerSecond <= 0 {
		return errors.New("the hub sent no probes during the window")
	}
	return nil
}

// runStar builds the star, runs the hub in a child process and the spokes
// here, measures the hub, and stops everything.
func runStar(ctx context.Context, o starOptions, log *slog.Logger, stderr io.Writer) (res *starResult, err error) {
	fed, relays, hops, err := buildStar(o.peers, o.paths, log)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, fed.Close()) }()
	dir, err := os.MkdirTemp("", "scale-star-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	hubCfg := filepath.Join(dir, "hub.yaml")
	if err := os.WriteFile(hubCfg, []byte(starConfig(relays, hops, 0, o.health)), 0o600); err != nil {
		return nil, err
	}
	hub, err := startHub(hubCfg, o, stderr)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, hub.stop()) }()

	configs := make([]string, o.peers)
	for s := 1; s <= o.peers; s++ {
		configs[s-1] = starConfig(relays, hops, s, o.health)
	}
	fl, err := startFleet(relays[1:], configs, log)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, fl.close()) }()

	start := time.Now()
	bound := time.Duration(60+o.peers/5) * time.Second
	logf(stderr, "star: hub and %d spokes started, waiting for the hub's %d paths", o.peers, o.peers*o.paths)
	addr, err := hub.waitAddr(ctx, bound)
	if err != nil {
		return nil, err
	}
	hubUp := func() int {
		st, err := admin.FetchStatus(ctx, addr)
		if err != nil {
			return 0
		}
		return pathsUp(st)
	}
	settle, err := waitAllUp(ctx, start, o.peers*o.paths, bound, hubStatusPoll, hubUp)
	if err != nil {
		return nil, fmt.Errorf("the hub's paths: %w", err)
	}
	pid := hub.cmd.Process.Pid
	w, err := measureWindow(ctx, o.seconds, func() (float64, error) { return procCPU(pid) },
		func() (map[string]float64, error) { return probesSent(ctx, []string{addr}) })
	if err != nil {
		return nil, err
	}
	rss, err := procRSS(pid)
	if err != nil {
		return nil, err
	}
	res = starFigures(o, w, rss)
	res.SettleSeconds = settle.Seconds()
	res.HubPathsUp = hubUp()
	return res, fl.failed()
}

// starFigures derives the hub's figures from window w and its RSS.
func starFigures(o starOptions, w window, rss float64) *starResult {
	res := &starResult{
		Scenario: "scale", Topology: "star", Peers: o.peers, PathsPerPeer: o.paths, HubPaths: o.peers * o.paths,
		Health: o.health, Seconds: w.seconds, NumCPU: runtime.NumCPU(),
		HubCPUSeconds: w.cpu, HubRSSMB: rss / 1e6,
	}
	res.HubCPUPercent = 100 * res.HubCPUSeconds / w.seconds
	res.HubCPUPercentPer1k = res.HubCPUPercent / float64(res.HubPaths) * 1000
	res.HubProbesPerSecond = (sum(w.sent1) - sum(w.sent0)) / w.seconds
	res.HubProbesPerSecPath = res.HubProbesPerSecond / float64(res.HubPaths)
	// The spokes probe the hub about as often as it probes them; every
	// request is answered.
	res.HubWireBytesPerSec = 4 * res.HubProbesPerSecond * (health.ProbeSize + udpIPHeaders)
	return res
}

// buildStar adds the hub (relay 0) and peers spokes to a new federation,
// and paths-1 linkem hops between the hub and each spoke: hops[s] are
// spoke s's, named hop1, hop2, ... On an error the federation is closed.
func buildStar(peers, paths int, log *slog.Logger) (*mesh.Federation, []*mesh.Relay, [][]*mesh.Path, error) {
	f := mesh.New(log)
	fail := func(err error) (*mesh.Federation, []*mesh.Relay, [][]*mesh.Path, error) {
		return nil, nil, nil, errors.Join(err, f.Close())
	}
	relays := make([]*mesh.Relay, peers+1)
	for i := range relays {
		r, err := f.Add(&mesh.Relay{Name: fmt.Sprintf("r%05d", i),
			Overlay: netip.PrefixFrom(netip.AddrFrom4([4]byte{100, 80, byte(i >> 8), byte(i)}), 32),
			Exports: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 0}), 24)})
		if err != nil {
			return fail(err)
		}
		relays[i] = r
	}
	hops := make([][]*mesh.Path, peers+1)
	for s := 1; s <= peers; s++ {
		for j := 1; j < paths; j++ {
			p, err := f.Connect(relays[0].Name, relays[s].Name, fmt.Sprintf("hop%d", j))
			if err != nil {
				return fail(err)
			}
			hops[s] = append(hops[s], p)
		}
	}
	return f, relays, hops, nil
}
