package podrunner

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// Enter runs argv in the namespaces (network, UTS, PID, mount) of the
// container whose process is pid, in dir with env, passing the standard
// streams through, forwarding SIGINT, SIGTERM and SIGHUP to it (as SIGKILL
// when killOnSignal is set, for a probe whose time is up), and returns its
// exit code (128+n for signal n).
func Enter(pid int, dir string, env, argv []string, killOnSignal bool) (int, error) {
	if len(argv) == 0 {
		return 0, errors.New("no command")
	}
	// The setns calls below belong to this thread, which forks the
	// command; it ends locked, so the runtime discards it.
	runtime.LockOSThread()
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		return 0, fmt.Errorf("unshare CLONE_FS: %w", err)
	}
	for _, ns := range []struct {
		name string
		flag int
	}{{"net", unix.CLONE_NEWNET}, {"uts", unix.CLONE_NEWUTS}, {"pid", unix.CLONE_NEWPID}, {"mnt", unix.CLONE_NEWNS}} {
		p := fmt.Sprintf("/proc/%d/ns/%s", pid, ns.name)
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return 0, fmt.Errorf("opening %s: %w", p, err)
		}
		err = unix.Setns(fd, ns.flag)
		unix.Close(fd)
		if err != nil {
			return 0, fmt.Errorf("joining %s: %w", p, err)
		}
	}
	bin, err := lookPath(argv[0], env)
	if err != nil {
		return 0, err
	}
	cmd := &exec.Cmd{
		Path:   bin,
		Args:   argv,
		Env:    env,
		Dir:    dir,
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		// No Pdeathsig: Go's check of it after the fork reads the parent's
		// PID, which is 0 in the container's PID namespace, and kills the
		// child at once.
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting %s: %w", bin, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case s := <-sigs:
			if killOnSignal {
				s = syscall.SIGKILL
			}
			_ = cmd.Process.Signal(s)
		case err := <-done:
			return exitCode(cmd.ProcessState, err)
		}
	}
}

// exitCode is a finished process's status as a shell reports it.
func exitCode(ps *os.ProcessState, err error) (int, error) {
	if ps == nil {
		return 0, err
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return ps.ExitCode(), nil
}

// EnterContainer runs argv in the container whose process is pid, in the
// working directory and with the environment of its spec (specPath, the
// InitSpec the runner wrote).
func EnterContainer(pid int, specPath string, argv []string, killOnSignal bool) (int, error) {
	spec, err := ReadInitSpec(specPath)
	if err != nil {
		return 0, err
	}
	dir := spec.WorkingDir
	if dir == "" {
		dir = "/"
	}
	return Enter(pid, dir, spec.Env, argv, killOnSignal)
}
