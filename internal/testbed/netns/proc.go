package netns

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// stopGrace bounds how long Stop waits for a signalled process before
// killing it: long enough for a clean drain on a loaded CI machine, short
// enough that a hung process cannot hang the test run.
const stopGrace = 10 * time.Second

// Proc is a long-running process started in a namespace by NS.Start.
type Proc struct {
	Name string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{} // closed when the process has been reaped
	err  error         // Wait's result, valid after done
	once sync.Once
	stop error // result of the first Stop
}

// Start starts a long-running command inside the namespace, in its own
// process group. Its stdout and stderr are captured and written to the test
// log if the test fails. Cleanup kills the process group if it is still
// running.
func (n *NS) Start(t testing.TB, name string, args ...string) *Proc {
	t.Helper()
	if len(args) == 0 {
		t.Fatalf("start %s: no command", name)
	}
	return start(t, name, "in "+n.Name, append([]string{"ip", "netns", "exec", n.Name}, args...), args)
}

// StartHost is Start in the test's own network namespace (the host), for
// a process that talks to the host's loopback.
func StartHost(t testing.TB, name string, args ...string) *Proc {
	t.Helper()
	if len(args) == 0 {
		t.Fatalf("start %s: no command", name)
	}
	return start(t, name, "on the host", args, args)
}

// start runs argv; args is the command as the failure log names it.
func start(t testing.TB, name, where string, argv, args []string) *Proc {
	t.Helper()
	p := &Proc{Name: name, out: &syncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Stdout = p.out
	p.cmd.Stderr = p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s %s: %v", name, where, err)
	}
	// The reaper: owned by p, exits when the process does (Cleanup makes
	// sure it does).
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.Stop(syscall.SIGKILL)
		if t.Failed() {
			t.Logf("output of %s (%s):\n%s", name, strings.Join(args, " "), p.Output())
		}
	})
	return p
}

// Pid returns the process id (also its process group id).
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Output returns what the process has written to stdout and stderr so far.
func (p *Proc) Output() string { return p.out.String() }

// Stop sends sig to the process group and waits for the process to exit, at
// most stopGrace, after which the group is killed. It returns the process's
// exit error, nil for a clean exit; an exit caused by sig itself is not an
// error. Only the first call signals; later ones return its result.
func (p *Proc) Stop(sig os.Signal) error {
	p.once.Do(func() {
		s, ok := sig.(syscall.Signal)
		if !ok {
			s = syscall.SIGKILL
		}
		select {
		case <-p.done:
		default:
			_ = syscall.Kill(-p.Pid(), s)
			timer := time.NewTimer(stopGrace)
			defer timer.Stop()
			select {
			case <-p.done:
			case <-timer.C:
				_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
				<-p.done
				p.stop = fmt.Errorf("%s: did not exit within %v of %v, killed", p.Name, stopGrace, s)
				return
			}
		}
		p.stop = exitErr(p.Name, p.err, s)
	})
	return p.stop
}

// exitErr turns Wait's error into Stop's: dying of the signal we sent is the
// expected outcome.
func exitErr(name string, err error, sent syscall.Signal) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == sent {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a
// process's stdout and stderr copiers and reads by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
