package podrunner

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PodNetnsName is the network namespace of the pod with uid:
// lp-<the first 12 hex digits of the UID>.
func PodNetnsName(uid types.UID) string { return "lp-" + uidHex(uid) }

// podVethName is the host end of the pod's veth pair (15 bytes at most).
func podVethName(uid types.UID) string { return vethPrefix + uidHex(uid) }

func uidHex(uid types.UID) string {
	h := strings.ReplaceAll(string(uid), "-", "")
	if _, err := hex.DecodeString(h); err != nil || len(h) < 12 {
		// Not a UUID (a test's UID): hex-encode it instead.
		h = hex.EncodeToString([]byte(uid))
	}
	if len(h) > 12 {
		h = h[:12]
	}
	return h
}

// sandbox is what a pod has beside its processes: its directory, network
// namespace, veth and address, and its memory-backed emptyDir mounts.
type sandbox struct {
	dir       podDir
	netnsName string // "" for hostNetwork
	netns     *os.File
	veth      string
	ip        netip.Addr
}

// setupSandbox creates the pod's directory and, unless it uses the host
// network, its network namespace (recorded in the state directory first,
// so that a crash leaves a trace) and veth pair with ip.
func (r *Runner) setupSandbox(pod *corev1.Pod, sb *sandbox, ipOwner string) error {
	meta := podMeta{Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID)}
	for _, c := range pod.Spec.InitContainers {
		meta.InitContainers = append(meta.InitContainers, c.Name)
	}
	for _, c := range pod.Spec.Containers {
		meta.Containers = append(meta.Containers, c.Name)
	}
	for _, d := range []string{string(sb.dir), filepath.Join(string(sb.dir), "containers"), filepath.Join(string(sb.dir), "volumes"), sb.dir.etc("")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", d, err)
		}
	}
	b, _ := json.Marshal(meta)
	if err := os.WriteFile(sb.dir.meta(), b, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", sb.dir.meta(), err)
	}
	if pod.Spec.HostNetwork {
		return nil
	}
	name := PodNetnsName(pod.UID)
	rec := r.state.netnsRecord(name)
	if err := os.MkdirAll(filepath.Dir(rec), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(rec), err)
	}
	if err := os.WriteFile(rec, []byte(pod.Namespace+"/"+pod.Name+"\n"), 0o644); err != nil {
		return fmt.Errorf("recording netns %s: %w", name, err)
	}
	// A namespace of this name left by a crash or a failed attempt
	// belongs to this pod: start over.
	if sb.netns != nil {
		sb.netns.Close()
		sb.netns = nil
	}
	if err := DeleteNetns(r.hostMnt, name); err != nil {
		return err
	}
	ns, err := CreateNetns(r.hostMnt, name)
	if err != nil {
		return fmt.Errorf("creating network namespace %s: %w", name, err)
	}
	sb.netnsName, sb.netns = name, ns
	sb.veth = podVethName(pod.UID)
	if err := DeleteLink(sb.veth); err != nil {
		return err
	}
	var want netip.Addr
	if a, err := netip.ParseAddr(pod.Status.PodIP); err == nil {
		want = a
	}
	r.ipMu.Lock()
	ip, err := r.ipam.Allocate(ipOwner, want)
	r.ipMu.Unlock()
	if err != nil {
		return fmt.Errorf("allocating the pod's address: %w", err)
	}
	sb.ip = ip
	if err := SetupPodNetwork(ns, sb.veth, ip, r.ipam.Gateway()); err != nil {
		return fmt.Errorf("setting up the pod's network: %w", err)
	}
	return nil
}

// teardownSandbox removes what setupSandbox and the volumes created; it
// runs when no process of the pod is left. Container logs stay.
func (r *Runner) teardownSandbox(sb *sandbox, ipOwner string) error {
	var errs []error
	if sb.veth != "" {
		if err := DeleteLink(sb.veth); err != nil {
			errs = append(errs, err)
		}
	}
	if sb.netns != nil {
		sb.netns.Close()
		sb.netns = nil
	}
	if sb.netnsName != "" {
		if err := DeleteNetns(r.hostMnt, sb.netnsName); err != nil {
			errs = append(errs, err)
		} else if err := os.Remove(r.state.netnsRecord(sb.netnsName)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
		sb.netnsName = ""
	}
	r.ipMu.Lock()
	r.ipam.Release(ipOwner)
	r.ipMu.Unlock()
	if err := unmountAll(string(sb.dir)); err != nil {
		errs = append(errs, err)
	}
	if err := removeExceptLogs(string(sb.dir)); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// prepareVolumes creates the pod's emptyDir volumes (a tmpfs for medium
// Memory) and checks its hostPath volumes against their type. It is
// idempotent.
func (r *Runner) prepareVolumes(pod *corev1.Pod, dir podDir) error {
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		switch {
		case v.EmptyDir != nil:
			p := dir.volume(v.Name)
			if err := os.MkdirAll(p, 0o777); err != nil {
				return fmt.Errorf("volume %q: %w", v.Name, err)
			}
			if v.EmptyDir.Medium == corev1.StorageMediumMemory {
				mounted, err := mountsUnder(p)
				if err != nil {
					return err
				}
				if len(mounted) == 0 {
					opts := "mode=1777"
					if l := v.EmptyDir.SizeLimit; l != nil && !l.IsZero() {
						opts += fmt.Sprintf(",size=%d", l.Value())
					}
					if err := unix.Mount("tmpfs", p, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
						return fmt.Errorf("volume %q: mounting tmpfs: %w", v.Name, err)
					}
				}
			}
		case v.HostPath != nil:
			if err := checkHostPath(v.HostPath); err != nil {
				return fmt.Errorf("volume %q: %w", v.Name, err)
			}
		}
	}
	return nil
}

// checkHostPath creates or checks a hostPath volume's path by its type.
func checkHostPath(hp *corev1.HostPathVolumeSource) error {
	t := corev1.HostPathUnset
	if hp.Type != nil {
		t = *hp.Type
	}
	fi, err := os.Stat(hp.Path)
	switch t {
	case corev1.HostPathUnset:
		return nil
	case corev1.HostPathDirectoryOrCreate:
		if err != nil {
			return os.MkdirAll(hp.Path, 0o755)
		}
		if !fi.IsDir() {
			return fmt.Errorf("hostPath %s is not a directory", hp.Path)
		}
		return nil
	case corev1.HostPathFileOrCreate:
		if err != nil {
			if err := os.MkdirAll(filepath.Dir(hp.Path), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(hp.Path, os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return err
			}
			return f.Close()
		}
		if fi.IsDir() {
			return fmt.Errorf("hostPath %s is a directory, not a file", hp.Path)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("hostPath %s: %w", hp.Path, err)
	}
	m := fi.Mode()
	ok := map[corev1.HostPathType]bool{
		corev1.HostPathDirectory: m.IsDir(),
		corev1.HostPathFile:      m.IsRegular(),
		corev1.HostPathSocket:    m&os.ModeSocket != 0,
		corev1.HostPathCharDev:   m&os.ModeCharDevice != 0,
		corev1.HostPathBlockDev:  m&os.ModeDevice != 0 && m&os.ModeCharDevice == 0,
	}[t]
	if !ok {
		return fmt.Errorf("hostPath %s is not of type %s", hp.Path, t)
	}
	return nil
}
