package podrunner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// initHandshakeTimeout bounds how long the init helper may take to set up
// mounts and exec: far more than it needs (milliseconds), short enough
// that a stuck helper does not hold a worker.
const initHandshakeTimeout = 30 * time.Second

// process is a running container process.
type process struct {
	pid     int
	started time.Time
	cmd     *exec.Cmd
	// done is closed when the process has exited and exit is set.
	done chan struct{}
	exit Termination
}

// startProcess starts a container: it rotates the log, writes spec to
// specPath and runs the runner's binary self as the init helper in new
// mount, PID and UTS namespaces, joined to netns when it is not nil. It
// returns once the helper has exec'd the container's command, or with the
// reason it could not; a returned process must be waited for (wait) either
// way.
func startProcess(self string, spec *InitSpec, specPath, logPath string, netns *os.File) (*process, error) {
	if _, err := os.Stat(logPath); err == nil {
		if err := os.Rename(logPath, logPath+".1"); err != nil {
			return nil, fmt.Errorf("keeping the previous log: %w", err)
		}
	}
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the log: %w", err)
	}
	defer logf.Close()
	b, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding the container spec: %w", err)
	}
	if err := os.WriteFile(specPath, b, 0o600); err != nil {
		return nil, fmt.Errorf("writing the container spec: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("creating the status pipe: %w", err)
	}
	defer r.Close()
	cmd := exec.Command(self, InitCommand, specPath)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = []*os.File{w}
	if netns != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, netns)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWUTS,
		Setsid:     true,
	}
	err = cmd.Start()
	w.Close()
	if err != nil {
		return nil, fmt.Errorf("starting the init helper: %w", err)
	}
	p := &process{pid: cmd.Process.Pid, cmd: cmd, started: time.Now(), done: make(chan struct{})}
	_ = r.SetReadDeadline(time.Now().Add(initHandshakeTimeout))
	msg, err := io.ReadAll(r)
	switch {
	case err != nil:
		_ = cmd.Process.Kill()
		return p, fmt.Errorf("waiting for the init helper: %w", err)
	case len(msg) > 0:
		return p, errors.New(strings.TrimSpace(string(msg)))
	}
	return p, nil
}

// wait waits for the process to exit, records how in p.exit and closes
// p.done.
func (p *process) wait() {
	err := p.cmd.Wait()
	t := Termination{PID: p.pid, StartedAt: p.started, FinishedAt: time.Now(), Reason: "Completed"}
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		switch {
		case ws.Signaled():
			t.Signal = int(ws.Signal())
			t.ExitCode = 128 + t.Signal
		default:
			t.ExitCode = ws.ExitStatus()
		}
	} else if err != nil {
		t.ExitCode = 128
		t.Message = err.Error()
	}
	if t.ExitCode != 0 {
		t.Reason = "Error"
	}
	p.exit = t
	close(p.done)
}

// signal sends sig to the process; a process that has exited is not an
// error.
func (p *process) signal(sig syscall.Signal) {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Signal(sig)
	}
}
