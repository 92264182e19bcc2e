package metrics_test

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/liqo-relay/relay/internal/control/metrics"
	"github.com/liqo-relay/relay/internal/core/engine"
)

// gatherCompare checks the named families of m's registry against the
// exposition text want (HELP and TYPE lines included).
func gatherCompare(t *testing.T, m *metrics.Metrics, want string, names ...string) {
	t.Helper()
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
}

func count(t *testing.T, m *metrics.Metrics, name string) int {
	t.Helper()
	n, err := testutil.GatherAndCount(m.Registry(), name)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPathGauges(t *testing.T) {
	m := metrics.New()
	m.PathUp("b", "direct", true)
	m.PathUp("b", "consumer", false)
	m.PathStats("b", "direct", 0.25, 0)
	m.PathStats("b", "consumer", 1.7, 0) // clamped
	m.PathStats("b", "backup", math.NaN(), 0)
	m.PeerReachable("b", true)
	m.PeerReachable("c", false)

	gatherCompare(t, m, `
# HELP relay_path_up 1 if the path to the peer is up (probes answered), else 0.
# TYPE relay_path_up gauge
relay_path_up{path="consumer",peer="b"} 0
relay_path_up{path="direct",peer="b"} 1
# HELP relay_path_loss_ratio Estimated probe loss on the path, 0 to 1.
# TYPE relay_path_loss_ratio gauge
relay_path_loss_ratio{path="backup",peer="b"} 0
relay_path_loss_ratio{path="consumer",peer="b"} 1
relay_path_loss_ratio{path="direct",peer="b"} 0.25
# HELP relay_peer_reachable 1 if at least one path to the peer is usable, else 0.
# TYPE relay_peer_reachable gauge
relay_peer_reachable{peer="b"} 1
relay_peer_reachable{peer="c"} 0
`, "relay_path_up", "relay_path_loss_ratio", "relay_peer_reachable")
}

func TestSwitch(t *testing.T) {
	m := metrics.New()
	m.Switch("b", "", "direct", "initial")
	m.Switch("b", "direct", "consumer", "down")
	m.Switch("b", "consumer", "direct", "better")
	m.Switch("b", "direct", "consumer", "down")

	gatherCompare(t, m, `
# HELP relay_path_active 1 if the path currently carries the peer's traffic, else 0.
# TYPE relay_path_active gauge
relay_path_active{path="consumer",peer="b"} 1
relay_path_active{path="direct",peer="b"} 0
# HELP relay_path_switches_total Changes of the peer's active path, by old path, new path and reason.
# TYPE relay_path_switches_total counter
relay_path_switches_total{from="consumer",peer="b",reason="better",to="direct"} 1
relay_path_switches_total{from="direct",peer="b",reason="down",to="consumer"} 2
relay_path_switches_total{from="none",peer="b",reason="initial",to="direct"} 1
`, "relay_path_active", "relay_path_switches_total")

	m.PathActive("b", "consumer", false)
	gatherCompare(t, m, `
# HELP relay_path_active 1 if the path currently carries the peer's traffic, else 0.
# TYPE relay_path_active gauge
relay_path_active{path="consumer",peer="b"} 0
relay_path_active{path="direct",peer="b"} 0
`, "relay_path_active")
}

func TestObserveRTT(t *testing.T) {
	m := metrics.New()
	for _, d := range []time.Duration{
		80 * time.Microsecond,   // below the first bucket
		3 * time.Millisecond,    // le 0.005
		10 * time.Millisecond,   // exactly on le 0.01
		1500 * time.Millisecond, // le 2
		5 * time.Second,         // only +Inf
	} {
		m.ObserveRTT("b", "direct", d)
	}
	gatherCompare(t, m, `
# HELP relay_path_rtt_seconds Round-trip time of answered probes on the path.
# TYPE relay_path_rtt_seconds histogram
relay_path_rtt_seconds_bucket{path="direct",peer="b",le="0.0001"} 1
relay_path_rtt_seconds_bucket{path="direct",peer="b",le="0.00025"} 1
relay_path_rtt_seconds_bucket{path="direct",peer="b",le="0.0005"} 1
relay_path_rtt_seconds_bucket{path="direct",peer="b",le="0.001"} 1
relay_path_rtt_seconds_bucket{path="direct",peer="b",le="0.0025"} 1
relay_path_rtt_seconds_bucket{path="direct",peer="b",le="0.005"} 2
relay_path_rtt_seconds_bucket{path="direct",peer="b",le="0.01"} 3
relay_path_rtt_seconds_bucket{path="direct",peer="b",le="0.025"} 3
relay_path_rtt_seconds_bucket{path="direct",peer="b",le="0.05"} 3
relay_path_rtt_seconds_bucket{path="direct",peer="b",le="0.1"} 3
relay_path_rtt_seconds_bucket{path="direct",peer="b",le="0.25"} 3
relay_path_rtt_seconds_bucket{path="direct",peer="b",le="0.5"} 3
relay_path_rtt_seconds_bucket{path="direct",peer="b",le="1"} 3
relay_path_rtt_seconds_bucket{path="direct",peer="b",le="2"} 4
relay_path_rtt_seconds_bucket{path="direct",peer="b",le="+Inf"} 5
relay_path_rtt_seconds_sum{path="direct",peer="b"} 6.51308
relay_path_rtt_seconds_count{path="direct",peer="b"} 5
`, "relay_path_rtt_seconds")
}

func TestProbeCounters(t *testing.T) {
	m := metrics.New()
	for range 10 {
		m.ProbeSent("b", "direct")
	}
	m.ProbeSent("b", "consumer")
	m.PathStats("b", "direct", 0.2, 2)
	m.ProbeRejected()
	gatherCompare(t, m, `
# HELP relay_probes_sent_total Probes sent on the path.
# TYPE relay_probes_sent_total counter
relay_probes_sent_total{path="consumer",peer="b"} 1
relay_probes_sent_total{path="direct",peer="b"} 10
# HELP relay_probes_lost_total Probes on the path that got no answer in time.
# TYPE relay_probes_lost_total counter
relay_probes_lost_total{path="direct",peer="b"} 2
# HELP relay_probes_rejected_total Received probe packets discarded: bad authentication, replays, or no room to handle them.
# TYPE relay_probes_rejected_total counter
relay_probes_rejected_total 1
`, "relay_probes_sent_total", "relay_probes_lost_total", "relay_probes_rejected_total")
}

func TestPeerBytesCumulative(t *testing.T) {
	m := metrics.New()
	steps := []struct {
		rx, tx         uint64
		wantRX, wantTX string
	}{
		{100, 10, "100", "10"},
		{300, 10, "300", "10"},
		{50, 20, "350", "20"}, // rx reset by WireGuard: carried forward
		{80, 5, "380", "25"},  // tx reset too
		{80, 5, "380", "25"},  // unchanged
	}
	for i, s := range steps {
		m.PeerBytes("b", s.rx, s.tx)
		want := `
# HELP relay_peer_bytes_total Bytes exchanged with the peer over WireGuard, by direction (rx or tx).
# TYPE relay_peer_bytes_total counter
relay_peer_bytes_total{direction="rx",peer="b"} ` + s.wantRX + `
relay_peer_bytes_total{direction="tx",peer="b"} ` + s.wantTX + "\n"
		if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "relay_peer_bytes_total"); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
}

const pipelineHeader = `
# HELP relay_packets_dropped_total Packets the router refused, by reason.
# TYPE relay_packets_dropped_total counter
relay_packets_dropped_total{reason="bad_destination"} %d
relay_packets_dropped_total{reason="bad_source"} %d
relay_packets_dropped_total{reason="malformed"} %d
# HELP relay_translated_packets_total Packets whose addresses were rewritten to resolve overlapping pod CIDRs, by direction (rx or tx).
# TYPE relay_translated_packets_total counter
relay_translated_packets_total{direction="rx"} %d
relay_translated_packets_total{direction="tx"} %d
# HELP relay_mss_clamped_total TCP SYN packets whose MSS option was lowered to fit the tunnel MTU.
# TYPE relay_mss_clamped_total counter
relay_mss_clamped_total %d
`

var pipelineNames = []string{"relay_packets_dropped_total", "relay_translated_packets_total", "relay_mss_clamped_total"}

func TestPipeline(t *testing.T) {
	m := metrics.New()
	// Every bounded label value is present from the start, at 0.
	gatherCompare(t, m, fmt.Sprintf(pipelineHeader, 0, 0, 0, 0, 0, 0), pipelineNames...)

	for i, step := range []struct {
		in   metrics.PipelineCounters
		want [6]int // bad_destination, bad_source, malformed, rx, tx, mss
	}{
		{metrics.PipelineCounters{DroppedBadSource: 3, DroppedMalformed: 1, TranslatedRX: 7, TranslatedTX: 2, MSSClamped: 4},
			[6]int{0, 3, 1, 7, 2, 4}},
		{metrics.PipelineCounters{DroppedBadSource: 5, DroppedBadDestination: 1, DroppedMalformed: 1, TranslatedRX: 9, TranslatedTX: 2, MSSClamped: 4},
			[6]int{1, 5, 1, 9, 2, 4}},
		// The pipeline was recreated: its counters restarted.
		{metrics.PipelineCounters{DroppedBadSource: 1, TranslatedRX: 2, TranslatedTX: 3},
			[6]int{1, 6, 1, 11, 3, 4}}, // tx only grew
	} {
		m.Pipeline(step.in)
		w := step.want
		if err := testutil.GatherAndCompare(m.Registry(),
			strings.NewReader(fmt.Sprintf(pipelineHeader, w[0], w[1], w[2], w[3], w[4], w[5])), pipelineNames...); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
}

func TestReloadsAndHandshakes(t *testing.T) {
	m := metrics.New()
	gatherCompare(t, m, `
# HELP relay_config_reloads_total Configuration reloads, by result (ok or error).
# TYPE relay_config_reloads_total counter
relay_config_reloads_total{result="error"} 0
relay_config_reloads_total{result="ok"} 0
`, "relay_config_reloads_total")

	m.ConfigReload(true)
	m.ConfigReload(true)
	m.ConfigReload(false)
	m.HandshakeInitiated("b", engine.ReasonStartup)
	m.HandshakeInitiated("b", engine.ReasonPeerRestarted)
	m.HandshakeInitiated("c", engine.ReasonPeerAdded)

	gatherCompare(t, m, `
# HELP relay_config_reloads_total Configuration reloads, by result (ok or error).
# TYPE relay_config_reloads_total counter
relay_config_reloads_total{result="error"} 1
relay_config_reloads_total{result="ok"} 2
# HELP relay_handshakes_initiated_total WireGuard handshakes the relay initiated with the peer, by reason.
# TYPE relay_handshakes_initiated_total counter
relay_handshakes_initiated_total{peer="b",reason="peer-restarted"} 1
relay_handshakes_initiated_total{peer="b",reason="startup"} 1
relay_handshakes_initiated_total{peer="c",reason="peer-added"} 1
`, "relay_config_reloads_total", "relay_handshakes_initiated_total")
}

func TestBuildInfo(t *testing.T) {
	m := metrics.New(metrics.WithVersion("v1.2.3"))
	gatherCompare(t, m, `
# HELP relay_build_info Always 1; the labels say which relay build is running.
# TYPE relay_build_info gauge
relay_build_info{goversion="`+runtime.Version()+`",version="v1.2.3"} 1
`, "relay_build_info")
}

func TestRuntimeCollectors(t *testing.T) {
	m := metrics.New()
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if runtime.GOOS != "linux" && strings.HasPrefix(name, "process_") {
			continue
		}
		if n := count(t, m, name); n != 1 {
			t.Errorf("%s: %d series, want 1", name, n)
		}
	}
}

// record touches every per-peer series of peer on the given paths.
func record(m *metrics.Metrics, peer string, paths ...string) {
	prev := ""
	for _, p := range paths {
		m.PathUp(peer, p, true)
		m.ObserveRTT(peer, p, time.Millisecond)
		m.PathStats(peer, p, 0.1, 1)
		m.ProbeSent(peer, p)
		m.Switch(peer, prev, p, "better")
		prev = p
	}
	m.PeerReachable(peer, true)
	m.PeerBytes(peer, 1, 2)
	m.HandshakeInitiated(peer, engine.ReasonStartup)
}

var perPeer = []string{
	"relay_path_up", "relay_path_active", "relay_path_rtt_seconds", "relay_path_loss_ratio",
	"relay_probes_sent_total", "relay_probes_lost_total", "relay_path_switches_total",
	"relay_peer_reachable", "relay_peer_bytes_total", "relay_handshakes_initiated_total",
}

func TestRemovePeer(t *testing.T) {
	m := metrics.New()
	record(m, "b", "direct", "consumer")
	record(m, "c", "direct", "consumer")
	before := map[string]int{}
	for _, name := range perPeer {
		before[name] = count(t, m, name)
		if before[name] == 0 || before[name]%2 != 0 {
			t.Fatalf("%s: %d series before deletion, want an even non-zero number", name, before[name])
		}
	}

	m.RemovePeer("b")
	m.RemovePeer("nobody") // no-op
	for _, name := range perPeer {
		if got, want := count(t, m, name), before[name]/2; got != want {
			t.Errorf("%s: %d series after RemovePeer, want %d", name, got, want)
		}
	}

	m.RemovePeer("c")
	for _, name := range perPeer {
		if got := count(t, m, name); got != 0 {
			t.Errorf("%s: %d series after deleting every peer, want 0", name, got)
		}
	}
	// Peer-independent series are untouched.
	if got := count(t, m, "relay_packets_dropped_total"); got != 3 {
		t.Errorf("relay_packets_dropped_total: %d series, want 3", got)
	}
}

func TestRemovePath(t *testing.T) {
	m := metrics.New()
	record(m, "b", "direct", "consumer")
	m.RemovePath("b", "consumer")

	want := map[string]int{
		"relay_path_up": 1, "relay_path_active": 1, "relay_path_rtt_seconds": 1,
		"relay_path_loss_ratio": 1, "relay_probes_sent_total": 1, "relay_probes_lost_total": 1,
		// none->direct stays; direct->consumer named the deleted path.
		"relay_path_switches_total": 1,
		"relay_peer_reachable":      1, "relay_peer_bytes_total": 2, "relay_handshakes_initiated_total": 1,
	}
	for name, n := range want {
		if got := count(t, m, name); got != n {
			t.Errorf("%s: %d series after RemovePath, want %d", name, got, n)
		}
	}
	gatherCompare(t, m, `
# HELP relay_path_switches_total Changes of the peer's active path, by old path, new path and reason.
# TYPE relay_path_switches_total counter
relay_path_switches_total{from="none",peer="b",reason="better",to="direct"} 1
`, "relay_path_switches_total")
}

func TestNilMetricsDiscards(t *testing.T) {
	var m *metrics.Metrics
	if m.Registry() != nil {
		t.Fatal("nil Metrics has a registry")
	}
	// None of these may panic.
	record(m, "b", "direct")
	m.PathActive("b", "direct", true)
	m.ProbeRejected()
	m.Pipeline(metrics.PipelineCounters{MSSClamped: 1})
	m.ConfigReload(true)
	m.RemovePath("b", "direct")
	m.RemovePeer("b")
}

// metricsWithEverySeries returns metrics with at least one series in every
// family (vectors without children are not gathered).
func metricsWithEverySeries() *metrics.Metrics {
	m := metrics.New()
	record(m, "b", "direct", "consumer")
	m.PathActive("b", "direct", true)
	m.ProbeRejected()
	m.ConfigReload(true)
	m.Redundant("b", 3, 300)
	m.RTTOutliers("b", "direct", 2)
	m.NetstackSource(func() metrics.NetstackCounters { return metrics.NetstackCounters{} })
	m.LiqoSource(func() metrics.LiqoCounters {
		return metrics.LiqoCounters{Resets: map[string]uint64{"b": 0}}
	})
	m.DNSLookup("ok")
	m.DNSEndpointChange()
	m.DNSQuery("A", "NOERROR")
	m.DNSQueryLimited()
	return m
}

// The outlier count is a per-path counter that goes with its path.
func TestRTTOutliersRemovedWithPath(t *testing.T) {
	m := metrics.New()
	m.RTTOutliers("b", "direct", 5)
	m.RTTOutliers("b", "consumer", 1)
	count := func() (n int, direct float64) {
		fams, err := m.Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fams {
			if f.GetName() != "relay_probe_rtt_outliers_total" {
				continue
			}
			for _, s := range f.GetMetric() {
				n++
				for _, l := range s.GetLabel() {
					if l.GetName() == "path" && l.GetValue() == "direct" {
						direct = s.GetCounter().GetValue()
					}
				}
			}
		}
		return n, direct
	}
	if n, d := count(); n != 2 || d != 5 {
		t.Fatalf("got %d series, direct %v; want 2 series, direct 5", n, d)
	}
	m.RemovePath("b", "direct")
	if n, d := count(); n != 1 || d != 0 {
		t.Fatalf("after RemovePath: %d series, direct %v; want only consumer's", n, d)
	}
	m.RemovePeer("b")
	if n, _ := count(); n != 0 {
		t.Fatalf("after RemovePeer: %d series, want none", n)
	}
}

func TestRedundantCumulativeAndRemoved(t *testing.T) {
	m := metrics.New()
	m.Redundant("b", 10, 1000)
	m.Redundant("b", 4, 400) // the Bind's counters restarted (peer re-added)
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		for _, s := range f.GetMetric() {
			if s.GetCounter() != nil {
				got[f.GetName()] = s.GetCounter().GetValue()
			}
		}
	}
	if got["relay_redundant_packets_total"] != 14 || got["relay_redundant_bytes_total"] != 1400 {
		t.Fatalf("got %v, want 14 packets and 1400 bytes (a reset carries on)", got)
	}
	m.RemovePeer("b")
	fams, _ = m.Registry().Gather()
	for _, f := range fams {
		if strings.HasPrefix(f.GetName(), "relay_redundant_") && len(f.GetMetric()) > 0 {
			t.Fatalf("%s still exported after RemovePeer", f.GetName())
		}
	}
}

// TestPathConfigured: a configured path has a relay_path_up series at 0
// before it ever comes up, and configuring it again keeps its value.
func TestPathConfigured(t *testing.T) {
	m := metrics.New()
	m.PathConfigured("b", "never-up")
	m.PathUp("b", "direct", true)
	m.PathConfigured("b", "direct")
	gatherCompare(t, m, `
# HELP relay_path_up 1 if the path to the peer is up (probes answered), else 0.
# TYPE relay_path_up gauge
relay_path_up{path="direct",peer="b"} 1
relay_path_up{path="never-up",peer="b"} 0
`, "relay_path_up")
}
