package e2e

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/status"
)

// The failover scenario: ten cuts of the direct path, each
// held for failoverHold and at least failoverSpacing apart (a path cut
// every 10 s or more slowly is never dampened with the default settings,
// see docs/config.md, so every cut is a plain failover and failback).
const (
	streamInterval  = 5 * time.Millisecond
	failoverCuts    = 10
	failoverHold    = 5 * time.Second
	failoverSpacing = 10 * time.Second
	// failbackSettle is the least time between the failback and the next
	// cut, so that each failback is measured in its own window.
	failbackSettle = time.Second

	// Generous bounds (the defaults detect a dead path in 300 ms): only a
	// broken relay misses them. Failback is slower than failbackHold (3 s)
	// suggests: the direct path's loss estimate covers its last 32 probes
	// (internal/core/health DefaultLossWindow) and the loss penalty (200 ms per 100%)
	// of one lost probe in 32 already outweighs the consumer's 5 ms bias, so
	// direct wins back only after 32 answered probes in a row; one late
	// answer on a busy machine starts the count again. Measured: about 4 s
	// typically, 7-13 s at a load of 9 on two cores. The direct path's
	// RTT on a starved machine reads hundreds of milliseconds now and
	// then; those samples are outliers that SRTT clips (internal/core/health
	// estimator.go), or a single one would keep SRTT above the 5 ms bias
	// for ~10 s (this test failed in CI that way: 34 ms ± 65 ms).
	switchWithin   = 5 * time.Second
	resumeWithin   = 5 * time.Second
	failbackWithin = 20 * time.Second

	// documentedInterruption is the documented figure at the default
	// settings: a dead active path is detected in 300 ms (interval 100 ms
	// × detectMultiplier 3, docs/failover.md), and perf/README.md reports
	// a median interruption of about 300 ms. The test fails when the
	// median interruption over the cuts is more than
	// interruptionRegression times that: generous enough for a busy
	// two-core machine, yet a regression from 300 ms to seconds fails.
	documentedInterruption = 300 * time.Millisecond
	interruptionRegression = 5
)

// checkInterruptionMedian reports a median interruption (ms, at the
// default settings) beyond interruptionRegression × documentedInterruption.
func checkInterruptionMedian(medianMs float64) error {
	limit := ms(interruptionRegression * documentedInterruption)
	if medianMs > limit {
		return fmt.Errorf("median interruption %.1f ms is more than %d× the documented %v (limit %.0f ms): failover has regressed",
			medianMs, interruptionRegression, documentedInterruption, limit)
	}
	return nil
}

// cutsEnv overrides the number of cuts (for a quick look while working on
// the test; the scenario is ten). healthEnv, if set, is written to
// both relays' config as the top-level `health:` value, e.g.
// '{interval: 50ms}', to measure other settings (the default is none: the
// relays' defaults, which the target is about).
const (
	cutsEnv   = "RELAY_E2E_CUTS"
	healthEnv = "RELAY_E2E_HEALTH"
)

// TestE2EFailover: a UDP stream from pod A to an echo server in pod B runs
// while the direct A-B path is blackholed and restored ten times. Each cut
// must move A's active path for B to `consumer` and the stream must resume;
// each restore must bring it back to `direct`. Every interruption is
// measured and reported (median, p95, max; the target is a median
// of at most 350 ms with the default settings, a figure to read), and
// written to $RELAY_E2E_RESULTS if set. With the default settings the test
// fails if the median is more than 5× the documented 300 ms
// (checkInterruptionMedian): a regression, not noise.
//
// The stream is echoed rather than one-way so that one clock measures it
// and so that it needs both relays to fail over, as a pod's TCP connection
// does. The cut is a silent blackhole with the link up (see blackhole.go):
// a link-down would flush routes and fail sends locally, an easier failure
// than a WAN path that just stops delivering.
func TestE2EFailover(t *testing.T) {
	cuts := failoverCuts
	if v := os.Getenv(cutsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number", cutsEnv, v)
		}
		cuts = n
	}
	top := NewTopology(t, Options{})
	// The namespaces' links have no latency and the kernel may lack netem:
	// the default consumer bias (5 ms) is what makes direct the better path
	// and gives failback a reason.
	spec, health := RelaySpec{}, "defaults"
	if v := os.Getenv(healthEnv); v != "" {
		spec.ExtraYAML, health = "health: "+v+"\n", v
	}
	ra, rb := top.Relays(t, spec, spec)
	ra.Start()
	rb.Start()
	ra.WaitActive("direct", 15*time.Second)
	rb.WaitActive("direct", 15*time.Second)

	startUDPEcho(t, top.B.Pod, fmt.Sprintf("%s:%d", top.B.PodIP, streamPort))
	stream := StartStream(t, top.A.Pod, fmt.Sprintf("%s:%d", top.B.PodIP, streamPort), streamInterval)
	if _, err := stream.WaitAnsweredAfter(time.Now(), 5*time.Second); err != nil {
		t.Fatalf("the stream does not flow before any cut: %v", err)
	}
	// A second of undisturbed stream: the machine's noise floor.
	time.Sleep(time.Second) // real: a second of undisturbed stream between real relays, the machine's noise floor

	method := BlackholeMethod()
	t.Logf("cutting the direct path %d times by %s, %v each, at least %v apart; stream every %v",
		cuts, method, failoverHold, failoverSpacing, streamInterval)
	cycles := make([]Cycle, 0, cuts)
	for i := 1; i <= cuts; i++ {
		// The cut takes effect when nft commits, near the end of its run:
		// times count from the command's return.
		top.BlackholeDirect(t)
		cut := time.Now()
		waitPath(t, ra, "consumer", switchWithin)
		seen := time.Since(cut)
		resumed, err := stream.WaitAnsweredAfter(cut, resumeWithin)
		if err != nil {
			t.Fatalf("cut %d: the stream did not resume over the consumer path: %v", i, err)
		}
		time.Sleep(time.Until(cut.Add(failoverHold))) // real: the link stays cut for failoverHold on the real testbed

		top.UnblackholeDirect(t)
		restore := time.Now()
		waitPath(t, ra, "direct", failbackWithin)
		back := time.Since(restore)
		// B fails back too, so that every cycle starts from the same state.
		waitPath(t, rb, "direct", failbackWithin)
		cycles = append(cycles, Cycle{Cut: cut, Restore: restore})
		t.Logf("cut %d: status showed consumer after %v, first echo sent after the cut came back after %v; direct again %v after the restore",
			i, seen.Round(time.Millisecond), resumed.Sub(cut).Round(time.Millisecond), back.Round(time.Millisecond))
		if i < cuts {
			next := cut.Add(failoverSpacing)
			if settled := time.Now().Add(failbackSettle); settled.After(next) {
				next = settled
			}
			time.Sleep(time.Until(next)) // real: the real relays fail back and settle before the next cut
		} else {
			time.Sleep(failbackSettle) // real: the real relays fail back and settle
		}
	}
	end := time.Now()
	stream.Stop()

	samples := stream.Samples()
	results := Analyze(samples, cycles, end)
	events := mustStatus(t, ra).Events
	unexpected := attachEvents(results, cycles, events, top.B.Name)
	peerView := make([]CutResult, len(results))
	for i := range peerView {
		peerView[i] = CutResult{SwitchMs: -1, FailbackMs: -1}
	}
	attachEvents(peerView, cycles, mustStatus(t, rb).Events, top.A.Name)
	var inter, lostPer, sw, psw, fb []float64
	for i := range results {
		r := &results[i]
		r.PeerSwitchMs = peerView[i].SwitchMs
		t.Logf("cut %2d: interruption %7.1f ms, lost %3d; relays A and B switched after %6.1f and %6.1f ms; A failed back %6.1f ms after the restore (interruption %5.1f ms, lost %d)",
			r.Index, r.InterruptionMs, r.Lost, r.SwitchMs, r.PeerSwitchMs, r.FailbackMs, r.FailbackInterruptionMs, r.FailbackLost)
		inter = append(inter, r.InterruptionMs)
		lostPer = append(lostPer, float64(r.Lost))
		if r.SwitchMs >= 0 {
			sw = append(sw, r.SwitchMs)
		}
		if r.PeerSwitchMs >= 0 {
			psw = append(psw, r.PeerSwitchMs)
		}
		if r.FailbackMs >= 0 {
			fb = append(fb, r.FailbackMs)
		}
	}
	out := FailoverResults{
		Test: t.Name(), IntervalMs: ms(streamInterval), Cut: "direct A-B path, " + method, Health: health,
		BaselineMs:   Baseline(samples, cycles[0].Cut),
		Interruption: Summarize(inter), Lost: Summarize(lostPer),
		Switch: Summarize(sw), PeerSwitch: Summarize(psw), Failback: Summarize(fb),
		Sent: len(samples.Sent), WriteErrors: samples.WriteErrs, Cuts: results,
		UnexpectedSwitches: unexpected, Dampened: dampened(events),
	}
	t.Logf("interruption over %d cuts: median %.1f ms, p95 %.1f ms, max %.1f ms (target: median <= 350 ms); noise floor before the cuts %.1f ms",
		len(results), out.Interruption.Median, out.Interruption.P95, out.Interruption.Max, out.BaselineMs)
	t.Logf("lost per cut: median %.0f, p95 %.0f, max %.0f (of one every %v); switch after the cut: relay A median %.1f ms (max %.1f), relay B median %.1f ms (max %.1f)",
		out.Lost.Median, out.Lost.P95, out.Lost.Max, streamInterval, out.Switch.Median, out.Switch.Max, out.PeerSwitch.Median, out.PeerSwitch.Max)
	// The one bound on the figures: only at the default settings, which
	// the documented figure is about.
	if health == "defaults" {
		if err := checkInterruptionMedian(out.Interruption.Median); err != nil {
			t.Error(err)
		}
	}
	if path, err := writeResults(out); err != nil {
		t.Error(err)
	} else if path != "" {
		t.Logf("results written to %s", path)
	}

	// Figures, not assertions: on a loaded machine a relay starved for
	// 300 ms declares a healthy path down (three missed probes), which is
	// what detection at that speed means. Such switches (and a dampening
	// they could cause) are reported with the event log to read them by.
	if unexpected > 0 || out.Dampened > 0 {
		t.Logf("relay A made %d switches that no cut or restore explains, %d dampened; its events:\n%s",
			unexpected, out.Dampened, formatEvents(events))
	}
	ra.Stop()
	rb.Stop()
}

// attachEvents fills in SwitchMs and FailbackMs from relay A's switch
// events for peer: the first switch to consumer for reason `down` after
// each cut (before the restore), and the first switch back to direct for
// reason `failback` after the restore. It returns how many of the peer's
// switches since the first cut it could not attribute that way.
func attachEvents(results []CutResult, cycles []Cycle, events []status.Event, peer string) (unexpected int) {
	if len(cycles) == 0 {
		return 0
	}
	for _, ev := range events {
		if ev.Peer == peer && !ev.At.Before(cycles[0].Cut) {
			unexpected++
		}
	}
	for i, c := range cycles {
		next := time.Time{}
		if i+1 < len(cycles) {
			next = cycles[i+1].Cut
		}
		for _, ev := range events {
			if ev.Peer != peer || ev.At.Before(c.Cut) || (!next.IsZero() && !ev.At.Before(next)) {
				continue
			}
			switch {
			case ev.To == "consumer" && ev.Reason == "down" && ev.At.Before(c.Restore) && results[i].SwitchMs < 0:
				results[i].SwitchMs = ms(ev.At.Sub(c.Cut))
				unexpected--
			case ev.To == "direct" && ev.Reason == "failback" && !ev.At.Before(c.Restore) && results[i].FailbackMs < 0:
				results[i].FailbackMs = ms(ev.At.Sub(c.Restore))
				unexpected--
			}
		}
	}
	return unexpected
}

// dampened counts switches for reason `dampened`.
func dampened(events []status.Event) int {
	n := 0
	for _, ev := range events {
		if ev.Reason == "dampened" {
			n++
		}
	}
	return n
}

// waitPath is Relay.WaitActive, but a timeout shows the relay's whole
// path table and event log.
func waitPath(t *testing.T, r *Relay, path string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		st, err := r.Status()
		if err == nil && len(st.Peers) == 1 && st.Peers[0].Reachable && st.Peers[0].ActivePath == path {
			return
		}
		if time.Now().After(deadline) {
			if err != nil {
				t.Fatalf("%s: peer not active on %q within %v: %v", r.Side.Name, path, within, err)
			}
			t.Fatalf("%s: peer not active on %q within %v:\n%s\nevents:\n%s", r.Side.Name, path, within, formatPaths(st), formatEvents(st.Events))
		}
		time.Sleep(100 * time.Millisecond) // real: polls a real relay's status
	}
}

func formatPaths(st *status.Status) string {
	var s string
	for _, p := range st.Peers {
		s += fmt.Sprintf("  peer %s: active %q reachable %v\n", p.Name, p.ActivePath, p.Reachable)
		for _, ps := range p.Paths {
			s += fmt.Sprintf("    %-8s %-8s rtt %.2f ms jitter %.2f ms loss %.2f bias %.0f ms penalty %.0f since %s\n",
				ps.Name, ps.State, ps.RTTMs, ps.JitterMs, ps.Loss, ps.Bias, ps.Penalty, ps.LastChange.Format("15:04:05.000"))
		}
	}
	return s
}

func formatEvents(events []status.Event) string {
	var s string
	for _, ev := range events {
		s += fmt.Sprintf("  %s %s: %q -> %q (%s)\n", ev.At.Format("15:04:05.000"), ev.Peer, ev.From, ev.To, ev.Reason)
	}
	return s
}

// restartWithin bounds the time from a peer's restart to traffic flowing
// again. WireGuard alone cannot meet it: the stale session's keepalives
// and data go unanswered, and its handshake is retried only after
// REKEY_TIMEOUT (5 s) plus jitter; the relay sees the new boot epoch in
// the first probe answer and starts a handshake at once. Generous against
// that (the expected figure is well under a second).
const restartWithin = 4 * time.Second

// TestE2EPeerRestart: while a stream runs from pod A to pod B, relay B is
// killed (kill -9) and started again with the same key. The host's own
// routes between the pods (Liqo's consumer path) are removed first, so the
// stream can only flow through the relays. The time from B's restart to
// the first echo of a datagram sent after it is measured and reported;
// only a generous bound is asserted.
func TestE2EPeerRestart(t *testing.T) {
	top := NewTopology(t, Options{})
	top.A.NS.Run(t, "ip", "route", "del", top.B.PodCIDR, "via", cA)
	top.B.NS.Run(t, "ip", "route", "del", top.A.PodCIDR, "via", cB)
	ra, rb := top.Relays(t, RelaySpec{}, RelaySpec{})
	ra.Start()
	rb.Start()
	ra.WaitActive("direct", 15*time.Second)
	rb.WaitActive("direct", 15*time.Second)

	startUDPEcho(t, top.B.Pod, fmt.Sprintf("%s:%d", top.B.PodIP, streamPort))
	stream := StartStream(t, top.A.Pod, fmt.Sprintf("%s:%d", top.B.PodIP, streamPort), streamInterval)
	if _, err := stream.WaitAnsweredAfter(time.Now(), 5*time.Second); err != nil {
		t.Fatalf("the stream does not flow before the restart: %v", err)
	}

	if err := rb.Proc.Stop(syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 relay B: %v", err)
	}
	killed := time.Now()
	// A notices (its probes go unanswered); the restart then starts from
	// a peer A knows to be gone, as after a real crash and reschedule.
	waitFor(t, 10*time.Second, "provider-a finds provider-b unreachable", func() (bool, string) {
		ps, err := ra.PeerStatus()
		if err != nil {
			return false, err.Error()
		}
		return !ps.Reachable, "active " + ps.ActivePath
	})
	if _, err := stream.WaitAnsweredAfter(time.Now(), 500*time.Millisecond); err == nil {
		t.Fatal("the stream still flows with relay B dead and no host routes: it does not go through the relays")
	}

	restart := time.Now()
	rb.Start()
	ready := time.Now()
	at, err := stream.WaitAnsweredAfter(restart, 15*time.Second)
	if err != nil {
		t.Fatalf("traffic did not resume after relay B's restart: %v", err)
	}
	took := at.Sub(restart)
	t.Logf("relay B restarted %v after kill -9; traffic flowed again %v after the restart (%v after its admin server answered)",
		restart.Sub(killed).Round(time.Millisecond), took.Round(time.Millisecond), at.Sub(ready).Round(time.Millisecond))
	if took > restartWithin {
		t.Errorf("traffic resumed %v after relay B's restart, want under %v (WireGuard's own retry is 5 s)", took.Round(time.Millisecond), restartWithin)
	}
	ra.WaitActive("direct", 15*time.Second)
	stream.Stop()
	ra.Stop()
	rb.Stop()
}
