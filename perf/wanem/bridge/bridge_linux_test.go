package bridge

import (
	"context"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/testbed/netns"
	"github.com/liqo-relay/relay/perf/wanem"
)

// rttMin parses the minimum RTT from ping's summary line.
var rttMin = regexp.MustCompile(`= ([0-9.]+)/[0-9.]+/[0-9.]+`)

// TestBridgeInNamespaces bridges two hosts (left, right) on one subnet
// through a bridge in a namespace of its own, and checks that frames pass
// unchanged (full-size, DF), that a delay shows up in the RTT, and that a
// cut drops everything until it is restored.
func TestBridgeInNamespaces(t *testing.T) {
	netns.RequireRoot(t)
	if _, err := exec.LookPath("ping"); err != nil {
		t.Skip("needs ping (iputils-ping)")
	}
	left, mid, right := netns.New(t, "wemL"), netns.New(t, "wemM"), netns.New(t, "wemR")
	la, ma := netns.Veth(t, left, "10.99.0.1/24", mid, "")
	mb, rb := netns.Veth(t, mid, "", right, "10.99.0.2/24")
	for _, e := range []struct {
		ns *netns.NS
		If string
	}{{left, la}, {right, rb}} {
		if err := e.ns.Do(func() error { return DisableOffloads(e.If) }); err != nil {
			t.Fatal(err)
		}
	}
	var br *Bridge
	if err := mid.Do(func() (err error) {
		br, err = New(Config{A: ma, B: mb, Seed: 1})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- br.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})

	ping := func(args ...string) (string, error) {
		return left.Output(append([]string{"ping", "-n", "-q"}, append(args, "10.99.0.2")...)...)
	}
	// Full-size frames with DF: nothing on the way fragments or truncates.
	if out, err := ping("-c", "3", "-i", "0.2", "-W", "5", "-s", "1472", "-M", "do"); err != nil {
		t.Fatalf("ping through a perfect wire: %v\n%s", err, out)
	}

	// 30 ms one way, left to right only: the RTT is at least 30 ms (a
	// lower bound that no busy machine can break).
	if err := br.Set(AB, wanem.Settings{Delay: wanem.Duration(30 * time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	out, err := ping("-c", "3", "-i", "0.2", "-W", "5")
	if err != nil {
		t.Fatalf("ping with delay: %v\n%s", err, out)
	}
	m := rttMin.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no RTT summary in %q", out)
	}
	if v, _ := strconv.ParseFloat(m[1], 64); v < 30 {
		t.Errorf("min RTT %v ms with 30 ms of delay", v)
	}

	if err := br.Set(BA, wanem.Settings{Cut: true}); err != nil {
		t.Fatal(err)
	}
	if out, err := ping("-c", "2", "-i", "0.2", "-W", "1"); err == nil {
		t.Fatalf("ping succeeded through a cut link:\n%s", out)
	}
	if err := br.Set(BA, wanem.Settings{}); err != nil {
		t.Fatal(err)
	}
	if out, err := ping("-c", "2", "-i", "0.2", "-W", "5"); err != nil {
		t.Fatalf("ping after restore: %v\n%s", err, out)
	}
	st := br.Stats()
	if st[BA].Frames["cut"] == 0 || st[AB].Frames["pass"] == 0 || st[AB].Oversize != 0 {
		t.Errorf("stats %+v", st)
	}
}
