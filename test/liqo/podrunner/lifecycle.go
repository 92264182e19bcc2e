package podrunner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// killWait bounds the wait for a process after SIGKILL: the kernel reaps
// a killed PID namespace at once unless a process is stuck in the kernel,
// which waiting longer would not cure.
const killWait = 10 * time.Second

// startContainer starts container c. It records a failure in c.run (a
// configuration error that waits, or a start error that counts as an
// exit) and reports whether the start should be retried after
// configRetry. Called with ps.mu held.
func (r *Runner) startContainer(ctx context.Context, ps *podState, c *container, info PodInfo, now time.Time) bool {
	pod := ps.pod
	name := c.spec.Name
	env, err := ContainerEnv(pod, c.spec, info, r.objects)
	if err != nil {
		c.run.WaitReason, c.run.WaitMessage = ReasonConfigError, err.Error()
		r.eventOnce(ps, corev1.EventTypeWarning, "Failed", fmt.Sprintf("Error: container %s: %v", name, err))
		return true
	}
	argv, err := ContainerArgv(c.spec, r.cfg.Images, env, func(program string) bool {
		_, err := lookPath(program, env)
		if err == nil && strings.Contains(program, "/") {
			fi, serr := os.Stat(program)
			return serr == nil && fi.Mode().IsRegular()
		}
		return err == nil
	})
	if err != nil {
		c.run.WaitReason, c.run.WaitMessage = ReasonUnsupported, err.Error()
		return false
	}
	spec, err := r.initSpec(ps, c, info, argv, env)
	if err != nil {
		c.run.WaitReason, c.run.WaitMessage = ReasonConfigError, err.Error()
		r.eventOnce(ps, corev1.EventTypeWarning, "Failed", fmt.Sprintf("Error: container %s: %v", name, err))
		return true
	}
	c.run.ImageID = "podrunner://host"
	if bin, ok := r.cfg.Images.Entrypoint(c.spec.Image); ok && argv[0] == bin {
		c.run.ImageID = "podrunner://" + bin
	}
	if c.run.Exit != nil {
		c.run.RestartCount++
		c.run.Backoff = c.run.Backoff.Restarted()
	}
	c.run.WaitReason, c.run.WaitMessage = "", ""
	var netns *os.File
	if !pod.Spec.HostNetwork {
		netns = ps.sb.netns
	}
	proc, err := startProcess(r.cfg.Self, spec, ps.sb.dir.specFile(name), ps.sb.dir.log(name), netns)
	if proc == nil {
		t := &Termination{ExitCode: 128, Reason: ReasonStartError, Message: err.Error(), StartedAt: now, FinishedAt: now}
		c.run.PrevExit, c.run.Exit = c.run.Exit, t
		r.event(ps, corev1.EventTypeWarning, "Failed", fmt.Sprintf("Error: container %s: %v", name, err))
		return false
	}
	c.proc, c.startErr = proc, ""
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		proc.wait()
		ps.mu.Lock()
		r.recordExit(ps, c, proc)
		ps.mu.Unlock()
		r.queue.Add(ps.key)
	}()
	if err != nil {
		c.startErr = err.Error()
		r.event(ps, corev1.EventTypeWarning, "Failed", fmt.Sprintf("Error: container %s: %v", name, err))
		return false
	}
	if err := writePID(ps.sb.dir.pidFile(name), ps.sb.dir.startFile(name), proc.pid); err != nil {
		r.log.Warn("recording a container's pid", "pod", ps.key, "container", name, "err", err)
	}
	c.run.Running, c.run.PID, c.run.StartedAt = true, proc.pid, proc.started
	c.startup = ProbeState{}
	c.readiness = ProbeState{}
	c.killReason, c.killing = "", false
	r.log.Info("container started", "pod", ps.key, "container", name, "pid", proc.pid, "argv", argv)
	r.startProbes(ps, c, proc, info)
	return false
}

// initSpec prepares container c's root (a fresh upper layer holding the
// pod's /etc files) and returns the init helper's spec.
func (r *Runner) initSpec(ps *podState, c *container, info PodInfo, argv, env []string) (*InitSpec, error) {
	pod := ps.pod
	dir := ps.sb.dir.container(c.spec.Name)
	upper, work, root := filepath.Join(dir, "upper"), filepath.Join(dir, "work"), filepath.Join(dir, "root")
	for _, d := range []string{upper, work} {
		if err := os.RemoveAll(d); err != nil {
			return nil, fmt.Errorf("clearing %s: %w", d, err)
		}
	}
	for _, d := range []string{filepath.Join(upper, "etc"), work, root} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("creating %s: %w", d, err)
		}
	}
	hostname, fqdn := PodHostname(pod, r.cfg.ClusterDomain)
	uts := hostname
	if pod.Spec.HostNetwork {
		uts = r.cfg.Node
	} else if isTrue(pod.Spec.SetHostnameAsFQDN) && fqdn != "" {
		uts = fqdn
	}
	hostResolv, _ := os.ReadFile("/etc/resolv.conf")
	hostHosts, _ := os.ReadFile("/etc/hosts")
	for name, content := range map[string]string{
		"resolv.conf": ResolvConf(pod, r.cfg.ClusterDNS, r.cfg.ClusterDomain, hostResolv),
		"hosts":       HostsFile(pod, info.PodIPs, hostname, fqdn, hostHosts),
		"hostname":    uts + "\n",
	} {
		if err := os.WriteFile(filepath.Join(upper, "etc", name), []byte(content), 0o644); err != nil {
			return nil, fmt.Errorf("writing /etc/%s: %w", name, err)
		}
	}
	mounts, err := containerMounts(pod, c.spec, ps.sb.dir, env)
	if err != nil {
		return nil, err
	}
	if bin, ok := r.cfg.Images.Entrypoint(c.spec.Image); ok && argv[0] == bin && underPrivateMount(bin) {
		// The container's own tmpfs would hide a binary built into /tmp.
		mounts = append([]BindMount{{Source: bin, Target: bin, ReadOnly: true}}, mounts...)
	}
	return &InitSpec{
		Hostname:   uts,
		Upper:      upper,
		Work:       work,
		Root:       root,
		NetNS:      !pod.Spec.HostNetwork,
		Mounts:     mounts,
		WorkingDir: c.spec.WorkingDir,
		Argv:       argv,
		Env:        env,
	}, nil
}

// underPrivateMount says whether path lies where a container has a
// tmpfs of its own (/tmp, /run, /dev/shm), which hides the host's files.
func underPrivateMount(path string) bool {
	for _, dir := range []string{"/tmp/", "/run/", "/dev/shm/"} {
		if strings.HasPrefix(filepath.Clean(path), dir) {
			return true
		}
	}
	return false
}

// recordExit notes that proc, container c's process, has exited. Called
// with ps.mu held.
func (r *Runner) recordExit(ps *podState, c *container, proc *process) {
	if c.proc != proc {
		return
	}
	t := proc.exit
	if c.startErr != "" {
		t.ExitCode, t.Reason, t.Message = 128, ReasonStartError, c.startErr
	}
	c.run.PrevExit, c.run.Exit = c.run.Exit, &t
	c.run.Running, c.run.PID = false, 0
	c.run.Backoff = c.run.Backoff.Exited(t.FinishedAt.Sub(t.StartedAt))
	c.proc, c.startErr, c.killReason, c.killing = nil, "", "", false
	if c.stopProbes != nil {
		c.stopProbes()
		c.stopProbes = nil
	}
	for _, f := range []string{ps.sb.dir.pidFile(c.spec.Name), ps.sb.dir.startFile(c.spec.Name)} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			r.log.Warn("removing a pid record", "file", f, "err", err)
		}
	}
	r.log.Info("container exited", "pod", ps.key, "container", c.spec.Name, "exitCode", t.ExitCode, "reason", t.Reason)
}

// startProbes starts the probers of container c's run proc. Called with
// ps.mu held.
func (r *Runner) startProbes(ps *podState, c *container, proc *process, info PodInfo) {
	ctx, cancel := context.WithCancel(ps.ctx)
	c.stopProbes = cancel
	host := first(info.PodIPs)
	specFile := ps.sb.dir.specFile(c.spec.Name)
	execFn := func(ctx context.Context, argv []string) error {
		return execInContainer(ctx, r.cfg.Self, proc.pid, specFile, argv)
	}
	for _, pr := range []struct {
		kind  probeKind
		probe *corev1.Probe
	}{{probeStartup, c.spec.StartupProbe}, {probeLiveness, c.spec.LivenessProbe}, {probeReadiness, c.spec.ReadinessProbe}} {
		if pr.probe == nil {
			continue
		}
		p := &prober{kind: pr.kind, probe: pr.probe, container: c.spec, host: host, exec: execFn}
		live := ProbeState{Result: true}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			p.run(ctx, func(ok bool, msg string) bool {
				ps.mu.Lock()
				defer ps.mu.Unlock()
				if c.proc != proc {
					return false
				}
				return r.observeProbe(ps, c, p, &live, ok, msg)
			})
		}()
	}
}

// observeProbe applies one probe outcome to container c and reports
// whether the prober goes on. Called with ps.mu held.
func (r *Runner) observeProbe(ps *podState, c *container, p *prober, live *ProbeState, ok bool, msg string) bool {
	pr := p.probe
	if p.kind != probeStartup && c.spec.StartupProbe != nil && !c.startup.Result {
		return true // liveness and readiness wait for the startup probe
	}
	if !ok {
		r.log.Debug("probe failed", "pod", ps.key, "container", c.spec.Name, "probe", p.kind, "msg", msg)
	}
	switch p.kind {
	case probeStartup:
		c.startup = c.startup.Observe(ok, 1, pr.FailureThreshold)
		if c.startup.Result {
			r.queue.Add(ps.key)
			return false
		}
		if c.startup.Failures() >= max(pr.FailureThreshold, 1) {
			c.killReason = "Startup probe failed: " + msg
			r.event(ps, corev1.EventTypeWarning, "Unhealthy", c.killReason)
			r.queue.Add(ps.key)
			return false
		}
	case probeLiveness:
		*live = live.Observe(ok, 1, pr.FailureThreshold)
		if !live.Result {
			c.killReason = "Liveness probe failed: " + msg
			r.event(ps, corev1.EventTypeWarning, "Unhealthy", c.killReason)
			r.queue.Add(ps.key)
			return false
		}
	case probeReadiness:
		was := c.readiness.Result
		c.readiness = c.readiness.Observe(ok, pr.SuccessThreshold, pr.FailureThreshold)
		if c.readiness.Result != was {
			r.queue.Add(ps.key)
		}
	}
	return true
}

// stopContainer stops container c's process: its stop signal, then
// SIGKILL after grace. Called with ps.mu held; it does not wait.
func (r *Runner) stopContainer(ps *podState, c *container, grace time.Duration) {
	proc := c.proc
	c.killing = true
	sig := stopSignal(c.spec)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		stopProcess(proc, sig, time.Now().Add(grace))
	}()
}

// stopProcess signals proc with sig, waits until deadline and kills it.
func stopProcess(proc *process, sig syscall.Signal, deadline time.Time) {
	proc.signal(sig)
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-proc.done:
		return
	case <-t.C:
	}
	proc.signal(syscall.SIGKILL)
	k := time.NewTimer(killWait)
	defer k.Stop()
	select {
	case <-proc.done:
	case <-k.C:
	}
}

// terminate stops every process of the pod for good: preStop hooks, the
// stop signal, SIGKILL at the end of grace. When done it marks the pod
// terminated and queues it. Called with ps.mu held; it does not wait.
func (r *Runner) terminate(ps *podState, grace time.Duration) {
	ps.terminating = true
	type victim struct {
		proc     *process
		sig      syscall.Signal
		preStop  *corev1.LifecycleHandler
		specFile string
	}
	var victims []victim
	for _, c := range ps.all() {
		if c.proc == nil {
			continue
		}
		v := victim{proc: c.proc, sig: stopSignal(c.spec), specFile: ps.sb.dir.specFile(c.spec.Name)}
		if c.spec.Lifecycle != nil {
			v.preStop = c.spec.Lifecycle.PreStop
		}
		victims = append(victims, v)
		if c.stopProbes != nil {
			c.stopProbes()
		}
	}
	r.log.Info("stopping pod", "pod", ps.key, "processes", len(victims), "grace", grace)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		deadline := time.Now().Add(grace)
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		var hooks sync.WaitGroup
		for _, v := range victims {
			if v.preStop == nil {
				continue
			}
			hooks.Add(1)
			go func() {
				defer hooks.Done()
				r.runPreStop(ctx, ps.key, v.proc, v.specFile, v.preStop)
			}()
		}
		hooks.Wait()
		var stops sync.WaitGroup
		for _, v := range victims {
			stops.Add(1)
			go func() {
				defer stops.Done()
				stopProcess(v.proc, v.sig, deadline)
			}()
		}
		stops.Wait()
		for _, v := range victims {
			select {
			case <-v.proc.done:
			default:
				r.log.Error("a process survived SIGKILL", "pod", ps.key, "pid", v.proc.pid)
			}
		}
		ps.mu.Lock()
		ps.terminated = true
		ps.mu.Unlock()
		r.queue.Add(ps.key)
	}()
}

// runPreStop runs a preStop hook (exec or sleep) until it ends or ctx
// does.
func (r *Runner) runPreStop(ctx context.Context, key string, proc *process, specFile string, h *corev1.LifecycleHandler) {
	switch {
	case h.Exec != nil:
		if err := execInContainer(ctx, r.cfg.Self, proc.pid, specFile, h.Exec.Command); err != nil {
			r.log.Warn("preStop hook failed", "pod", key, "err", err)
		}
	case h.Sleep != nil:
		t := time.NewTimer(time.Duration(h.Sleep.Seconds) * time.Second)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		case <-proc.done:
		}
	}
}
