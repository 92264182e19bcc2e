package podrunner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// orphanGrace is the grace period of a pod whose object is gone (force
// deleted, or bound elsewhere): nobody waits for it, but its processes
// still deserve a SIGTERM.
const orphanGrace = 2 * time.Second

// configRetry is how soon a container whose environment or volumes
// cannot be built yet (a missing Secret or ConfigMap) is tried again,
// besides the informer event that usually comes first.
const configRetry = 10 * time.Second

// sync makes pod key's processes and status match its object. It returns
// when to sync again without an event (0: no need).
func (r *Runner) sync(ctx context.Context, key string) (time.Duration, error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, nil
	}
	pod, err := r.podLister.Pods(ns).Get(name)
	switch {
	case apierrors.IsNotFound(err):
		pod = nil
	case err != nil:
		return 0, err
	}
	if pod != nil && pod.Spec.NodeName != r.cfg.Node {
		pod = nil
	}
	r.mu.Lock()
	ps := r.pods[key]
	if pod == nil {
		delete(r.deleted, key)
	} else if r.deleted[key] == pod.UID {
		pod = nil // deleted by this runner; the informer lags
	}
	r.mu.Unlock()
	if ps != nil && (pod == nil || pod.UID != ps.uid) {
		// The object is gone or is another pod of the same name: the
		// old pod ends first.
		if done := r.finishOrphan(ps); !done {
			return 0, nil
		}
		ps = nil
	}
	if pod == nil {
		return 0, nil
	}
	if ps == nil {
		ps = newPodState(context.Background(), key, pod, r.state.pod(pod.Namespace, pod.Name, pod.UID), newTokenCache(r.client))
		r.mu.Lock()
		r.pods[key] = ps
		r.mu.Unlock()
	}
	return r.syncPod(ctx, ps, pod)
}

// finishOrphan stops a pod whose object is gone and reports whether it has
// been torn down and forgotten.
func (r *Runner) finishOrphan(ps *podState) bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if !ps.terminating {
		r.terminate(ps, orphanGrace)
		return false
	}
	if !ps.terminated {
		return false
	}
	r.teardown(ps)
	r.forget(ps)
	return true
}

func (r *Runner) forget(ps *podState) {
	r.mu.Lock()
	if r.pods[ps.key] == ps {
		delete(r.pods, ps.key)
	}
	r.mu.Unlock()
}

// teardown removes a pod's sandbox once no process is left. Called with
// ps.mu held.
func (r *Runner) teardown(ps *podState) {
	if ps.tornDown {
		return
	}
	ps.tornDown = true
	ps.cancel()
	if err := r.teardownSandbox(&ps.sb, ps.key+"/"+string(ps.uid)); err != nil {
		r.log.Error("tearing down pod", "pod", ps.key, "err", err)
	}
}

func (r *Runner) podInfo(ps *podState, pod *corev1.Pod) PodInfo {
	hostname, _ := PodHostname(pod, r.cfg.ClusterDomain)
	info := PodInfo{Hostname: hostname, HostIPs: []string{r.cfg.NodeIP.String()}, Allocatable: r.alloc}
	switch {
	case pod.Spec.HostNetwork:
		info.Hostname = r.cfg.Node
		info.PodIPs = []string{r.cfg.NodeIP.String()}
	case ps.sb.ip.IsValid():
		info.PodIPs = []string{ps.sb.ip.String()}
	}
	return info
}

func (r *Runner) syncPod(ctx context.Context, ps *podState, pod *corev1.Pod) (time.Duration, error) {
	ps.mu.Lock()
	if pod.DeletionTimestamp != nil {
		defer ps.mu.Unlock()
		if !ps.terminating {
			r.terminate(ps, gracePeriod(pod))
			return 0, nil
		}
		if !ps.terminated {
			return 0, nil
		}
		r.teardown(ps)
		uid := pod.UID
		err := r.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
			GracePeriodSeconds: new(int64),
			Preconditions:      &metav1.Preconditions{UID: &uid},
		})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return 0, fmt.Errorf("deleting pod %s: %w", ps.key, err)
		}
		r.log.Info("pod deleted", "pod", ps.key)
		r.mu.Lock()
		r.deleted[ps.key] = ps.uid
		r.mu.Unlock()
		r.forget(ps)
		return 0, nil
	}
	if ps.finished || ps.terminating {
		ps.mu.Unlock()
		return 0, nil
	}
	if p := pod.Status.Phase; (p == corev1.PodSucceeded || p == corev1.PodFailed) && !ps.sandboxReady {
		// Finished before this runner took over: nothing to run again.
		ps.finished = true
		ps.mu.Unlock()
		return 0, nil
	}
	ps.pod = pod.DeepCopy()
	after, err := r.syncLocked(ctx, ps)
	info := r.podInfo(ps, ps.pod)
	run := ps.snapshot(info)
	ps.mu.Unlock()

	if werr := r.writeStatus(ctx, pod, ps.uid, run); werr != nil {
		return 0, errors.Join(err, werr)
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if !ps.finished {
		if phase := Phase(pod.Spec.RestartPolicy, run.Init, run.Containers); phase == corev1.PodSucceeded || phase == corev1.PodFailed {
			// Done for good: free the sandbox, keep the status.
			if !ps.running() {
				ps.finished = true
				r.teardown(ps)
				r.log.Info("pod finished", "pod", ps.key, "phase", phase)
			}
		}
	}
	return after, err
}

// syncLocked sets up the pod and starts what is due. Called with ps.mu
// held.
func (r *Runner) syncLocked(ctx context.Context, ps *podState) (time.Duration, error) {
	pod := ps.pod
	now := r.now()
	if errs := Validate(pod, r.cfg.Images); len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		msg := fmt.Sprintf("pod %s/%s cannot run on this node: %s", pod.Namespace, pod.Name, strings.Join(msgs, "; "))
		ps.setWaiting(ReasonUnsupported, msg)
		r.eventOnce(ps, corev1.EventTypeWarning, ReasonUnsupported, msg)
		return 0, nil
	}
	if !ps.sandboxReady {
		if err := r.setupSandbox(pod, &ps.sb, ps.key+"/"+string(ps.uid)); err != nil {
			ps.setWaiting(ReasonContainerCreating, err.Error())
			r.eventOnce(ps, corev1.EventTypeWarning, "FailedCreatePodSandBox", err.Error())
			// Whatever was set up stays recorded in ps.sb for the next
			// attempt or the teardown.
			return 0, err
		}
		ps.sandboxReady = true
		ps.startTime = now
	}
	info := r.podInfo(ps, pod)
	if err := r.prepareVolumes(pod, ps.sb.dir); err != nil {
		ps.setWaiting(ReasonContainerCreating, err.Error())
		r.eventOnce(ps, corev1.EventTypeWarning, "FailedMount", err.Error())
		return configRetry, nil
	}
	if err := r.refreshVolumes(ctx, ps, info, now); err != nil {
		if !ps.started() {
			ps.setWaiting(ReasonContainerCreating, err.Error())
			r.eventOnce(ps, corev1.EventTypeWarning, "FailedMount", err.Error())
			return configRetry, nil
		}
		r.log.Warn("refreshing volumes", "pod", ps.key, "err", err)
	}

	for _, c := range ps.all() {
		if c.killReason != "" && c.proc != nil && !c.killing {
			r.event(ps, corev1.EventTypeNormal, "Killing", fmt.Sprintf("Stopping container %s: %s", c.spec.Name, c.killReason))
			r.stopContainer(ps, c, gracePeriod(pod))
		}
	}
	next := r.startDue(ctx, ps, info, now)
	if t := ps.tokens.nextRefresh(); !t.IsZero() && (next.IsZero() || t.Before(next)) {
		next = t
	}
	if next.IsZero() {
		return 0, nil
	}
	return max(next.Sub(now), time.Second), nil
}

// startDue starts the containers the restart plan says are due and marks
// those waiting, for init containers or in back-off. It returns when the
// next one is due (zero: none). Called with ps.mu held.
func (r *Runner) startDue(ctx context.Context, ps *podState, info PodInfo, now time.Time) time.Time {
	pod := ps.pod
	var init, ctrs []ContainerRun
	for _, c := range ps.init {
		init = append(init, c.run)
	}
	for _, c := range ps.ctrs {
		ctrs = append(ctrs, c.run)
	}
	plan := PlanStarts(pod.Spec.RestartPolicy, init, ctrs, now)
	var next time.Time
	due := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	initDone := !plan.Init && len(plan.Wait) == 0
	for _, c := range ps.init {
		initDone = initDone && initSucceeded(c.run)
	}
	for _, c := range ps.ctrs {
		if !initDone && c.run.Exit == nil && !c.run.Running {
			c.run.WaitReason, c.run.WaitMessage = ReasonPodInitializing, ""
		}
	}
	for _, name := range plan.Start {
		c := ps.container(name)
		if retry := r.startContainer(ctx, ps, c, info, now); retry {
			due(now.Add(configRetry))
		}
	}
	for name, at := range plan.Wait {
		c := ps.container(name)
		c.run.WaitReason = ReasonCrashLoopBackOff
		c.run.WaitMessage = fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)",
			c.run.Backoff.Delay(), name, pod.Name, pod.Namespace, pod.UID)
		due(at)
	}
	return next
}

// started says whether any container of the pod has started once.
func (ps *podState) started() bool {
	for _, c := range ps.all() {
		if c.run.Running || c.run.Exit != nil {
			return true
		}
	}
	return false
}

// refreshVolumes writes the current contents of the pod's secret,
// configMap, downwardAPI and projected volumes.
func (r *Runner) refreshVolumes(ctx context.Context, ps *podState, info PodInfo, now time.Time) error {
	pod := ps.pod
	tokens := func(audience string, exp int64) (string, error) {
		return ps.tokens.get(ctx, pod, audience, exp, now)
	}
	var errs []error
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		files, err := Projection(pod, v, info, r.objects, tokens)
		if err != nil {
			errs = append(errs, fmt.Errorf("volume %q: %w", v.Name, err))
			continue
		}
		if files == nil {
			continue
		}
		if _, err := WriteAtomic(ps.sb.dir.volume(v.Name), files); err != nil {
			errs = append(errs, fmt.Errorf("volume %q: %w", v.Name, err))
		}
	}
	return errors.Join(errs...)
}
