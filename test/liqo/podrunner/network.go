package podrunner

import (
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// The node's links are set up with iproute2's ip, which the lab needs
// anyway (ip netns exec): netlink stays confined to the product's kernel
// shells (internal/depscheck).

// BridgeName is the node's pod bridge.
const BridgeName = "cbr0"

// podIfName is the pod's end of its veth pair.
const podIfName = "eth0"

// vethPrefix starts the name of every pod's host-side veth.
const vethPrefix = "vlp"

// ip runs `ip -batch -` with cmds in network namespace ns, or in the
// runner's when ns is nil. extra files are the child's fds 3, 4, ...
// Lines of cmds prefixed with "-" may fail (ip -force goes on).
func ip(ns *os.File, cmds []string, extra ...*os.File) error {
	run := func() error {
		cmd := exec.Command("ip", "-force", "-batch", "-")
		cmd.Stdin = strings.NewReader(strings.Join(cmds, "\n") + "\n")
		cmd.ExtraFiles = extra
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("ip %q: %w: %s", cmds, err, strings.TrimSpace(out.String()))
		}
		return nil
	}
	if ns == nil {
		return run()
	}
	errc := make(chan error, 1)
	go func() {
		// The fork below inherits this thread's network namespace. The
		// thread is never unlocked: it ends with the goroutine.
		runtime.LockOSThread()
		if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("joining the pod's network namespace: %w", err)
			return
		}
		errc <- run()
	}()
	return <-errc
}

// SetupBridge creates (or takes over) the bridge cbr0 in the runner's
// network namespace with gateway/prefix, brings it up and turns on IP
// forwarding. It turns off ICMP redirects, which would teach a pod to
// send to its neighbours directly, past the node's rules.
func SetupBridge(gateway netip.Addr, prefix netip.Prefix) error {
	if _, err := os.Stat("/sys/class/net/" + BridgeName); err != nil {
		if err := ip(nil, []string{"link add " + BridgeName + " type bridge"}); err != nil {
			return fmt.Errorf("creating bridge %s: %w", BridgeName, err)
		}
	}
	if err := ip(nil, []string{
		fmt.Sprintf("addr replace %s/%d dev %s", gateway, prefix.Bits(), BridgeName),
		"link set " + BridgeName + " up",
	}); err != nil {
		return fmt.Errorf("setting up bridge %s: %w", BridgeName, err)
	}
	for file, v := range map[string]string{
		"/proc/sys/net/ipv4/ip_forward":                             "1",
		"/proc/sys/net/ipv4/conf/all/send_redirects":                "0",
		"/proc/sys/net/ipv4/conf/" + BridgeName + "/send_redirects": "0",
	} {
		if err := os.WriteFile(file, []byte(v), 0o644); err != nil {
			return fmt.Errorf("setting %s: %w", file, err)
		}
	}
	return nil
}

// DeleteBridge removes cbr0, if it exists.
func DeleteBridge() error { return DeleteLink(BridgeName) }

// SetupPodNetwork links the pod namespace ns to cbr0: a veth pair whose
// host end hostIf is a port of the bridge and whose pod end is eth0 with
// ip/32, a route to gateway on the link and the default route via it, and
// the pod's loopback up.
func SetupPodNetwork(ns *os.File, hostIf string, addr, gateway netip.Addr) error {
	// fd 3 of the ip child is the pod's namespace.
	if err := ip(nil, []string{
		fmt.Sprintf("link add %s type veth peer name %s netns /proc/self/fd/3", hostIf, podIfName),
		fmt.Sprintf("link set %s master %s up", hostIf, BridgeName),
	}, ns); err != nil {
		return fmt.Errorf("creating veth %s: %w", hostIf, err)
	}
	if err := ip(ns, []string{
		"link set lo up",
		fmt.Sprintf("addr add %s/32 dev %s", addr, podIfName),
		"link set " + podIfName + " up",
		fmt.Sprintf("route add %s/32 dev %s scope link", gateway, podIfName),
		fmt.Sprintf("route add default via %s dev %s", gateway, podIfName),
	}); err != nil {
		return fmt.Errorf("configuring the pod's %s: %w", podIfName, err)
	}
	return nil
}

// DeleteLink removes link name in the runner's namespace, if it exists.
func DeleteLink(name string) error {
	if _, err := os.Stat("/sys/class/net/" + name); err != nil {
		return nil
	}
	if err := ip(nil, []string{"link del " + name}); err != nil {
		if _, serr := os.Stat("/sys/class/net/" + name); serr != nil {
			return nil // gone meanwhile (its peer's namespace went)
		}
		return fmt.Errorf("deleting %s: %w", name, err)
	}
	return nil
}

// podVeths lists the runner's namespace's links named like pods' veths.
func podVeths() []string {
	entries, _ := os.ReadDir("/sys/class/net")
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), vethPrefix) {
			out = append(out, e.Name())
		}
	}
	return out
}
