package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/control/admin"
	"github.com/liqo-relay/relay/internal/control/admin/admintest"
	"github.com/liqo-relay/relay/internal/core/status"
)

// fakeClock stands still but for Sleep, which moves it at once and
// records the wait.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) Sleep(_ context.Context, d time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.waits = append(f.waits, d)
	f.now = f.now.Add(d)
	return nil
}

// runFake is runCmd on a fake clock.
func runFake(t *testing.T, f *fakeClock, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	inv := &invocation{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, cmds: commands, clock: f}
	return dispatch(args, inv), out.String(), errb.String()
}

// fakeAdmin serves the admin API of a scripted source; deadlines receives
// how long each ping's context had left.
func fakeAdmin(t *testing.T, results []status.PingResult) (url string, src *admintest.Source, deadlines chan time.Duration) {
	src = &admintest.Source{}
	src.SetPing("provider-b", results)
	deadlines = make(chan time.Duration, 10)
	src.SetPingHook(func(ctx context.Context, _ string) error {
		if d, ok := ctx.Deadline(); ok {
			deadlines <- time.Until(d)
		}
		return nil
	})
	ts := httptest.NewServer(admin.NewServer("", src, nil, nil).Handler())
	t.Cleanup(ts.Close)
	return ts.URL, src, deadlines
}

func TestPingRounds(t *testing.T) {
	answered := []status.PingResult{
		{Path: "direct", RTTMs: 1.5, OK: true},
		{Path: "consumer", Error: "timeout"},
	}
	silent := []status.PingResult{{Path: "direct", Error: "timeout"}, {Path: "consumer", Error: "unresolved: no such host"}}
	for _, tc := range []struct {
		name      string
		results   []status.PingResult
		args      []string
		code      int
		rounds    int
		wantWait  time.Duration // what each ping's context may have left at most
		wantPaths []pathSummary
	}{
		{"one round", answered, nil, 0, 1, admin.MaxPingWait,
			[]pathSummary{{Path: "direct", Sent: 1, Answered: 1, MinMs: 1.5, AvgMs: 1.5, MaxMs: 1.5}, {Path: "consumer", Sent: 1, Error: "timeout"}}},
		{"three rounds", answered, []string{"--count", "3"}, 0, 3, admin.MaxPingWait,
			[]pathSummary{{Path: "direct", Sent: 3, Answered: 3, MinMs: 1.5, AvgMs: 1.5, MaxMs: 1.5}, {Path: "consumer", Sent: 3, Error: "timeout"}}},
		{"short timeout", answered, []string{"--timeout", "300ms", "--count=2"}, 0, 2, 300 * time.Millisecond, nil},
		{"no path answers", silent, []string{"--count", "2"}, 1, 2, admin.MaxPingWait,
			[]pathSummary{{Path: "direct", Sent: 2, Error: "timeout"}, {Path: "consumer", Sent: 2, Error: "unresolved: no such host"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, src, deadlines := fakeAdmin(t, tc.results)
			f := &fakeClock{now: time.Unix(1000, 0)}
			args := append([]string{"ping", "provider-b", "--admin", url, "--json"}, tc.args...)
			code, out, stderr := runFake(t, f, args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.code, stderr)
			}
			if tc.code != 0 && !strings.Contains(stderr, "no path to provider-b answered") {
				t.Errorf("stderr %q, want it to say no path answered", stderr)
			}
			var rep pingReport
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("ping --json printed %q: %v", out, err)
			}
			if n := len(src.Pinged()); n != tc.rounds || len(rep.Rounds) != tc.rounds {
				t.Errorf("%d pings reached the relay and %d rounds were reported, want %d", n, len(rep.Rounds), tc.rounds)
			}
			if len(f.waits) != tc.rounds-1 {
				t.Errorf("waited %d times between rounds, want %d", len(f.waits), tc.rounds-1)
			}
			for _, w := range f.waits {
				if w != pingRoundGap {
					t.Errorf("waited %v between rounds, want %v", w, pingRoundGap)
				}
			}
			for i := range tc.rounds {
				select {
				case left := <-deadlines:
					if left > tc.wantWait {
						t.Errorf("the relay's ping had %v to wait, want at most %v", left, tc.wantWait)
					}
				default:
					t.Errorf("round %d never reached the relay", i+1)
				}
			}
			if rep.Peer != "provider-b" || rep.TimeoutMs != float64(tc.wantWait.Milliseconds()) {
				t.Errorf("report peer %q, timeoutMs %v", rep.Peer, rep.TimeoutMs)
			}
			for i, r := range rep.Rounds {
				if len(r) != len(tc.results) || r[0].Path != "direct" {
					t.Errorf("round %d: %+v, want one result per path", i, r)
				}
			}
			if tc.wantPaths != nil && !equalSummaries(rep.Paths, tc.wantPaths) {
				t.Errorf("paths %+v, want %+v", rep.Paths, tc.wantPaths)
			}
		})
	}
}

func equalSummaries(a, b []pathSummary) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestPingText: each round is printed as it comes, and a summary follows
// several.
func TestPingText(t *testing.T) {
	url, _, _ := fakeAdmin(t, []status.PingResult{{Path: "direct", RTTMs: 2, OK: true}})
	code, out, stderr := runFake(t, &fakeClock{}, "ping", "--admin", url, "provider-b", "--count", "2")
	if code != 0 || strings.Count(out, "ping provider-b\n") != 2 || !strings.Contains(out, "provider-b: 2 rounds") ||
		!strings.Contains(out, "direct  2/2 answered  min 2.00ms  avg 2.00ms  max 2.00ms") {
		t.Errorf("exit %d, stderr %q, stdout:\n%s", code, stderr, out)
	}
	code, out, _ = runFake(t, &fakeClock{}, "ping", "--admin", url, "provider-b")
	if code != 0 || strings.Contains(out, "rounds") {
		t.Errorf("one round: exit %d, want no summary:\n%s", code, out)
	}
}

func TestSummarize(t *testing.T) {
	got := summarize([][]status.PingResult{
		{{Path: "a", RTTMs: 3, OK: true}, {Path: "b", Error: "timeout"}},
		{{Path: "a", Error: "timeout"}, {Path: "b", RTTMs: 5, OK: true}},
		{{Path: "a", RTTMs: 1, OK: true}, {Path: "c", Error: "timeout"}},
	})
	want := []pathSummary{
		{Path: "a", Sent: 3, Answered: 2, MinMs: 1, AvgMs: 2, MaxMs: 3},
		{Path: "b", Sent: 2, Answered: 1, MinMs: 5, AvgMs: 5, MaxMs: 5},
		{Path: "c", Sent: 1, Error: "timeout"},
	}
	if !equalSummaries(got, want) {
		t.Errorf("summarize = %+v, want %+v", got, want)
	}
}
