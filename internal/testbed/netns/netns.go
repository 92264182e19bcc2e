// Package netns is the test harness for end-to-end tests that need real
// network namespaces: it creates uniquely named namespaces with `ip netns`,
// joins them with veth pairs, runs commands and long-running processes in
// them, and switches the calling OS thread into them for in-process code
// (vishvananda/netns). Everything is removed in t.Cleanup, also when the test
// fails, and a test that is not root is skipped by RequireRoot.
//
// It is for tests only: failures call t.Fatal, so call the functions from
// the test's goroutine.
package netns

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	vnetns "github.com/vishvananda/netns"
)

// RequireRoot skips the test when the process is not root, since creating
// namespaces needs CAP_SYS_ADMIN and CAP_NET_ADMIN.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (network namespaces): run as root, CI does")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs the ip binary (iproute2)")
	}
}

// NS is a network namespace created by New, known to `ip netns` by Name.
type NS struct {
	Name string
}

// maxPrefix keeps namespace names short enough to read in `ip netns list`.
const maxPrefix = 8

// New creates a namespace named prefix-<random>, brings its loopback up and
// registers a cleanup that kills every process still inside it and deletes
// it. prefix is truncated to 8 bytes.
func New(t testing.TB, prefix string) *NS {
	t.Helper()
	RequireRoot(t)
	if len(prefix) > maxPrefix {
		prefix = prefix[:maxPrefix]
	}
	n := &NS{Name: prefix + "-" + randHex(t, 4)}
	if out, err := exec.Command("ip", "netns", "add", n.Name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v: %s", n.Name, err, out)
	}
	t.Cleanup(func() { n.destroy(t) })
	n.Run(t, "ip", "link", "set", "lo", "up")
	return n
}

// destroy kills what runs inside and deletes the namespace.
func (n *NS) destroy(t testing.TB) {
	out, err := exec.Command("ip", "netns", "pids", n.Name).Output()
	if err == nil {
		for _, f := range strings.Fields(string(out)) {
			if pid, err := strconv.Atoi(f); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	if out, err := exec.Command("ip", "netns", "del", n.Name).CombinedOutput(); err != nil {
		t.Errorf("ip netns del %s: %v: %s", n.Name, err, out)
	}
}

// Run runs a command inside the namespace and returns its combined output;
// a failure fails the test with the output.
func (n *NS) Run(t testing.TB, args ...string) string {
	t.Helper()
	out, err := n.Output(args...)
	if err != nil {
		t.Fatalf("in %s: %v", n.Name, err)
	}
	return out
}

// Output runs a command inside the namespace and returns its combined
// output, and an error carrying that output when the command fails. Use it
// when failure is an expected outcome.
func (n *NS) Output(args ...string) (string, error) {
	if len(args) == 0 {
		return "", errors.New("no command")
	}
	cmd := exec.Command("ip", append([]string{"netns", "exec", n.Name}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// Do runs fn on a locked OS thread switched into the namespace and switches
// back afterwards. Code in fn sees the namespace for everything bound to the
// thread (sockets, netlink handles, TUN devices it creates); goroutines fn
// starts do not inherit it. If the thread cannot be switched back, it stays
// locked so the Go runtime discards it instead of reusing a thread in the
// wrong namespace.
func (n *NS) Do(fn func() error) error {
	runtime.LockOSThread()
	orig, err := vnetns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("get current netns: %w", err)
	}
	defer orig.Close()
	target, err := vnetns.GetFromName(n.Name)
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("open netns %s: %w", n.Name, err)
	}
	defer target.Close()
	if err := vnetns.Set(target); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter netns %s: %w", n.Name, err)
	}
	fnErr := fn()
	if err := vnetns.Set(orig); err != nil {
		// Leave the thread locked: it dies with this goroutine.
		return errors.Join(fnErr, fmt.Errorf("return from netns %s: %w", n.Name, err))
	}
	runtime.UnlockOSThread()
	return fnErr
}

// vethSeq numbers veth pairs so names stay unique within a test binary.
var vethSeq atomic.Uint32

// Veth creates a veth pair with one end in a and the other in b, assigns
// the addresses (CIDR strings such as "10.0.0.1/24"; empty for none), and
// brings both ends up. Offloads are left as the kernel sets them. The pair
// goes away with either namespace.
func Veth(t testing.TB, a *NS, aAddr string, b *NS, bAddr string) (aIf, bIf string) {
	t.Helper()
	// "v" + 6 hex + seq + "a": at most 15 bytes, the kernel's limit.
	base := fmt.Sprintf("v%s%d", randHex(t, 3), vethSeq.Add(1)%10000)
	aIf, bIf = base+"a", base+"b"
	if out, err := exec.Command("ip", "link", "add", aIf, "netns", a.Name, "type", "veth",
		"peer", "name", bIf, "netns", b.Name).CombinedOutput(); err != nil {
		t.Fatalf("create veth %s-%s between %s and %s: %v: %s", aIf, bIf, a.Name, b.Name, err, out)
	}
	for _, end := range []struct {
		ns         *NS
		name, addr string
	}{{a, aIf, aAddr}, {b, bIf, bAddr}} {
		if end.addr != "" {
			end.ns.Run(t, "ip", "addr", "add", end.addr, "dev", end.name, "nodad")
		}
		end.ns.Run(t, "ip", "link", "set", end.name, "up")
	}
	return aIf, bIf
}

// randHex returns n random bytes as hex.
func randHex(t testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("random name: %v", err)
	}
	return hex.EncodeToString(b)
}
