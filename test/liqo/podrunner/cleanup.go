package podrunner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// shutdownGrace caps each pod's grace period when the runner stops, so
// that stopping a node takes seconds, not the pods' full grace periods.
const shutdownGrace = 10 * time.Second

// staleKillWait is how long cleanStale waits for the processes it
// killed to be gone before it unmounts and deletes under them.
const staleKillWait = 10 * time.Second

// cleanStale removes what an earlier run left in the state directory:
// it kills the recorded container processes (each is PID 1 of its PID
// namespace, so everything it started dies with it), unmounts what is
// mounted below the pods' directories, deletes the recorded network
// namespaces and leftover veths, and removes the pods' directories but
// for their logs.
func (r *Runner) cleanStale() error {
	if err := os.MkdirAll(r.state.pods(), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", r.state.pods(), err)
	}
	podDirs, _ := filepath.Glob(filepath.Join(r.state.pods(), "*"))
	var killed []int
	for _, pd := range podDirs {
		pids, _ := filepath.Glob(filepath.Join(pd, "*.pid"))
		for _, pf := range pids {
			pid, err := readPID(pf, strings.TrimSuffix(pf, ".pid")+".start")
			if err != nil {
				continue
			}
			if err := syscall.Kill(pid, syscall.SIGKILL); err == nil {
				killed = append(killed, pid)
			}
		}
	}
	deadline := time.Now().Add(staleKillWait)
	for _, pid := range killed {
		for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if len(killed) > 0 {
		r.log.Info("killed the processes of an earlier run", "pids", killed)
	}
	var errs []error
	if err := unmountAll(r.state.pods()); err != nil {
		errs = append(errs, err)
	}
	records, _ := filepath.Glob(r.state.netnsRecord("*"))
	for _, rec := range records {
		name := filepath.Base(rec)
		if err := DeleteNetns(r.hostMnt, name); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := os.Remove(rec); err != nil {
			errs = append(errs, err)
		}
	}
	for _, l := range podVeths() {
		if err := DeleteLink(l); err != nil {
			errs = append(errs, err)
		}
	}
	for _, pd := range podDirs {
		if err := removeExceptLogs(pd); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// shutdownPods stops every pod's processes and tears down every sandbox.
// The pods' objects and statuses stay: the next run takes them over.
func (r *Runner) shutdownPods() {
	r.mu.Lock()
	all := make([]*podState, 0, len(r.pods))
	for _, ps := range r.pods {
		all = append(all, ps)
	}
	r.mu.Unlock()
	for _, ps := range all {
		ps.mu.Lock()
		if !ps.terminating {
			r.terminate(ps, min(gracePeriod(ps.pod), shutdownGrace))
		}
		ps.mu.Unlock()
	}
	// Every goroutine a pod started ends once its processes have: the
	// waiters after the exit, the probers when their run ends, the
	// terminations after SIGKILL.
	r.wg.Wait()
	for _, ps := range all {
		ps.mu.Lock()
		r.teardown(ps)
		ps.mu.Unlock()
		r.forget(ps)
	}
	r.log.Info("every pod stopped and torn down", "pods", len(all))
}
