package podrunner

import (
	"maps"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestBackoff(t *testing.T) {
	var b Backoff
	var got []time.Duration
	for range 8 {
		got = append(got, b.Delay())
		b = b.Exited(time.Second).Restarted()
	}
	want := []time.Duration{0, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 300 * time.Second, 300 * time.Second}
	if !slices.Equal(got, want) {
		t.Errorf("delays %v, want %v", got, want)
	}
	if d := b.Exited(backoffReset).Delay(); d != 0 {
		t.Errorf("after a long run the delay is %v, want 0", d)
	}
}

func TestPlanStarts(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	exit := func(code int, ago time.Duration) *Termination {
		return &Termination{ExitCode: code, FinishedAt: t0.Add(-ago)}
	}
	inBackoff := Backoff{Level: 2} // 20 s
	for _, tc := range []struct {
		name       string
		policy     corev1.RestartPolicy
		init, ctrs []ContainerRun
		start      []string
		initStart  bool
		wait       map[string]time.Time
	}{
		{name: "fresh pod starts its first init container", policy: corev1.RestartPolicyAlways,
			init: []ContainerRun{{Name: "i1"}, {Name: "i2"}}, ctrs: []ContainerRun{{Name: "c"}},
			start: []string{"i1"}, initStart: true},
		{name: "next init container after success", policy: corev1.RestartPolicyAlways,
			init: []ContainerRun{{Name: "i1", Exit: exit(0, 0)}, {Name: "i2"}}, ctrs: []ContainerRun{{Name: "c"}},
			start: []string{"i2"}, initStart: true},
		{name: "running init container blocks", policy: corev1.RestartPolicyAlways,
			init: []ContainerRun{{Name: "i1", Running: true}}, ctrs: []ContainerRun{{Name: "c"}}},
		{name: "failed init container, Never", policy: corev1.RestartPolicyNever,
			init: []ContainerRun{{Name: "i1", Exit: exit(1, time.Hour)}}, ctrs: []ContainerRun{{Name: "c"}}},
		{name: "failed init container in back-off", policy: corev1.RestartPolicyOnFailure,
			init: []ContainerRun{{Name: "i1", Exit: exit(1, 5*time.Second), Backoff: inBackoff}}, ctrs: []ContainerRun{{Name: "c"}},
			wait: map[string]time.Time{"i1": t0.Add(15 * time.Second)}},
		{name: "containers after init", policy: corev1.RestartPolicyAlways,
			init: []ContainerRun{{Name: "i1", Exit: exit(0, 0)}}, ctrs: []ContainerRun{{Name: "a"}, {Name: "b", Running: true}},
			start: []string{"a"}},
		{name: "Always restarts a success, back-off passed", policy: corev1.RestartPolicyAlways,
			ctrs:  []ContainerRun{{Name: "a", Exit: exit(0, 30*time.Second), Backoff: inBackoff}, {Name: "b", Exit: exit(1, time.Second)}},
			start: []string{"a", "b"}},
		{name: "OnFailure keeps a success", policy: corev1.RestartPolicyOnFailure,
			ctrs:  []ContainerRun{{Name: "a", Exit: exit(0, time.Hour)}, {Name: "b", Exit: exit(2, time.Hour)}},
			start: []string{"b"}},
		{name: "Never restarts nothing", policy: corev1.RestartPolicyNever,
			ctrs: []ContainerRun{{Name: "a", Exit: exit(1, time.Hour)}}},
		{name: "crash loop waits", policy: corev1.RestartPolicyAlways,
			ctrs: []ContainerRun{{Name: "a", Exit: exit(137, time.Second), Backoff: inBackoff}},
			wait: map[string]time.Time{"a": t0.Add(19 * time.Second)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := PlanStarts(tc.policy, tc.init, tc.ctrs, t0)
			if !slices.Equal(p.Start, tc.start) || p.Init != tc.initStart {
				t.Errorf("start %v (init %v), want %v (init %v)", p.Start, p.Init, tc.start, tc.initStart)
			}
			if tc.wait == nil {
				tc.wait = map[string]time.Time{}
			}
			if !maps.Equal(p.Wait, tc.wait) {
				t.Errorf("wait %v, want %v", p.Wait, tc.wait)
			}
		})
	}
}

func TestProbeState(t *testing.T) {
	var s ProbeState
	var got []bool
	for _, ok := range []bool{true, false, false, true, true, false, false, false, true} {
		s = s.Observe(ok, 2, 3)
		got = append(got, s.Result)
	}
	want := []bool{false, false, false, false, true, true, true, false, false}
	if !slices.Equal(got, want) {
		t.Errorf("results %v, want %v", got, want)
	}
}
