package podrunner

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPhase(t *testing.T) {
	ok := &Termination{ExitCode: 0}
	bad := &Termination{ExitCode: 1}
	for _, tc := range []struct {
		name       string
		policy     corev1.RestartPolicy
		init, ctrs []ContainerRun
		want       corev1.PodPhase
	}{
		{"nothing started", corev1.RestartPolicyAlways, nil, []ContainerRun{{Name: "a"}}, corev1.PodPending},
		{"init running", corev1.RestartPolicyAlways, []ContainerRun{{Running: true}}, []ContainerRun{{}}, corev1.PodPending},
		{"init failed, Never", corev1.RestartPolicyNever, []ContainerRun{{Exit: bad}}, []ContainerRun{{}}, corev1.PodFailed},
		{"init failed, back-off", corev1.RestartPolicyAlways, []ContainerRun{{Exit: bad, WaitReason: ReasonCrashLoopBackOff}}, []ContainerRun{{}}, corev1.PodPending},
		{"running", corev1.RestartPolicyAlways, []ContainerRun{{Exit: ok}}, []ContainerRun{{Running: true}, {Running: true}}, corev1.PodRunning},
		{"one waits", corev1.RestartPolicyAlways, nil, []ContainerRun{{Running: true}, {WaitReason: ReasonConfigError}}, corev1.PodPending},
		{"crash loop is Running", corev1.RestartPolicyAlways, nil, []ContainerRun{{Exit: bad, WaitReason: ReasonCrashLoopBackOff}}, corev1.PodRunning},
		{"all succeeded, OnFailure", corev1.RestartPolicyOnFailure, nil, []ContainerRun{{Exit: ok}, {Exit: ok}}, corev1.PodSucceeded},
		{"all succeeded, Never", corev1.RestartPolicyNever, nil, []ContainerRun{{Exit: ok}}, corev1.PodSucceeded},
		{"one failed, Never", corev1.RestartPolicyNever, nil, []ContainerRun{{Exit: ok}, {Exit: bad}}, corev1.PodFailed},
		{"one failed, OnFailure restarts", corev1.RestartPolicyOnFailure, nil, []ContainerRun{{Exit: ok}, {Exit: bad}}, corev1.PodRunning},
		{"stopped, Always", corev1.RestartPolicyAlways, nil, []ContainerRun{{Exit: ok}}, corev1.PodRunning},
		{"one running one done, Never", corev1.RestartPolicyNever, nil, []ContainerRun{{Running: true}, {Exit: bad}}, corev1.PodRunning},
	} {
		if got := Phase(tc.policy, tc.init, tc.ctrs); got != tc.want {
			t.Errorf("%s: phase %s, want %s", tc.name, got, tc.want)
		}
	}
}

func condition(st corev1.PodStatus, typ corev1.PodConditionType) corev1.PodCondition {
	for _, c := range st.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return corev1.PodCondition{}
}

func TestComputeStatus(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 500, time.UTC)
	pod := testPod()
	pod.Spec.InitContainers = []corev1.Container{{Name: "init"}}
	pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "side"})
	pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/ready"}}
	pod.Status.Conditions = []corev1.PodCondition{{Type: "example.com/ready", Status: corev1.ConditionTrue}}
	pod.Status.QOSClass = corev1.PodQOSBurstable

	run := PodRun{SandboxReady: true, PodIPs: []string{"10.244.1.5"}, HostIPs: []string{"192.168.0.10"}, StartTime: t0,
		Init: []ContainerRun{{Name: "init", Image: "busybox", Running: true, PID: 40, StartedAt: t0, Started: true}},
		Containers: []ContainerRun{
			{Name: "main", Image: "busybox", WaitReason: ReasonPodInitializing},
			{Name: "side", Image: "busybox", WaitReason: ReasonPodInitializing},
		}}
	st := ComputeStatus(pod, run, t0)
	if st.Phase != corev1.PodPending || st.PodIP != "10.244.1.5" || st.HostIP != "192.168.0.10" || len(st.PodIPs) != 1 || len(st.HostIPs) != 1 {
		t.Errorf("phase %s podIP %s hostIP %s", st.Phase, st.PodIP, st.HostIP)
	}
	if st.StartTime == nil || !st.StartTime.Time.Equal(t0.Truncate(time.Second)) {
		t.Errorf("startTime %v, want %v to the second", st.StartTime, t0)
	}
	if st.QOSClass != corev1.PodQOSBurstable {
		t.Error("the QOS class set by the API server is lost")
	}
	if c := condition(st, corev1.PodInitialized); c.Status != corev1.ConditionFalse || c.Message != "containers with incomplete status: [init]" {
		t.Errorf("Initialized = %+v", c)
	}
	if c := condition(st, corev1.PodScheduled); c.Status != corev1.ConditionTrue {
		t.Errorf("PodScheduled = %+v", c)
	}
	if c := condition(st, corev1.PodReadyToStartContainers); c.Status != corev1.ConditionTrue {
		t.Errorf("PodReadyToStartContainers = %+v", c)
	}
	if c := condition(st, corev1.ContainersReady); c.Status != corev1.ConditionFalse || c.Message != "containers with unready status: [main side]" {
		t.Errorf("ContainersReady = %+v", c)
	}
	ics := st.InitContainerStatuses[0]
	if ics.ContainerID != "podrunner://40" || ics.State.Running == nil || ics.State.Running.StartedAt.Time != t0.Truncate(time.Second) {
		t.Errorf("init status %+v", ics)
	}
	if w := st.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != ReasonPodInitializing {
		t.Errorf("main state %+v", st.ContainerStatuses[0].State)
	}

	// Later: init done, both containers ready.
	pod.Status = st
	t1 := t0.Add(time.Minute)
	run.Init[0] = ContainerRun{Name: "init", Image: "busybox", Exit: &Termination{ExitCode: 0, Reason: "Completed", PID: 40, StartedAt: t0, FinishedAt: t0.Add(time.Second)}, Ready: true}
	run.Containers = []ContainerRun{
		{Name: "main", Image: "busybox", Running: true, PID: 50, StartedAt: t1, Started: true, Ready: true},
		{Name: "side", Image: "busybox", Running: true, PID: 51, StartedAt: t1, Started: true, Ready: true,
			RestartCount: 1, Exit: &Termination{ExitCode: 137, Signal: 9, Reason: "Error", PID: 45}},
	}
	st2 := ComputeStatus(pod, run, t1)
	if st2.Phase != corev1.PodRunning {
		t.Errorf("phase %s", st2.Phase)
	}
	for _, typ := range []corev1.PodConditionType{corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		c := condition(st2, typ)
		if c.Status != corev1.ConditionTrue || !c.LastTransitionTime.Time.Equal(t1.Truncate(time.Second)) {
			t.Errorf("%s = %+v, want True since %v", typ, c, t1)
		}
	}
	if c := condition(st2, corev1.PodScheduled); !c.LastTransitionTime.Time.Equal(t0.Truncate(time.Second)) {
		t.Errorf("PodScheduled moved: %+v", c)
	}
	side := st2.ContainerStatuses[1]
	if side.RestartCount != 1 || side.LastTerminationState.Terminated == nil || side.LastTerminationState.Terminated.ExitCode != 137 ||
		side.LastTerminationState.Terminated.ContainerID != "podrunner://45" || !side.Ready || !*side.Started {
		t.Errorf("side status %+v", side)
	}
	if it := st2.InitContainerStatuses[0].State.Terminated; it == nil || it.Reason != "Completed" {
		t.Errorf("init state %+v", st2.InitContainerStatuses[0].State)
	}
	if c := condition(st2, "example.com/ready"); c.Status != corev1.ConditionTrue {
		t.Error("a readiness gate's condition set by someone else is lost")
	}

	// Same state later: the status does not change at all (no write).
	pod.Status = st2
	if st3 := ComputeStatus(pod, run, t1.Add(time.Hour)); !statusEqual(st2, st3) {
		t.Errorf("status changed without a change in state:\n%+v\n%+v", st2, st3)
	}

	// A readiness gate that is not True holds Ready.
	pod.Status.Conditions[0].Status = corev1.ConditionFalse
	st4 := ComputeStatus(pod, run, t1)
	if c := condition(st4, corev1.PodReady); c.Status != corev1.ConditionFalse || c.Reason != "ReadinessGatesNotReady" {
		t.Errorf("Ready with a False gate = %+v", c)
	}
}

func TestComputeStatusTerminal(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	pod := testPod()
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	run := PodRun{SandboxReady: true, Containers: []ContainerRun{{Name: "main", Exit: &Termination{ExitCode: 3, Reason: "Error", PID: 9}}}}
	st := ComputeStatus(pod, run, t0)
	if st.Phase != corev1.PodFailed {
		t.Fatalf("phase %s", st.Phase)
	}
	if c := condition(st, corev1.ContainersReady); c.Reason != "PodCompleted" {
		t.Errorf("ContainersReady %+v", c)
	}
	if term := st.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 3 || term.ContainerID != "podrunner://9" {
		t.Errorf("state %+v", st.ContainerStatuses[0].State)
	}
	// Terminal stays terminal, whatever the runner reports later.
	pod.Status = st
	run.Containers[0] = ContainerRun{Name: "main", Running: true}
	if st := ComputeStatus(pod, run, t0); st.Phase != corev1.PodFailed {
		t.Errorf("a Failed pod went %s", st.Phase)
	}
}

func TestComputeStatusUnsupported(t *testing.T) {
	pod := testPod()
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
	msg := `pod app/web cannot run on this node: volume "data" (spec.volumes[0]): persistentVolumeClaim volumes are not supported by the pod runner`
	run := PodRun{Containers: []ContainerRun{{Name: "main", WaitReason: ReasonUnsupported, WaitMessage: msg}}}
	st := ComputeStatus(pod, run, time.Now())
	if st.Phase != corev1.PodPending {
		t.Errorf("phase %s", st.Phase)
	}
	if w := st.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != ReasonUnsupported || w.Message != msg {
		t.Errorf("waiting %+v", st.ContainerStatuses[0].State)
	}
	if c := condition(st, corev1.PodReadyToStartContainers); c.Status != corev1.ConditionFalse {
		t.Errorf("PodReadyToStartContainers %+v", c)
	}
}
