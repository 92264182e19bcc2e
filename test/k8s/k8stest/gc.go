package k8stest

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// StartGarbageCollector runs kube-controller-manager against the cluster
// with only its garbage collector, as a real cluster has it: objects
// whose owners are gone are deleted. It stops when the test ends; its log
// is printed if the test fails.
func (c *Cluster) StartGarbageCollector(t testing.TB) {
	t.Helper()
	cmd := exec.Command(filepath.Join(c.bin, "kube-controller-manager"), "--kubeconfig", c.Kubeconfig,
		"--controllers=garbagecollector", "--leader-elect=false", "--secure-port=0", "--v=1")
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting kube-controller-manager: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second): // real: kube-controller-manager shutting down
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("kube-controller-manager:\n%s", logs.String())
		}
	})
}
