package podrunner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// netnsDir is where `ip netns` keeps its named network namespaces.
const netnsDir = "/run/netns"

// NetnsPath is the bind mount of named network namespace name.
func NetnsPath(name string) string { return filepath.Join(netnsDir, name) }

// inMountNS runs fn on a fresh OS thread that has joined the mount
// namespace mntNS, and discards the thread afterwards (the goroutine
// ends locked), so no other code runs in that namespace. The runner uses it
// to bind named network namespaces in the host's mount namespace, where
// every tool finds them: `ip netns exec` gives the runner a mount namespace
// of its own, whose mounts under /run/netns nobody else sees.
func inMountNS(mntNS *os.File, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		errc <- func() error {
			if err := unix.Unshare(unix.CLONE_FS); err != nil {
				return fmt.Errorf("unshare CLONE_FS: %w", err)
			}
			if err := unix.Setns(int(mntNS.Fd()), unix.CLONE_NEWNS); err != nil {
				return fmt.Errorf("joining mount namespace %s: %w", mntNS.Name(), err)
			}
			return fn()
		}()
	}()
	return <-errc
}

// CreateNetns creates network namespace name bound at /run/netns/name in
// the mount namespace hostMountNS, as `ip netns add` does, and returns a
// handle on it, so that the runner does not depend on seeing the bind
// mount. It fails if the name exists.
func CreateNetns(hostMountNS *os.File, name string) (*os.File, error) {
	var ns *os.File
	err := inMountNS(hostMountNS, func() error {
		if err := prepareNetnsDir(); err != nil {
			return err
		}
		p := NetnsPath(name)
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("creating %s: %w", p, err)
		}
		unix.Close(fd)
		// This thread's network namespace changes for good: inMountNS
		// discards the thread.
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			os.Remove(p)
			return fmt.Errorf("unshare CLONE_NEWNET: %w", err)
		}
		if err := unix.Mount("/proc/thread-self/ns/net", p, "none", unix.MS_BIND, ""); err != nil {
			os.Remove(p)
			return fmt.Errorf("binding the network namespace at %s: %w", p, err)
		}
		f, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			return fmt.Errorf("opening the new network namespace: %w", err)
		}
		ns = f
		return nil
	})
	return ns, err
}

// prepareNetnsDir makes /run/netns a shared mount point, as iproute2
// does, so that a namespace bound there shows in every mount namespace
// that copied it.
func prepareNetnsDir() error {
	if err := os.MkdirAll(netnsDir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", netnsDir, err)
	}
	err := unix.Mount("", netnsDir, "none", unix.MS_SHARED|unix.MS_REC, "")
	if errors.Is(err, unix.EINVAL) { // not a mount point yet
		if err := unix.Mount(netnsDir, netnsDir, "none", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("binding %s on itself: %w", netnsDir, err)
		}
		err = unix.Mount("", netnsDir, "none", unix.MS_SHARED|unix.MS_REC, "")
	}
	if err != nil {
		return fmt.Errorf("making %s shared: %w", netnsDir, err)
	}
	return nil
}

// DeleteNetns unbinds and removes named network namespace name in
// hostMountNS. A namespace that does not exist is not an error.
func DeleteNetns(hostMountNS *os.File, name string) error {
	return inMountNS(hostMountNS, func() error {
		p := NetnsPath(name)
		if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("unmounting %s: %w", p, err)
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("removing %s: %w", p, err)
		}
		return nil
	})
}
