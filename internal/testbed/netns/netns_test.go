package netns

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	vnetns "github.com/vishvananda/netns"
)

// listNS returns the namespaces `ip netns list` knows.
func listNS(t *testing.T) map[string]bool {
	t.Helper()
	out, err := exec.Command("ip", "netns", "list").CombinedOutput()
	if err != nil {
		t.Fatalf("ip netns list: %v: %s", err, out)
	}
	set := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			set[f[0]] = true
		}
	}
	return set
}

// TestNoLeftovers re-runs this test binary to execute helperFailing, which
// creates namespaces, a veth pair and a process and then fails; afterwards
// nothing it created may remain.
func TestNoLeftovers(t *testing.T) {
	RequireRoot(t)
	if os.Getenv(helperEnv) != "" {
		t.Skip("inside the helper run")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperFailing$", "-test.v")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("helper run should fail, it passed:\n%s", out)
	}
	var names []string
	pid := 0
	for _, line := range strings.Split(string(out), "\n") {
		if _, rest, ok := strings.Cut(line, "CREATED "); ok {
			f := strings.Fields(rest)
			if len(f) != 3 {
				t.Fatalf("bad helper line %q", line)
			}
			names = f[:2]
			pid, _ = strconv.Atoi(f[2])
		}
	}
	if len(names) != 2 || pid == 0 {
		t.Fatalf("helper did not report what it created:\n%s", out)
	}
	now := listNS(t)
	for _, n := range names {
		if now[n] {
			t.Errorf("namespace %s left behind", n)
		}
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process %d still alive after cleanup (kill 0: %v)", pid, err)
	}
}

const helperEnv = "NETNS_HELPER_FAILING"

// TestHelperFailing is run only by TestNoLeftovers: it fails on purpose
// after creating resources.
func TestHelperFailing(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("helper for TestNoLeftovers")
	}
	a, b := New(t, "leak"), New(t, "leak")
	Veth(t, a, "10.9.0.1/24", b, "10.9.0.2/24")
	p := a.Start(t, "sleeper", "sleep", "3600")
	fmt.Printf("CREATED %s %s %d\n", a.Name, b.Name, p.Pid())
	t.Fatal("failing on purpose: cleanup must still remove everything")
}

func TestVethCarriesUDP(t *testing.T) {
	a, b := New(t, "pa"), New(t, "pb")
	aIf, bIf := Veth(t, a, "10.9.1.1/24", b, "10.9.1.2/24")
	if len(aIf) > 15 || len(bIf) > 15 {
		t.Fatalf("veth names %q %q longer than 15", aIf, bIf)
	}
	if out := a.Run(t, "ip", "-o", "addr", "show", "dev", aIf); !strings.Contains(out, "10.9.1.1/24") {
		t.Fatalf("address missing on %s: %s", aIf, out)
	}
	udpRoundTrip(t, a, b, "10.9.1.2")
	if _, err := a.Output("ip", "link", "show", "dev", bIf); err == nil {
		t.Fatalf("%s visible in %s: the veth end should be in %s", bIf, a.Name, b.Name)
	}
}

func TestDoSwitchesAndRestores(t *testing.T) {
	n := New(t, "do")
	before, err := vnetns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer before.Close()
	target, err := vnetns.GetFromName(n.Name)
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	var inside bool
	if err := n.Do(func() error {
		cur, err := vnetns.Get()
		if err != nil {
			return err
		}
		defer cur.Close()
		inside = cur.Equal(target)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !inside {
		t.Error("fn did not run inside the namespace")
	}
	sentinel := errors.New("from fn")
	if err := n.Do(func() error { return sentinel }); !errors.Is(err, sentinel) {
		t.Errorf("Do returned %v, want fn's error", err)
	}
	// Do locks and unlocks the thread, so check on a locked one that we are back.
	after, err := vnetns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close()
	if !after.Equal(before) {
		t.Error("thread left in the namespace after Do")
	}
}

func TestProcStop(t *testing.T) {
	n := New(t, "proc")
	p := n.Start(t, "echo-then-sleep", "sh", "-c", "echo hello; exec sleep 3600")
	if err := p.Stop(syscall.SIGTERM); err != nil {
		t.Fatalf("Stop(SIGTERM) = %v, want nil (death by the sent signal is expected)", err)
	}
	select {
	case <-p.Done():
	default:
		t.Fatal("Done not closed after Stop")
	}
	if err := p.Stop(syscall.SIGTERM); err != nil {
		t.Errorf("second Stop = %v", err)
	}

	f := n.Start(t, "failing", "sh", "-c", "echo oops >&2; exit 3")
	<-f.Done()
	if err := f.Stop(syscall.SIGTERM); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("Stop of a process that exited 3 = %v", err)
	}
	if !strings.Contains(f.Output(), "oops") {
		t.Errorf("stderr not captured: %q", f.Output())
	}
}

func TestRunInside(t *testing.T) {
	n := New(t, "run")
	out := n.Run(t, "ip", "-o", "link", "show")
	if !strings.Contains(out, "lo") || !strings.Contains(out, "UP") {
		t.Fatalf("loopback not up in new namespace: %s", out)
	}
	if _, err := n.Output("false"); err == nil {
		t.Error("Output of a failing command returned no error")
	}
}

// udpRoundTrip sends a datagram from a to addr, on a socket listening in b.
func udpRoundTrip(t *testing.T, a, b *NS, addr string) {
	t.Helper()
	var ln net.PacketConn
	if err := b.Do(func() (err error) {
		ln, err = net.ListenPacket("udp4", net.JoinHostPort(addr, "0"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var c net.Conn
	if err := a.Do(func() (err error) {
		c, err = net.Dial("udp4", ln.LocalAddr().String())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("hi")); err != nil {
		t.Fatal(err)
	}
	// A bound on a hang, not a speed assertion: the datagram is local.
	_ = ln.SetReadDeadline(time.Now().Add(30 * time.Second))
	buf := make([]byte, 16)
	n, _, err := ln.ReadFrom(buf)
	if err != nil || string(buf[:n]) != "hi" {
		t.Fatalf("datagram over veth: %q, %v", buf[:n], err)
	}
}
