package podrunner

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// container is one container of a pod as the runner runs it. Its fields
// are guarded by the pod's lock.
type container struct {
	spec *corev1.Container
	init bool
	run  ContainerRun
	proc *process
	// startErr is why the current process failed to exec, if it did.
	startErr string
	// stopProbes ends the current run's probers.
	stopProbes context.CancelFunc
	startup    ProbeState
	readiness  ProbeState
	// killReason, set by a failed liveness or startup probe, asks the
	// next sync to stop the container; killing says it is being stopped.
	killReason string
	killing    bool
}

// podState is one pod as the runner runs it: its sandbox and containers.
type podState struct {
	key       string
	namespace string
	uid       types.UID
	// ctx ends when the pod is torn down; the pod's goroutines watch it.
	ctx    context.Context
	cancel context.CancelFunc

	mu   sync.Mutex
	pod  *corev1.Pod // the latest object seen
	sb   sandbox
	init []*container
	ctrs []*container
	// sandboxReady says the directory, network and volumes are set up.
	sandboxReady bool
	startTime    time.Time
	tokens       *tokenCache
	// events already sent, by reason and message, so that a sync that
	// repeats itself does not repeat them.
	events map[string]bool
	// terminating: the processes are being stopped for good (deletion,
	// orphan, shutdown); terminated: none is left.
	terminating, terminated bool
	// finished: the pod reached Succeeded or Failed and its sandbox is
	// gone; tornDown: the sandbox is gone.
	finished, tornDown bool
}

func newPodState(parent context.Context, key string, pod *corev1.Pod, dir podDir, tokens *tokenCache) *podState {
	ctx, cancel := context.WithCancel(parent)
	ps := &podState{key: key, namespace: pod.Namespace, uid: pod.UID, ctx: ctx, cancel: cancel, pod: pod.DeepCopy(),
		sb: sandbox{dir: dir}, tokens: tokens, events: map[string]bool{}}
	for i := range ps.pod.Spec.InitContainers {
		c := &ps.pod.Spec.InitContainers[i]
		ps.init = append(ps.init, &container{spec: c, init: true, run: ContainerRun{Name: c.Name, Image: c.Image}})
	}
	for i := range ps.pod.Spec.Containers {
		c := &ps.pod.Spec.Containers[i]
		ps.ctrs = append(ps.ctrs, &container{spec: c, run: ContainerRun{Name: c.Name, Image: c.Image}})
	}
	return ps
}

// all is every container, init containers first.
func (ps *podState) all() []*container { return append(append([]*container{}, ps.init...), ps.ctrs...) }

func (ps *podState) container(name string) *container {
	for _, c := range ps.all() {
		if c.spec.Name == name {
			return c
		}
	}
	return nil
}

// running says whether a process of the pod is left.
func (ps *podState) running() bool {
	for _, c := range ps.all() {
		if c.proc != nil {
			return true
		}
	}
	return false
}

// snapshot is the status input for the pod's current state.
func (ps *podState) snapshot(info PodInfo) PodRun {
	run := PodRun{SandboxReady: ps.sandboxReady, PodIPs: info.PodIPs, HostIPs: info.HostIPs, StartTime: ps.startTime}
	for _, c := range ps.init {
		cr := c.run
		cr.Started = cr.Running
		cr.Ready = initSucceeded(cr)
		run.Init = append(run.Init, cr)
	}
	for _, c := range ps.ctrs {
		cr := c.run
		cr.Started = cr.Running && (c.spec.StartupProbe == nil || c.startup.Result)
		cr.Ready = cr.Started && (c.spec.ReadinessProbe == nil || c.readiness.Result)
		run.Containers = append(run.Containers, cr)
	}
	return run
}

// setWaiting makes every container that is not running wait with reason
// and message (Unsupported, ContainerCreating with the setup error).
func (ps *podState) setWaiting(reason, msg string) {
	for _, c := range ps.all() {
		if !c.run.Running && (c.run.Exit == nil || reason == ReasonUnsupported) {
			c.run.WaitReason, c.run.WaitMessage = reason, msg
		}
	}
}

// gracePeriod is the pod's termination grace period: the one its deletion
// set, else its spec's, else the API's default of 30 s.
func gracePeriod(pod *corev1.Pod) time.Duration {
	switch {
	case pod.DeletionGracePeriodSeconds != nil:
		return time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		return time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	return 30 * time.Second
}

func stopSignal(c *corev1.Container) syscall.Signal {
	if c.Lifecycle != nil && c.Lifecycle.StopSignal != nil {
		if s, err := parseSignal(string(*c.Lifecycle.StopSignal)); err == nil {
			return s
		}
	}
	return syscall.SIGTERM
}

// containerMounts is the bind mounts of container c, parents before what
// they contain.
func containerMounts(pod *corev1.Pod, c *corev1.Container, dir podDir, env []string) ([]BindMount, error) {
	vols := map[string]*corev1.Volume{}
	for i := range pod.Spec.Volumes {
		vols[pod.Spec.Volumes[i].Name] = &pod.Spec.Volumes[i]
	}
	var out []BindMount
	for _, m := range c.VolumeMounts {
		v := vols[m.Name]
		if v == nil {
			return nil, fmt.Errorf("volumeMount %q: no such volume", m.Name)
		}
		src := dir.volume(v.Name)
		projected := v.Secret != nil || v.ConfigMap != nil || v.DownwardAPI != nil || v.Projected != nil
		if v.HostPath != nil {
			src = v.HostPath.Path
		}
		sub := m.SubPath
		if m.SubPathExpr != "" {
			sub = Expand(m.SubPathExpr, envLookup(env))
		}
		if sub != "" {
			clean := path.Clean(sub)
			if path.IsAbs(sub) || clean == ".." || strings.HasPrefix(clean, "../") {
				return nil, fmt.Errorf("volumeMount %q: subPath %q must be a relative path inside the volume", m.Name, sub)
			}
			src = filepath.Join(src, clean)
			if _, err := os.Lstat(src); os.IsNotExist(err) && !projected {
				if err := os.MkdirAll(src, 0o777); err != nil {
					return nil, fmt.Errorf("volumeMount %q: creating subPath %s: %w", m.Name, sub, err)
				}
			}
		}
		out = append(out, BindMount{Source: src, Target: m.MountPath, ReadOnly: m.ReadOnly || projected})
	}
	sort.SliceStable(out, func(i, j int) bool {
		return strings.Count(path.Clean(out[i].Target), "/") < strings.Count(path.Clean(out[j].Target), "/")
	})
	return out, nil
}
