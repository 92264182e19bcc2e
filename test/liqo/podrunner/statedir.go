package podrunner

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/types"
)

// The state directory:
//
//	DIR/netns/<name>                   a network namespace the runner created
//	DIR/pods/<ns>_<name>_<uid>/        one pod
//	    pod.json                       its identity and container names
//	    <container>.log, .log.1        the container's output, and the previous run's
//	    <container>.pid                the container's PID
//	    <container>.start              the PID's start time (/proc/PID/stat), against PID reuse
//	    containers/<container>/        spec.json (InitSpec), upper/, work/, root/
//	    volumes/<volume>/              emptyDir, secret, configMap, ... contents
//	    etc/                           hosts, resolv.conf, hostname
type stateDir string

func (d stateDir) netnsRecord(name string) string { return filepath.Join(string(d), "netns", name) }

func (d stateDir) pods() string { return filepath.Join(string(d), "pods") }

// podDir is one pod's directory.
type podDir string

func (d stateDir) pod(ns, name string, uid types.UID) podDir {
	return podDir(filepath.Join(d.pods(), ns+"_"+name+"_"+string(uid)))
}

func (p podDir) log(c string) string       { return filepath.Join(string(p), c+".log") }
func (p podDir) pidFile(c string) string   { return filepath.Join(string(p), c+".pid") }
func (p podDir) startFile(c string) string { return filepath.Join(string(p), c+".start") }
func (p podDir) container(c string) string { return filepath.Join(string(p), "containers", c) }
func (p podDir) specFile(c string) string  { return filepath.Join(p.container(c), "spec.json") }
func (p podDir) volume(name string) string { return filepath.Join(string(p), "volumes", name) }
func (p podDir) etc(file string) string    { return filepath.Join(string(p), "etc", file) }
func (p podDir) meta() string              { return filepath.Join(string(p), "pod.json") }

// podMeta is pod.json: what `podrunner exec` and `logs` need to find a
// pod's containers.
type podMeta struct {
	Namespace      string   `json:"namespace"`
	Name           string   `json:"name"`
	UID            string   `json:"uid"`
	InitContainers []string `json:"initContainers"`
	Containers     []string `json:"containers"`
}

// FindContainer returns the directory of pod namespace/name in the state
// directory dir and the container to use: container when not empty, else
// the pod's first container. When several directories match (earlier
// pods of the same name), the newest wins.
func FindContainer(dir, namespace, name, container string) (pd string, c string, err error) {
	matches, _ := filepath.Glob(filepath.Join(stateDir(dir).pods(), namespace+"_"+name+"_*", "pod.json"))
	var best string
	var bestTime int64
	var meta podMeta
	for _, m := range matches {
		b, err := os.ReadFile(m)
		if err != nil {
			continue
		}
		var pm podMeta
		if json.Unmarshal(b, &pm) != nil || pm.Namespace != namespace || pm.Name != name {
			continue
		}
		fi, err := os.Stat(m)
		if err != nil {
			continue
		}
		if t := fi.ModTime().UnixNano(); best == "" || t > bestTime {
			best, bestTime, meta = filepath.Dir(m), t, pm
		}
	}
	if best == "" {
		return "", "", fmt.Errorf("no pod %s/%s in %s", namespace, name, dir)
	}
	if container == "" {
		if len(meta.Containers) == 0 {
			return "", "", fmt.Errorf("pod %s/%s has no containers", namespace, name)
		}
		return best, meta.Containers[0], nil
	}
	for _, n := range append(append([]string{}, meta.InitContainers...), meta.Containers...) {
		if n == container {
			return best, container, nil
		}
	}
	return "", "", fmt.Errorf("pod %s/%s has no container %q", namespace, name, container)
}

// ContainerPID returns the live PID of container c of the pod in pd.
func ContainerPID(pd, c string) (int, error) {
	p := podDir(pd)
	pid, err := readPID(p.pidFile(c), p.startFile(c))
	if err != nil {
		return 0, fmt.Errorf("container %q: %w", c, err)
	}
	return pid, nil
}

// SpecFile is the InitSpec of container c of the pod in pd.
func SpecFile(pd, c string) string { return podDir(pd).specFile(c) }

// LogFile is the log of container c of the pod in pd.
func LogFile(pd, c string) string { return podDir(pd).log(c) }

// errNotRunning says a recorded process is gone.
var errNotRunning = errors.New("not running")

// readPID reads a pid file and checks, with its start file, that the
// process still is the one recorded.
func readPID(pidFile, startFile string) (int, error) {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, errNotRunning
		}
		return 0, fmt.Errorf("reading %s: %w", pidFile, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("%s: bad pid %q", pidFile, b)
	}
	want, _ := os.ReadFile(startFile)
	got, err := procStartTime(pid)
	if err != nil || strings.TrimSpace(string(want)) != got {
		return 0, errNotRunning
	}
	return pid, nil
}

// writePID records pid and its start time.
func writePID(pidFile, startFile string, pid int) error {
	st, err := procStartTime(pid)
	if err != nil {
		return err
	}
	if err := os.WriteFile(startFile, []byte(st+"\n"), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", startFile, err)
	}
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", pidFile, err)
	}
	return nil
}

// procStartTime is field 22 of /proc/PID/stat, the process's start time
// in clock ticks since boot.
func procStartTime(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", fmt.Errorf("reading the start time of %d: %w", pid, err)
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return "", fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	return f[19], nil
}

// mountsUnder lists the mount points at or below dir in the runner's
// mount namespace, deepest first.
func mountsUnder(dir string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("reading the mount table: %w", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMount(fields[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out, sc.Err()
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unmountAll detaches every mount at or below dir.
func unmountAll(dir string) error {
	mps, err := mountsUnder(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, mp := range mps {
		if err := unix.Unmount(mp, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", mp, err))
		}
	}
	return errors.Join(errs...)
}

// removeExceptLogs removes pod directory pd but for its container logs,
// which stay for whoever debugs the pod later.
func removeExceptLogs(pd string) error {
	entries, err := os.ReadDir(pd)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("reading %s: %w", pd, err)
	}
	var errs []error
	for _, e := range entries {
		n := e.Name()
		if strings.HasSuffix(n, ".log") || strings.HasSuffix(n, ".log.1") {
			continue
		}
		if err := os.RemoveAll(filepath.Join(pd, n)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
