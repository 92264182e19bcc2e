package podrunner

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Waiting reasons the runner reports, the kubelet's where it has one.
const (
	ReasonContainerCreating = "ContainerCreating"
	ReasonPodInitializing   = "PodInitializing"
	ReasonCrashLoopBackOff  = "CrashLoopBackOff"
	ReasonConfigError       = "CreateContainerConfigError"
	ReasonStartError        = "StartError"
	ReasonUnsupported       = "Unsupported"
)

// Termination is one exit of a container.
type Termination struct {
	ExitCode   int
	Signal     int
	Reason     string // Completed, Error
	Message    string
	StartedAt  time.Time
	FinishedAt time.Time
	PID        int
}

// ContainerRun is what the runner knows about one container: the input
// of the status computation.
type ContainerRun struct {
	Name    string
	Image   string
	ImageID string
	// Running is true between the container's start and its exit.
	Running   bool
	PID       int
	StartedAt time.Time
	// Exit is the container's last exit, PrevExit the one before.
	Exit, PrevExit *Termination
	// WaitReason, when not empty and the container is not running, says
	// why it waits to (re)start; a container neither running nor waiting
	// that has exited is terminated.
	WaitReason, WaitMessage string
	RestartCount            int
	// Started and Ready are reported as given: the runner sets Started
	// while a run's startup probe (if any) has succeeded, Ready while it
	// is started and its readiness probe (if any) succeeds, and an init
	// container's Ready once it has succeeded.
	Started, Ready bool
	// Backoff delays the next restart after Exit (PlanStarts).
	Backoff Backoff
}

// PodRun is what the runner knows about one pod.
type PodRun struct {
	// SandboxReady says the pod's network and directories are set up.
	SandboxReady bool
	PodIPs       []string
	HostIPs      []string
	StartTime    time.Time
	Init         []ContainerRun
	Containers   []ContainerRun
}

// apiTime is t as the API server stores it: to the second, so that a
// status read back compares equal to the one written.
func apiTime(t time.Time) metav1.Time {
	if t.IsZero() {
		return metav1.Time{}
	}
	return metav1.NewTime(t.Truncate(time.Second).UTC())
}

// ComputeStatus returns pod's status for run: phase, conditions (keeping
// the last transition time of a condition that did not change, and the
// conditions of types others own), addresses and container statuses. A
// pod that has reached Succeeded or Failed stays there.
func ComputeStatus(pod *corev1.Pod, run PodRun, now time.Time) corev1.PodStatus {
	old := pod.Status
	st := *old.DeepCopy()
	st.InitContainerStatuses = containerStatuses(run.Init)
	st.ContainerStatuses = containerStatuses(run.Containers)
	if old.Phase == corev1.PodSucceeded || old.Phase == corev1.PodFailed {
		st.Phase = old.Phase
	} else {
		st.Phase = Phase(pod.Spec.RestartPolicy, run.Init, run.Containers)
	}
	if st.Phase == corev1.PodPending || st.Phase == corev1.PodRunning {
		st.Reason, st.Message = "", ""
	}
	st.HostIP, st.HostIPs = first(run.HostIPs), nil
	for _, ip := range run.HostIPs {
		st.HostIPs = append(st.HostIPs, corev1.HostIP{IP: ip})
	}
	if len(run.PodIPs) > 0 {
		st.PodIP, st.PodIPs = run.PodIPs[0], nil
		for _, ip := range run.PodIPs {
			st.PodIPs = append(st.PodIPs, corev1.PodIP{IP: ip})
		}
	}
	if st.StartTime == nil && !run.StartTime.IsZero() {
		t := apiTime(run.StartTime)
		st.StartTime = &t
	}

	terminal := st.Phase == corev1.PodSucceeded || st.Phase == corev1.PodFailed
	set := func(c corev1.PodCondition) { setCondition(&st, c, now) }
	if getCondition(&st, corev1.PodScheduled) == nil {
		set(corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue})
	}
	set(corev1.PodCondition{Type: corev1.PodReadyToStartContainers, Status: boolStatus(run.SandboxReady && !terminal)})

	var incomplete []string
	for _, c := range run.Init {
		if !initSucceeded(c) {
			incomplete = append(incomplete, c.Name)
		}
	}
	if len(incomplete) == 0 || terminal && st.Phase == corev1.PodSucceeded {
		set(corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue})
	} else {
		set(corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionFalse,
			Reason: "ContainersNotInitialized", Message: "containers with incomplete status: [" + strings.Join(incomplete, " ") + "]"})
	}

	var unready []string
	for _, c := range run.Containers {
		if !c.Ready {
			unready = append(unready, c.Name)
		}
	}
	ready := corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionTrue}
	switch {
	case terminal:
		ready = corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: "PodCompleted"}
	case len(unready) > 0:
		ready.Status, ready.Reason = corev1.ConditionFalse, "ContainersNotReady"
		ready.Message = "containers with unready status: [" + strings.Join(unready, " ") + "]"
	}
	set(ready)
	podReady := ready
	podReady.Type = corev1.PodReady
	if podReady.Status == corev1.ConditionTrue {
		if msg := readinessGatesMessage(pod, &st); msg != "" {
			podReady.Status, podReady.Reason, podReady.Message = corev1.ConditionFalse, "ReadinessGatesNotReady", msg
		}
	}
	set(podReady)
	return st
}

// initSucceeded says an init container ran to completion with status 0.
func initSucceeded(c ContainerRun) bool {
	return !c.Running && c.WaitReason == "" && c.Exit != nil && c.Exit.ExitCode == 0
}

func readinessGatesMessage(pod *corev1.Pod, st *corev1.PodStatus) string {
	var msgs []string
	for _, g := range pod.Spec.ReadinessGates {
		c := getCondition(st, g.ConditionType)
		switch {
		case c == nil:
			msgs = append(msgs, fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", g.ConditionType))
		case c.Status != corev1.ConditionTrue:
			msgs = append(msgs, fmt.Sprintf("the status of pod readiness gate %q is not \"True\", but %v", g.ConditionType, c.Status))
		}
	}
	return strings.Join(msgs, ", ")
}

func boolStatus(b bool) corev1.ConditionStatus {
	if b {
		return corev1.ConditionTrue
	}
	return corev1.ConditionFalse
}

func getCondition(st *corev1.PodStatus, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

// setCondition puts c into st, keeping the old lastTransitionTime when the
// status did not change.
func setCondition(st *corev1.PodStatus, c corev1.PodCondition, now time.Time) {
	c.LastTransitionTime = apiTime(now)
	if old := getCondition(st, c.Type); old != nil {
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		c.LastProbeTime = old.LastProbeTime
		*old = c
		return
	}
	st.Conditions = append(st.Conditions, c)
}

func containerStatuses(runs []ContainerRun) []corev1.ContainerStatus {
	if len(runs) == 0 {
		return nil
	}
	out := make([]corev1.ContainerStatus, 0, len(runs))
	for _, c := range runs {
		started := c.Started
		cs := corev1.ContainerStatus{
			Name:         c.Name,
			Image:        c.Image,
			ImageID:      c.ImageID,
			Ready:        c.Ready,
			RestartCount: int32(c.RestartCount),
			Started:      &started,
		}
		switch {
		case c.Running:
			cs.ContainerID = containerID(c.PID)
			cs.State.Running = &corev1.ContainerStateRunning{StartedAt: apiTime(c.StartedAt)}
			cs.LastTerminationState = terminatedState(c.Exit)
		case c.WaitReason != "":
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: c.WaitReason, Message: c.WaitMessage}
			cs.LastTerminationState = terminatedState(c.Exit)
			if c.Exit != nil {
				cs.ContainerID = containerID(c.Exit.PID)
			}
		case c.Exit != nil:
			cs.ContainerID = containerID(c.Exit.PID)
			cs.State = terminatedState(c.Exit)
			cs.LastTerminationState = terminatedState(c.PrevExit)
		default:
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: ReasonContainerCreating}
		}
		out = append(out, cs)
	}
	return out
}

func containerID(pid int) string {
	if pid == 0 {
		return ""
	}
	return "podrunner://" + strconv.Itoa(pid)
}

func terminatedState(t *Termination) corev1.ContainerState {
	if t == nil {
		return corev1.ContainerState{}
	}
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode:    int32(t.ExitCode),
		Signal:      int32(t.Signal),
		Reason:      t.Reason,
		Message:     t.Message,
		StartedAt:   apiTime(t.StartedAt),
		FinishedAt:  apiTime(t.FinishedAt),
		ContainerID: containerID(t.PID),
	}}
}

// Phase is the pod phase the kubelet derives from its containers: Failed
// when an init container failed under restartPolicy Never, Pending while
// initialising or while a container waits for its first start, Running
// while one runs or will be restarted, Succeeded or Failed when all have
// exited for good.
func Phase(policy corev1.RestartPolicy, init, containers []ContainerRun) corev1.PodPhase {
	pendingInit, failedInit := 0, 0
	for _, c := range init {
		switch {
		case c.Running:
			pendingInit++
		case c.WaitReason != "":
			if c.Exit != nil && c.Exit.ExitCode != 0 {
				failedInit++
			} else {
				pendingInit++
			}
		case c.Exit != nil:
			if c.Exit.ExitCode != 0 {
				failedInit++
			}
		default:
			pendingInit++
		}
	}
	if failedInit > 0 && policy == corev1.RestartPolicyNever {
		return corev1.PodFailed
	}
	if pendingInit > 0 || failedInit > 0 {
		return corev1.PodPending
	}
	running, waiting, stopped, succeeded := 0, 0, 0, 0
	for _, c := range containers {
		switch {
		case c.Running:
			running++
		case c.WaitReason != "":
			if c.Exit != nil {
				stopped++
			} else {
				waiting++
			}
		case c.Exit != nil:
			stopped++
			if c.Exit.ExitCode == 0 {
				succeeded++
			}
		default:
			waiting++
		}
	}
	switch {
	case waiting > 0:
		return corev1.PodPending
	case running > 0:
		return corev1.PodRunning
	case stopped > 0:
		if policy == corev1.RestartPolicyAlways {
			return corev1.PodRunning
		}
		if stopped == succeeded {
			return corev1.PodSucceeded
		}
		if policy == corev1.RestartPolicyNever {
			return corev1.PodFailed
		}
		return corev1.PodRunning
	}
	return corev1.PodPending
}

// statusEqual compares statuses as the API server would store them.
func statusEqual(a, b corev1.PodStatus) bool { return equality.Semantic.DeepEqual(a, b) }
