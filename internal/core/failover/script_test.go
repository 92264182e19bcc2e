package failover

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/*.txt with the actual output")

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// A script drives a Selector with fake time, one command per line; the
// lines starting with "= " after a command are its expected output (every
// output line must be expected, so a missing event fails too). '#' starts a
// comment. Commands:
//
//	set naive | set nodampening | set betterhold 1s | ... (before "peer")
//	peer P name[=bias] ...        SetPeer with the current settings
//	remove P                      RemovePeer
//	at 1.5s | after 200ms         set the fake clock (absolute from t0 / relative)
//	obs P path up 10ms [loss]     Observe up with SRTT and loss fraction
//	obs P path down               Observe down
//	tick                          Tick; prints one line per event
//	active P                      prints the active path or "unreachable"
//	state P path                  prints the state and the penalty
//	deadline                      prints NextDeadline relative to t0, or "none"
type script struct {
	sel *Selector
	set Settings
	now time.Time
}

func newScript() *script {
	return &script{sel: New(DefaultSettings()), set: DefaultSettings(), now: t0}
}

func (sc *script) exec(line string) ([]string, error) {
	f := strings.Fields(line)
	dur := func(i int) (time.Duration, error) {
		if i >= len(f) {
			return 0, fmt.Errorf("missing duration")
		}
		return time.ParseDuration(f[i])
	}
	switch f[0] {
	case "set":
		switch f[1] {
		case "naive":
			sc.set.Selector = SelectorNaive
		case "nodampening":
			sc.set.Dampening.Enabled = false
		case "betterhold", "failbackhold":
			d, err := dur(2)
			if err != nil {
				return nil, err
			}
			if f[1] == "betterhold" {
				sc.set.BetterHold = d
			} else {
				sc.set.FailbackHold = d
			}
		default:
			return nil, fmt.Errorf("unknown setting %q", f[1])
		}
	case "peer":
		var paths []PathSpec
		for _, a := range f[2:] {
			name, bias, _ := strings.Cut(a, "=")
			ps := PathSpec{Name: name}
			if bias != "" {
				d, err := time.ParseDuration(bias)
				if err != nil {
					return nil, err
				}
				ps.Bias = d
			}
			paths = append(paths, ps)
		}
		sc.sel.SetPeer(f[1], paths, sc.set)
	case "remove":
		sc.sel.RemovePeer(f[1])
	case "at", "after":
		d, err := dur(1)
		if err != nil {
			return nil, err
		}
		if f[0] == "at" {
			sc.now = t0.Add(d)
		} else {
			sc.now = sc.now.Add(d)
		}
	case "obs":
		o := Observation{Up: f[3] == "up"}
		if o.Up {
			d, err := dur(4)
			if err != nil {
				return nil, err
			}
			o.SRTT = d
			if len(f) > 5 {
				l, err := strconv.ParseFloat(f[5], 64)
				if err != nil {
					return nil, err
				}
				o.Loss = l
			}
		}
		sc.sel.Observe(f[1], f[2], o, sc.now)
	case "tick":
		var out []string
		for _, ev := range sc.sel.Tick(sc.now) {
			out = append(out, ev.String())
		}
		return out, nil
	case "active":
		if p, ok := sc.sel.Active(f[1]); ok {
			return []string{p}, nil
		}
		return []string{"unreachable"}, nil
	case "state":
		info, ok := sc.sel.PathInfo(f[1], f[2])
		if !ok {
			return []string{"unknown"}, nil
		}
		return []string{fmt.Sprintf("%s penalty=%.0f", info.State, info.Penalty)}, nil
	case "deadline":
		d := sc.sel.NextDeadline()
		if d.IsZero() {
			return []string{"none"}, nil
		}
		return []string{d.Sub(t0).String()}, nil
	default:
		return nil, fmt.Errorf("unknown command %q", f[0])
	}
	return nil, nil
}

// runScript executes text and returns it rewritten with the actual outputs,
// and the first mismatch (if any) as an error message.
func runScript(text string) (rewritten string, mismatch string, err error) {
	sc := newScript()
	var b strings.Builder
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		cmd := strings.TrimSpace(line)
		if j := strings.Index(cmd, "#"); j >= 0 {
			cmd = strings.TrimSpace(cmd[:j])
		}
		if strings.HasPrefix(cmd, "= ") || cmd == "=" {
			continue // an expectation without a command: dropped on rewrite
		}
		b.WriteString(line + "\n")
		if cmd == "" {
			continue
		}
		got, err := sc.exec(cmd)
		if err != nil {
			return "", "", fmt.Errorf("line %d %q: %w", i+1, cmd, err)
		}
		var want []string
		for i+1 < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i+1]), "=") {
			i++
			want = append(want, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lines[i]), "=")))
		}
		for _, g := range got {
			b.WriteString("= " + g + "\n")
		}
		if mismatch == "" && strings.Join(got, "\n") != strings.Join(want, "\n") {
			mismatch = fmt.Sprintf("line %d %q (t=%v):\n got: %q\nwant: %q", i+1, cmd, sc.now.Sub(t0), got, want)
		}
	}
	return b.String(), mismatch, nil
}

func checkScript(t *testing.T, text string) {
	t.Helper()
	_, mismatch, err := runScript(text)
	if err != nil {
		t.Fatal(err)
	}
	if mismatch != "" {
		t.Fatal(mismatch)
	}
}

// checkGolden runs a testdata file; with -update it rewrites the file.
func checkGolden(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out, mismatch, err := runScript(string(data))
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if out != string(data) {
			if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	if mismatch != "" {
		t.Fatalf("%s: %s (run with -update to rewrite after checking)", path, mismatch)
	}
}
