package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// relayBin is the relay binary built once for the subprocess tests.
var relayBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "relay-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	relayBin = filepath.Join(dir, "relay")
	build := exec.Command("go", "build", "-o", relayBin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building relay:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is a relay running as a subprocess, its stderr (the log) collected
// line by line.
type proc struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed when Wait has returned
	err    error         // Wait's result, set before exited is closed

	mu      sync.Mutex
	lines   []string
	changed chan struct{} // closed and replaced on every line
}

func startRelay(t *testing.T, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(relayBin, args...), exited: make(chan struct{}), changed: make(chan struct{})}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			close(p.changed)
			p.changed = make(chan struct{})
			p.mu.Unlock()
		}
	}()
	go func() {
		<-read // Wait closes the pipe: read it all first
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("relay log:\n%s", strings.Join(p.log(), "\n"))
		}
	})
	return p
}

func (p *proc) log() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.lines...)
}

// waitLine waits for a log line, from index from on, that matches re; it
// returns the line and the index after it.
func (p *proc) waitLine(t *testing.T, from int, re *regexp.Regexp, timeout time.Duration) (string, int) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		p.mu.Lock()
		lines, ch := p.lines, p.changed
		p.mu.Unlock()
		for i := from; i < len(lines); i++ {
			if re.MatchString(lines[i]) {
				return lines[i], i + 1
			}
		}
		from = max(from, len(lines))
		select {
		case <-ch:
		case <-p.exited:
			t.Fatalf("relay exited (%v) before logging %s", p.err, re)
		case <-deadline.C:
			t.Fatalf("no log line matching %s within %s", re, timeout)
		}
	}
}

func freeUDPPort(t *testing.T) int {
	t.Helper()
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

func httpStatus(t *testing.T, url string) int {
	t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// relayConfig is a netstack relay (no privileges) with one peer that is
// never there, its admin server on a port the kernel picks.
func relayConfig(port int, peers string) string {
	return fmt.Sprintf(`name: provider-a
privateKey: yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=
listenPort: %d
mode: netstack
addresses: [100.80.0.1/32]
exports: [10.244.1.0/24]
admin: 127.0.0.1:0
peers:%s
`, port, peers)
}

const peerB = `
  - name: provider-b
    publicKey: xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg=
    prefixes: [100.80.0.2/32, 10.244.2.0/24]
    paths:
      - {name: direct, endpoint: "127.0.0.1:9"}`

const peerC = `
  - name: provider-c
    publicKey: 2L86P6eDDKt76QN+xAcgNrAd9Sda9ajHpcIAzkSNbHo=
    prefixes: [100.80.0.3/32, 10.244.3.0/24]
    paths:
      - {name: direct, endpoint: "127.0.0.1:9"}`

var adminLine = regexp.MustCompile(`msg="admin server listening".* addr=(\S+)`)

// TestRunSubprocess runs `relay run` in netstack mode as a real process:
// it serves /healthz and /readyz, applies a valid config on SIGHUP, rejects
// an invalid one and keeps running, and exits 0 within 5 s of SIGTERM.
func TestRunSubprocess(t *testing.T) {
	dir := t.TempDir()
	port := freeUDPPort(t)
	cfgPath := writeFile(t, dir, "relay.yaml", relayConfig(port, peerB))
	p := startRelay(t, "run", "-c", cfgPath)

	line, next := p.waitLine(t, 0, adminLine, 20*time.Second)
	addr := adminLine.FindStringSubmatch(line)[1]
	base := "http://" + addr
	if code := httpStatus(t, base+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz: %d", code)
	}
	_, next = p.waitLine(t, next, regexp.MustCompile(`msg="relay up"`), 20*time.Second)
	if code := httpStatus(t, base+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz: %d", code)
	}

	// `relay status --json` against it: a top-level peers list with names.
	code, out, stderr := runCmd(t, "", "status", "--admin", addr, "--json")
	if code != 0 {
		t.Fatalf("status: exit %d: %s", code, stderr)
	}
	var st struct {
		Peers []struct {
			Name string `json:"name"`
		} `json:"peers"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || len(st.Peers) != 1 || st.Peers[0].Name != "provider-b" {
		t.Errorf("status --json: %v, %+v:\n%s", err, st, out)
	}

	// A valid change: a second peer.
	writeFile(t, dir, "relay.yaml", relayConfig(port, peerB+peerC))
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	_, next = p.waitLine(t, next, regexp.MustCompile(`msg="configuration applied".* peers=2`), 20*time.Second)

	// An invalid one: rejected, the relay keeps the running config.
	writeFile(t, dir, "relay.yaml", "name: provider-a\nbogus: true\n")
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	_, next = p.waitLine(t, next, regexp.MustCompile(`msg="reload rejected: keeping the running configuration".*bogus`), 20*time.Second)
	// And an immutable change: rejected by the agent.
	writeFile(t, dir, "relay.yaml", relayConfig(port+1, peerB+peerC))
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	_, _ = p.waitLine(t, next, regexp.MustCompile(`msg="reload rejected: keeping the running configuration".*listenPort`), 20*time.Second)
	if code := httpStatus(t, base+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz after rejected reloads: %d", code)
	}
	code, out, _ = runCmd(t, "", "status", "--admin", addr, "--json")
	if code != 0 || !strings.Contains(out, `"provider-c"`) {
		t.Errorf("status after rejected reloads: exit %d, want both peers still there:\n%s", code, out)
	}

	// The contract: exit 0 within 5 s of SIGTERM. The bound is the point
	// here, so it is asserted.
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	select {
	case <-p.exited:
		if p.err != nil {
			t.Errorf("relay exited with %v after SIGTERM, want 0", p.err)
		}
		t.Logf("exited %s after SIGTERM", time.Since(start).Round(time.Millisecond))
	case <-time.After(5 * time.Second):
		t.Fatal("relay still running 5 s after SIGTERM")
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Errorf("admin port %s still open after exit", addr)
	}
}
