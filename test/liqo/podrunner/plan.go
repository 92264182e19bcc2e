package podrunner

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Plan is what the runner does next with a pod's containers.
type Plan struct {
	// Start lists the containers to start now: at most one init
	// container, or the regular containers that are due.
	Start []string
	// Init says Start names an init container.
	Init bool
	// Wait holds the containers in crash-loop back-off, with the time
	// they may start.
	Wait map[string]time.Time
}

// PlanStarts decides, at now, which containers to start: the init
// containers one after the other, each once the previous one succeeded;
// then every regular container that has not run yet, or has exited and
// is to be restarted under policy once its back-off has passed.
func PlanStarts(policy corev1.RestartPolicy, init, containers []ContainerRun, now time.Time) Plan {
	p := Plan{Wait: map[string]time.Time{}}
	for _, c := range init {
		if c.Running {
			return p
		}
		if c.Exit == nil {
			p.Start, p.Init = []string{c.Name}, true
			return p
		}
		if c.Exit.ExitCode == 0 {
			continue
		}
		if policy == corev1.RestartPolicyNever {
			return p
		}
		if at := c.Exit.FinishedAt.Add(c.Backoff.Delay()); now.Before(at) {
			p.Wait[c.Name] = at
			return p
		}
		p.Start, p.Init = []string{c.Name}, true
		return p
	}
	for _, c := range containers {
		switch {
		case c.Running:
		case c.Exit == nil:
			p.Start = append(p.Start, c.Name)
		case !restarts(policy, c.Exit.ExitCode):
		default:
			if at := c.Exit.FinishedAt.Add(c.Backoff.Delay()); now.Before(at) {
				p.Wait[c.Name] = at
			} else {
				p.Start = append(p.Start, c.Name)
			}
		}
	}
	return p
}

// restarts says whether a container that exited with code is restarted
// under policy.
func restarts(policy corev1.RestartPolicy, code int) bool {
	switch policy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return code != 0
	}
	return true
}
