// Package podrunner is a kubelet stand-in for the Liqo test lab: one
// Runner per node runs the pods bound to that node as plain Linux
// processes, without a container runtime or images.
//
// A node is a network namespace. The runner registers the Node object,
// renews its Lease, and keeps a bridge cbr0 holding the first address of
// the node's pod CIDR. Each pod gets a named network namespace
// (lp-<12 hex digits of its UID>, bound under /run/netns like `ip netns add`
// does), a veth pair whose pod end eth0 holds one address of the CIDR as a
// /32 with a default route via the bridge address, so that every packet a
// pod sends, also to a pod on the same node, is routed by the node
// namespace, where kube-proxy's rules apply, without depending on
// br_netfilter. hostNetwork pods run in the node namespace (and see the
// node's name as their host name). Links are made with iproute2's ip.
//
// Each container is a process started through a hidden subcommand of the
// runner's own binary ("init", see InitMain) in new mount, PID and UTS
// namespaces. It mounts an overlay whose lower layer is the host root and
// whose upper layer lies under the state directory, pivots into it, mounts a
// fresh /proc and /sys (after joining the pod's network namespace), binds
// /dev, mounts private tmpfs on /run, /tmp and /dev/shm, binds the pod's
// volumes and execs the container's command. A container's root file system
// is fresh on every start, as a container's writable layer is. The
// container's process is PID 1 of its PID namespace: as in a container
// without an init, it must handle SIGTERM itself, and everything it leaves
// behind dies with it.
//
// What the runner ignores, so that a pod that sets it still runs:
// resource requests and limits (reported through the downward API only),
// securityContext (everything runs as root, with every capability),
// imagePullPolicy and imagePullSecrets, nodeSelector, affinity and
// tolerations (the scheduler's business), mountPropagation HostToContainer
// (mounted as None), probe-level terminationGracePeriodSeconds and
// activeDeadlineSeconds. What it cannot honour it refuses: the pod stays
// Pending, every container waits with reason Unsupported and a message that
// names the field, and a Warning Event says the same (see Validate).
//
// Differences from the kubelet a user may notice:
//   - There is no kubelet API: kubectl logs, exec, attach and port-forward
//     cannot work. `podrunner logs` and `podrunner exec` read the state
//     directory instead.
//   - Images are a map from image reference (without tag or digest) to a
//     host binary that stands for the entrypoint; a container with a
//     command runs it from the host's file system.
//   - On start the runner removes what an earlier run left behind and
//     recreates every pod bound to the node: their containers start again
//     and restartCount starts from zero.
//   - The crash-loop back-off is the kubelet's: no delay before the first
//     restart, then 10 s doubling up to 5 min, reset after a container ran
//     for 10 min.
//   - Pod IPs are kept in memory; a restarted runner takes the pod's
//     previous IP again when it is free.
//   - A container's spec is read once, when the runner takes the pod up:
//     a later change of its image takes effect when the runner next
//     recreates the pod.
//   - The containers of a pod do not share a PID namespace; each sees its
//     own processes only.
//
// The runner is test tooling, not part of the relay.
package podrunner
