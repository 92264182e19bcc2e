package podrunner

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// InitCommand is the hidden subcommand of the runner's binary that sets up
// a container and execs it (InitMain).
const InitCommand = "init"

// The file descriptors the runner passes to the init helper.
const (
	initStatusFD = 3 // write end of a pipe: an error message, or EOF at exec
	initNetnsFD  = 4 // the pod's network namespace, when NetNS is set
)

// oldRootDir is where the host's root stays reachable during the setup,
// between pivot_root and the container's exec.
const oldRootDir = "/.podrunner-oldroot"

// InitSpec is what the init helper needs to set up and exec one container.
// The runner writes it as JSON into the container's state directory.
type InitSpec struct {
	Hostname string `json:"hostname"`
	// Upper, Work and Root are the overlay's upper and work directories and
	// its mount point; the lower layer is the host's root.
	Upper string `json:"upper"`
	Work  string `json:"work"`
	Root  string `json:"root"`
	// NetNS says fd 4 is a network namespace to join (not for hostNetwork).
	NetNS      bool        `json:"netns"`
	Mounts     []BindMount `json:"mounts"`
	WorkingDir string      `json:"workingDir"`
	Argv       []string    `json:"argv"`
	Env        []string    `json:"env"`
}

// BindMount binds host path Source at Target inside the container.
type BindMount struct {
	Source   string `json:"source"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"readOnly"`
}

// ReadInitSpec reads a spec the runner wrote.
func ReadInitSpec(path string) (*InitSpec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the container spec: %w", err)
	}
	var s InitSpec
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("parsing the container spec %s: %w", path, err)
	}
	return &s, nil
}

// InitMain is the init helper: started by the runner in new mount, PID
// and UTS namespaces with the spec's path as its argument, it joins the
// pod's network namespace, builds the container's root and execs the
// container's command in place. It reports a failure on fd 3 and exits
// 127; on success fd 3 closes at exec (it is close-on-exec). It never
// returns.
func InitMain(specPath string) {
	// Namespaces joined with setns belong to the thread: the exec must
	// happen on the thread that joined.
	runtime.LockOSThread()
	unix.CloseOnExec(initStatusFD)
	status := os.NewFile(initStatusFD, "status")
	err := initContainer(specPath)
	fmt.Fprintf(status, "%v", err)
	fmt.Fprintf(os.Stderr, "podrunner init: %v\n", err)
	os.Exit(127)
}

func initContainer(specPath string) error {
	spec, err := ReadInitSpec(specPath)
	if err != nil {
		return err
	}
	if len(spec.Argv) == 0 {
		return errors.New("no command")
	}
	// Nothing mounted from here on may reach the runner's namespace.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making the mounts private: %w", err)
	}
	if spec.NetNS {
		if err := unix.Setns(initNetnsFD, unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("joining the pod's network namespace: %w", err)
		}
		unix.Close(initNetnsFD)
	}
	if err := unix.Sethostname([]byte(spec.Hostname)); err != nil {
		return fmt.Errorf("setting the host name %q: %w", spec.Hostname, err)
	}
	opts := fmt.Sprintf("lowerdir=/,upperdir=%s,workdir=%s", spec.Upper, spec.Work)
	if err := unix.Mount("overlay", spec.Root, "overlay", 0, opts); err != nil {
		return fmt.Errorf("mounting the root overlay at %s (%s): %w", spec.Root, opts, err)
	}
	if err := os.MkdirAll(filepath.Join(spec.Root, oldRootDir), 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", oldRootDir, err)
	}
	if err := unix.PivotRoot(spec.Root, filepath.Join(spec.Root, oldRootDir)); err != nil {
		return fmt.Errorf("pivot_root to %s: %w", spec.Root, err)
	}
	if err := unix.Chdir("/"); err != nil {
		return fmt.Errorf("chdir /: %w", err)
	}
	if err := mountSystem(); err != nil {
		return err
	}
	for _, m := range spec.Mounts {
		if err := bindMount(filepath.Join(oldRootDir, m.Source), m.Target, m.ReadOnly); err != nil {
			return err
		}
	}
	if err := unix.Unmount(oldRootDir, unix.MNT_DETACH); err != nil {
		return fmt.Errorf("unmounting the host's root: %w", err)
	}
	if err := os.Remove(oldRootDir); err != nil {
		return fmt.Errorf("removing %s: %w", oldRootDir, err)
	}
	dir := spec.WorkingDir
	if dir == "" {
		dir = "/"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating the working directory %s: %w", dir, err)
	}
	if err := unix.Chdir(dir); err != nil {
		return fmt.Errorf("chdir %s: %w", dir, err)
	}
	bin, err := lookPath(spec.Argv[0], spec.Env)
	if err != nil {
		return err
	}
	if err := unix.Exec(bin, spec.Argv, spec.Env); err != nil {
		return fmt.Errorf("exec %s: %w", bin, err)
	}
	return nil
}

// mountSystem mounts what a container's root has of its own: /proc of its
// PID namespace, /sys of its network namespace, the host's /dev, and
// private tmpfs at /dev/shm, /run and /tmp.
func mountSystem() error {
	type mnt struct {
		source, target, fstype string
		flags                  uintptr
		data                   string
	}
	const nosuid = unix.MS_NOSUID | unix.MS_NODEV
	for _, m := range []mnt{
		{"proc", "/proc", "proc", nosuid | unix.MS_NOEXEC, ""},
		{"sysfs", "/sys", "sysfs", nosuid | unix.MS_NOEXEC, ""},
		{filepath.Join(oldRootDir, "dev"), "/dev", "", unix.MS_BIND | unix.MS_REC, ""},
		{"shm", "/dev/shm", "tmpfs", nosuid, "mode=1777"},
		{"tmpfs", "/run", "tmpfs", nosuid, "mode=755"},
		{"tmpfs", "/tmp", "tmpfs", nosuid, "mode=1777"},
	} {
		if err := os.MkdirAll(m.target, 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", m.target, err)
		}
		if err := unix.Mount(m.source, m.target, m.fstype, m.flags, m.data); err != nil {
			return fmt.Errorf("mounting %s at %s: %w", m.fstype+m.source, m.target, err)
		}
	}
	return nil
}

// bindMount binds source (a file or a directory) at target, creating the
// target inside the container's root, read-only if asked.
func bindMount(source, target string, readOnly bool) error {
	fi, err := os.Stat(source)
	if err != nil {
		return fmt.Errorf("volume source for %s: %w", target, err)
	}
	if fi.IsDir() {
		if err := os.MkdirAll(target, 0o755); err != nil {
			return fmt.Errorf("creating mount point %s: %w", target, err)
		}
	} else {
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return fmt.Errorf("creating mount point %s: %w", target, err)
		}
		f, err := os.OpenFile(target, os.O_CREATE|os.O_RDONLY, 0o644)
		if err != nil {
			return fmt.Errorf("creating mount point %s: %w", target, err)
		}
		f.Close()
	}
	if err := unix.Mount(source, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("binding %s at %s: %w", strings.TrimPrefix(source, oldRootDir), target, err)
	}
	if readOnly {
		if err := unix.Mount("", target, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
			return fmt.Errorf("making %s read-only: %w", target, err)
		}
	}
	return nil
}

// lookPath finds name on the PATH of env, inside the current root.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path, _ := envLookup(env)("PATH")
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("executable %q not found in PATH %q", name, path)
}
