package demo

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestDemoAlternatesRedundancy runs the demo for two cuts, short: the
// first meets the relays without redundancy, the second with redundancy
// duplicate, set live on both relays without an error; the summary names
// each cut's silences with its mode.
func TestDemoAlternatesRedundancy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the in-process federation for about 15 s")
	}
	var out, logs bytes.Buffer
	rep, err := Run(context.Background(), Options{
		Out: &out, Duration: 14 * time.Second, Warmup: 2 * time.Second, Cut: 3 * time.Second, Restore: 5 * time.Second,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelError})),
	})
	if err != nil {
		t.Fatal(err)
	}
	if logs.Len() > 0 {
		t.Errorf("errors while the demo ran:\n%s", logs.String())
	}
	if rep.Cuts < 2 || len(rep.Silences) != rep.Cuts {
		t.Fatalf("%d cuts, %d silences: want two cuts or more, one entry each\n%s", rep.Cuts, len(rep.Silences), out.String())
	}
	if rep.Silences[0].Redundancy != "off" || rep.Silences[1].Redundancy != "duplicate" {
		t.Errorf("redundancy per cut: %+v, want off then duplicate", rep.Silences)
	}
	if !strings.Contains(out.String(), "#2 (redundancy duplicate)") {
		t.Errorf("the summary does not name the second cut's redundancy:\n%s", out.String())
	}
	if rep.Echoed == 0 {
		t.Errorf("no echoes: the application never talked\n%s", out.String())
	}
}

// TestDemoRefusesARedundancyOfItsOwn: the demo sets redundancy itself.
func TestDemoRefusesARedundancyOfItsOwn(t *testing.T) {
	_, err := Run(context.Background(), Options{Health: "{redundancy: auto}"})
	if err == nil || !strings.Contains(err.Error(), "sets redundancy") {
		t.Fatalf("err %v", err)
	}
}
