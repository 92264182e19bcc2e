package podrunner

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// KubeletVersion is what the Node reports as its kubelet's version.
const KubeletVersion = "v1.37.2-podrunner"

// Node heartbeats. kube-controller-manager's node lifecycle controller
// marks a node NotReady (and taints it) when neither its Lease nor its
// Ready condition has been renewed for the node monitor grace period
// (40 s by default): a lease renewed every 10 s, as the kubelet does,
// survives three lost renewals, and the Ready condition's heartbeat every
// 30 s stays fresh for anyone reading it without costing a status write
// per lease renewal.
const (
	leaseDuration    = 40 * time.Second
	leaseRenewPeriod = 10 * time.Second
	statusPeriod     = 30 * time.Second
	leaseNamespace   = "kube-node-lease"
	maxPods          = 110
)

// NodeConfig describes the Node object the runner registers.
type NodeConfig struct {
	Name    string
	IP      string
	PodCIDR string
}

// nodeAgent registers the Node and keeps its Lease and status fresh.
type nodeAgent struct {
	client kubernetes.Interface
	cfg    NodeConfig
	log    *slog.Logger
	now    func() time.Time
}

// capacity is what the node offers: this machine's CPUs and memory, and
// the kubelet's default pod limit.
func capacity() corev1.ResourceList {
	mem := int64(0)
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) >= 2 && f[0] == "MemTotal:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				mem = kb * 1024
			}
		}
	}
	return corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(int64(runtime.NumCPU()), resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(mem, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(maxPods, resource.DecimalSI),
	}
}

func osImage() string {
	b, err := os.ReadFile("/etc/os-release")
	if err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "PRETTY_NAME="); ok {
				return strings.Trim(v, `"`)
			}
		}
	}
	return "Linux"
}

func kernelVersion() string {
	b, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return strings.TrimSpace(string(b))
}

// register creates the Node, or takes over an existing one: labels,
// pod CIDR and status. A pod CIDR that differs from the one the Node
// already has is an error (the API server refuses to change it).
func (a *nodeAgent) register(ctx context.Context) (*corev1.Node, error) {
	nodes := a.client.CoreV1().Nodes()
	var node *corev1.Node
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := nodes.Get(ctx, a.cfg.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			n = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: a.cfg.Name}}
			a.desiredSpec(n)
			n, err = nodes.Create(ctx, n, metav1.CreateOptions{})
			if err != nil {
				return fmt.Errorf("creating node %s: %w", a.cfg.Name, err)
			}
			node = n
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading node %s: %w", a.cfg.Name, err)
		}
		if n.Spec.PodCIDR != "" && n.Spec.PodCIDR != a.cfg.PodCIDR {
			return fmt.Errorf("node %s has pod CIDR %s, not %s: delete the Node first", a.cfg.Name, n.Spec.PodCIDR, a.cfg.PodCIDR)
		}
		a.desiredSpec(n)
		if node, err = nodes.Update(ctx, n, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("taking over node %s: %w", a.cfg.Name, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return node, a.updateStatus(ctx)
}

func (a *nodeAgent) desiredSpec(n *corev1.Node) {
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	n.Labels[corev1.LabelHostname] = a.cfg.Name
	n.Labels[corev1.LabelOSStable] = "linux"
	n.Labels[corev1.LabelArchStable] = runtime.GOARCH
	n.Spec.PodCIDR = a.cfg.PodCIDR
	n.Spec.PodCIDRs = []string{a.cfg.PodCIDR}
	n.Spec.Unschedulable = false
}

// updateStatus writes the node's status with a fresh Ready heartbeat.
func (a *nodeAgent) updateStatus(ctx context.Context) error {
	nodes := a.client.CoreV1().Nodes()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := nodes.Get(ctx, a.cfg.Name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("reading node %s: %w", a.cfg.Name, err)
		}
		now := metav1.NewTime(a.now())
		c := capacity()
		n.Status.Capacity, n.Status.Allocatable = c, c
		n.Status.Addresses = []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: a.cfg.IP},
			{Type: corev1.NodeHostName, Address: a.cfg.Name},
		}
		n.Status.NodeInfo = corev1.NodeSystemInfo{
			KubeletVersion:          KubeletVersion,
			OSImage:                 osImage(),
			KernelVersion:           kernelVersion(),
			OperatingSystem:         runtime.GOOS,
			Architecture:            runtime.GOARCH,
			ContainerRuntimeVersion: "podrunner://" + KubeletVersion,
		}
		for _, want := range []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "podrunner is posting ready status"},
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory"},
			{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure"},
			{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID"},
		} {
			want.LastHeartbeatTime = now
			want.LastTransitionTime = now
			found := false
			for i := range n.Status.Conditions {
				c := &n.Status.Conditions[i]
				if c.Type != want.Type {
					continue
				}
				found = true
				if c.Status == want.Status {
					want.LastTransitionTime = c.LastTransitionTime
				}
				*c = want
			}
			if !found {
				n.Status.Conditions = append(n.Status.Conditions, want)
			}
		}
		if _, err := nodes.UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("updating the status of node %s: %w", a.cfg.Name, err)
		}
		return nil
	})
}

// renewLease creates or renews the node's Lease.
func (a *nodeAgent) renewLease(ctx context.Context, node *corev1.Node) error {
	leases := a.client.CoordinationV1().Leases(leaseNamespace)
	now := metav1.NewMicroTime(a.now())
	dur := int32(leaseDuration / time.Second)
	l, err := leases.Get(ctx, a.cfg.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		l = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: a.cfg.Name, Namespace: leaseNamespace},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: &a.cfg.Name, LeaseDurationSeconds: &dur, RenewTime: &now},
		}
		if node != nil {
			l.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}}
		}
		if _, err := leases.Create(ctx, l, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating lease %s/%s: %w", leaseNamespace, a.cfg.Name, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading lease %s/%s: %w", leaseNamespace, a.cfg.Name, err)
	}
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime = &a.cfg.Name, &dur, &now
	if node != nil {
		l.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}}
	}
	if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("renewing lease %s/%s: %w", leaseNamespace, a.cfg.Name, err)
	}
	return nil
}

// heartbeat renews the lease every leaseRenewPeriod and the status every
// statusPeriod until ctx ends. Failures are logged; the next tick retries.
func (a *nodeAgent) heartbeat(ctx context.Context, node *corev1.Node) {
	lease := time.NewTicker(leaseRenewPeriod)
	defer lease.Stop()
	status := time.NewTicker(statusPeriod)
	defer status.Stop()
	if err := a.renewLease(ctx, node); err != nil {
		a.log.Warn("lease renewal failed", "err", err)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-lease.C:
			if err := a.renewLease(ctx, node); err != nil && ctx.Err() == nil {
				a.log.Warn("lease renewal failed", "err", err)
			}
		case <-status.C:
			if err := a.updateStatus(ctx); err != nil && ctx.Err() == nil {
				a.log.Warn("node status update failed", "err", err)
			}
		}
	}
}
