package e2e

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/testbed/netns"
)

const echoPort = 7007

// startEcho runs a TCP echo server on addr inside n. The listening socket
// is created inside the namespace (netns.Do); accepted connections belong
// to it, so serving needs no namespace switch. Cleanup closes the listener
// and waits for every goroutine it started.
func startEcho(t *testing.T, n *netns.NS, addr string) {
	t.Helper()
	var ln net.Listener
	if err := n.Do(func() (err error) {
		ln, err = net.Listen("tcp4", addr)
		return err
	}); err != nil {
		t.Fatalf("echo listen on %s in %s: %v", addr, n.Name, err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = io.Copy(c, c)
				_ = c.Close()
				mu.Lock()
				delete(conns, c)
				mu.Unlock()
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
}

// echoOnce connects from inside n to dst, sends size random bytes and
// checks they come back unchanged. It returns how long the round trip took.
func echoOnce(n *netns.NS, dst string, size int) (time.Duration, error) {
	var c net.Conn
	d := net.Dialer{Timeout: 5 * time.Second}
	if err := n.Do(func() (err error) {
		c, err = d.Dial("tcp4", dst)
		return err
	}); err != nil {
		return 0, fmt.Errorf("dial %s from %s: %w", dst, n.Name, err)
	}
	defer c.Close()
	start := time.Now()
	_ = c.SetDeadline(start.Add(15 * time.Second))
	msg := make([]byte, size)
	_, _ = rand.Read(msg)
	werr := make(chan error, 1)
	go func() {
		_, err := c.Write(msg)
		werr <- err
	}()
	got := make([]byte, size)
	_, rerr := io.ReadFull(c, got)
	if err := errors.Join(<-werr, rerr); err != nil {
		return 0, fmt.Errorf("echo %d bytes with %s from %s: %w", size, dst, n.Name, err)
	}
	if !bytes.Equal(got, msg) {
		return 0, fmt.Errorf("echo with %s: bytes differ", dst)
	}
	return time.Since(start), nil
}

// mustEcho is echoOnce that fails the test, and logs the figure.
func mustEcho(t *testing.T, n *netns.NS, dst string, size int) {
	t.Helper()
	d, err := echoOnce(n, dst, size)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("TCP echo %s -> %s: %d bytes in %v", n.Name, dst, size, d.Round(time.Microsecond))
}

const whoamiPort = 7008

// startWhoami runs a TCP server on addr inside n that writes the address
// each client connects from and closes: it shows what translation did to
// the source.
func startWhoami(t *testing.T, n *netns.NS, addr string) {
	t.Helper()
	var ln net.Listener
	if err := n.Do(func() (err error) {
		ln, err = net.Listen("tcp4", addr)
		return err
	}); err != nil {
		t.Fatalf("whoami listen on %s in %s: %v", addr, n.Name, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			host, _, _ := net.SplitHostPort(c.RemoteAddr().String())
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			_, _ = io.WriteString(c, host)
			_ = c.Close()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
	})
}

// whoami connects from n to a startWhoami server and returns the address
// the server saw.
func whoami(t *testing.T, n *netns.NS, dst string) string {
	t.Helper()
	var c net.Conn
	d := net.Dialer{Timeout: 5 * time.Second}
	if err := n.Do(func() (err error) {
		c, err = d.Dial("tcp4", dst)
		return err
	}); err != nil {
		t.Fatalf("dial %s from %s: %v", dst, n.Name, err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("read from %s: %v", dst, err)
	}
	return string(b)
}

var rttRe = regexp.MustCompile(`rtt min/avg/max/mdev = ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) ms`)

// ping runs ping in n and returns its output; extra arguments go first.
func ping(n *netns.NS, dst string, count int, extra ...string) (string, error) {
	args := append([]string{"ping", "-n", "-c", strconv.Itoa(count), "-i", "0.2", "-W", "2"}, extra...)
	return n.Output(append(args, dst)...)
}

// mustPing pings and fails the test unless every echo is answered; it
// logs the RTT summary.
func mustPing(t *testing.T, n *netns.NS, dst string, count int) {
	t.Helper()
	out, err := ping(n, dst, count)
	if err != nil {
		t.Fatalf("ping %s from %s: %v", dst, n.Name, err)
	}
	if m := rttRe.FindStringSubmatch(out); m != nil {
		t.Logf("ping %s -> %s: %d/%d answered, rtt min/avg/max %s/%s/%s ms", n.Name, dst, count, count, m[1], m[2], m[3])
	}
	if !regexp.MustCompile(fmt.Sprintf(`%d packets transmitted, %d received`, count, count)).MatchString(out) {
		t.Fatalf("ping %s from %s lost packets:\n%s", dst, n.Name, out)
	}
}

// requirePing skips when ping (Debian iputils-ping) is missing; `make
// test` installs it.
func requirePing(t *testing.T) {
	t.Helper()
	netns.RequireRoot(t)
	if _, err := exec.LookPath("ping"); err != nil {
		t.Skip("needs ping (Debian iputils-ping; `make test` installs it)")
	}
}
