// Package lab_test runs Liqo v1.2.0's own code on this machine with
// test/liqo/lab.sh: three clusters, Liqo installed from its chart, the
// consumer peered with both providers by liqoctl, and checks that Liqo's
// controllers and gateways did their work: both Connections established,
// liqoctl info healthy, a process in a provider's gateway pod reaching the
// consumer's gateway over Liqo's WireGuard tunnel, each provider's node and
// gateway pod reaching each other over Liqo's internal network (the geneve
// stand-in's ends), and the gateway pods running the containers Liqo's
// template gives.
//
// It needs root and the lab's binaries (lab.sh build, which make test runs
// through make liqo-tools). Where Liqo cannot be built or started, it
// fails in CI (CI set) and skips elsewhere, saying why.
package lab_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/testbed/netns"
)

func labScript() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "lab.sh")
}

// Exit statuses of lab.sh (its header).
const (
	exitLabRuns = 3 // a lab already runs on this machine
	exitUnable  = 4 // this machine cannot run the lab
)

// labRun is one run of the lab: every command it starts ends by ctx,
// which ends before the test's deadline with time left to take the lab
// down and say why.
type labRun struct {
	t       *testing.T
	ctx     context.Context
	kubectl string // the lab's kubectl
}

func newLabRun(t *testing.T) *labRun {
	ctx := context.Background()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-3*time.Minute))
		t.Cleanup(cancel)
	}
	return &labRun{t: t, ctx: ctx}
}

// lab runs lab.sh with args and returns its stdout; stderr goes to the
// test log (the last 40 lines).
func (r *labRun) lab(args ...string) (string, error) {
	r.t.Helper()
	out, stderr, err := r.run(r.ctx, args...)
	r.t.Logf("lab.sh %s: %v\n%s", strings.Join(args, " "), err, tail(stderr, 40))
	return out, err
}

// quiet runs lab.sh like lab, logging only a failure: for the polls.
func (r *labRun) quiet(args ...string) (string, error) {
	r.t.Helper()
	out, stderr, err := r.run(r.ctx, args...)
	if err != nil {
		return out, fmt.Errorf("lab.sh %s: %w: %s", strings.Join(args, " "), err, tail(stderr, 10))
	}
	return out, nil
}

func (r *labRun) run(ctx context.Context, args ...string) (string, string, error) {
	cmd := exec.CommandContext(ctx, "bash", append([]string{labScript()}, args...)...)
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// setupFailed fails the test in CI and skips it elsewhere: a machine
// without the means to build or start Liqo is no verdict on the code, but
// CI must not pass for want of an install step.
func setupFailed(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg + " (skipped outside CI; in CI this fails)")
}

// down takes the lab down; when the test failed, it first logs what a
// reader needs to see why (lab.sh diagnose), which down then removes.
func (r *labRun) down() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if r.t.Failed() {
		out, _, err := r.run(ctx, "diagnose")
		r.t.Logf("lab.sh diagnose (%v):\n%s", err, out)
	}
	if _, stderr, err := r.run(ctx, "down"); err != nil {
		r.t.Errorf("lab.sh down: %v\n%s", err, tail(stderr, 20))
	}
}

// kubectl runs the lab's kubectl against cluster c.
func (r *labRun) kubectlIn(c string, args ...string) (string, error) {
	r.t.Helper()
	kc, err := r.quiet("kubeconfig", c)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(r.ctx, r.kubectl, append([]string{"--kubeconfig", strings.TrimSpace(kc)}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// eventually retries f every second for up to d and fails with its last
// error.
func eventually(t *testing.T, what string, d time.Duration, f func() error) {
	t.Helper()
	var err error
	for end := time.Now().Add(d); ; {
		if err = f(); err == nil {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("%s: not within %v: %v", what, d, err)
		}
		time.Sleep(time.Second) // real: Liqo's controllers on a real cluster act when they do
	}
}

type objList struct {
	Items []struct {
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
		Spec   json.RawMessage `json:"spec"`
		Status json.RawMessage `json:"status"`
	} `json:"items"`
}

func (r *labRun) list(c, resource string) (objList, error) {
	r.t.Helper()
	out, err := r.kubectlIn(c, "get", resource, "-A", "-o", "json")
	if err != nil {
		return objList{}, fmt.Errorf("kubectl get %s in %s: %w: %s", resource, c, err, out)
	}
	var l objList
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		return objList{}, fmt.Errorf("kubectl get %s in %s: %w", resource, c, err)
	}
	return l, nil
}

func TestLiqoPeeredByLiqoctl(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs Liqo and three Kubernetes clusters; not in -short")
	}
	netns.RequireRoot(t)
	r := newLabRun(t)
	if _, err := r.lab("build"); err != nil {
		setupFailed(t, "building Liqo v1.2.0 and the lab failed: %v", err)
	}
	bins, err := r.quiet("bin")
	if err != nil || len(strings.Fields(bins)) != 3 {
		t.Fatalf("lab.sh bin: %q, %v", bins, err)
	}
	r.kubectl = filepath.Join(strings.Fields(bins)[1], "kubectl")
	start := time.Now()
	_, err = r.lab("up")
	switch code := exitCode(err); {
	case err == nil:
	case code == exitLabRuns:
		// Not ours to take down.
		setupFailed(t, "a lab already runs on this machine: %v", err)
	case code == exitUnable:
		r.down()
		setupFailed(t, "this machine cannot run the lab: %v", err)
	default:
		r.down()
		t.Fatalf("lab.sh up: %v", err)
	}
	t.Cleanup(r.down)
	if _, err := r.lab("install"); err != nil {
		t.Fatalf("helm install of Liqo's chart: %v", err)
	}
	if _, err := r.lab("peer"); err != nil {
		t.Fatalf("liqoctl peer: %v", err)
	}
	t.Logf("from the lab's start to two peerings: %v", time.Since(start).Round(time.Second))

	for _, c := range []string{"consumer", "provider-a", "provider-b"} {
		eventually(t, "the Connections of "+c+" established", 3*time.Minute, func() error {
			l, err := r.list(c, "connections.networking.liqo.io")
			if err != nil {
				return err
			}
			want := 1
			if c == "consumer" {
				want = 2
			}
			if len(l.Items) != want {
				return fmt.Errorf("%d Connections, want %d", len(l.Items), want)
			}
			for _, it := range l.Items {
				var st struct {
					Value string `json:"value"`
				}
				_ = json.Unmarshal(it.Status, &st)
				if st.Value != "Connected" {
					return fmt.Errorf("connection %s/%s is %q", it.Metadata.Namespace, it.Metadata.Name, st.Value)
				}
			}
			return nil
		})
	}

	// The gateway pods Liqo's templates made run the template's three
	// containers (geneve: the stand-in, test/liqo/GENEVE.md).
	for c, want := range map[string]int{"consumer": 2, "provider-a": 1, "provider-b": 1} {
		pods, err := r.gatewayPods(c)
		if err != nil {
			t.Fatal(err)
		}
		if len(pods) != want {
			t.Errorf("%s has %d gateway pods, want %d", c, len(pods), want)
		}
		for _, p := range pods {
			if strings.Join(p.Containers, ",") != "gateway,wireguard,geneve" {
				t.Errorf("%s: gateway pod %s/%s has containers %v, want gateway, wireguard, geneve", c, p.Namespace, p.Name, p.Containers)
			}
			for _, ct := range p.Containers {
				if !p.Running[ct] {
					t.Errorf("%s: gateway pod %s/%s: container %s is not running", c, p.Namespace, p.Name, ct)
				}
			}
		}
	}

	// liqoctl info: Liqo's own view of its health and of each peering.
	for _, c := range []string{"consumer", "provider-a", "provider-b"} {
		eventually(t, "liqoctl info in "+c+" healthy", 2*time.Minute, func() error {
			out, err := r.quiet("liqoctl", c, "info", "-o", "json")
			if err != nil {
				return err
			}
			return infoHealthy(out, c)
		})
	}

	// What Liqo's code made, for the record (LAB_INVENTORY=FILE keeps it).
	inv, err := r.quiet("inventory")
	if err != nil {
		t.Errorf("lab.sh inventory: %v", err)
	}
	t.Logf("inventory: %d objects\n%s", strings.Count(inv, "\n"), inv)
	if f := os.Getenv("LAB_INVENTORY"); f != "" {
		if err := os.WriteFile(f, []byte(inv), 0o644); err != nil {
			t.Errorf("writing the inventory: %v", err)
		}
	}

	// A process in each provider's gateway pod reaches the consumer's
	// gateway over Liqo's WireGuard tunnel: the gateway server's end is
	// 169.254.18.1, the client's 169.254.18.2 (Liqo's pkg/gateway/tunnel).
	for _, p := range []string{"provider-a", "provider-b"} {
		pods, err := r.gatewayPods(p)
		if err != nil || len(pods) != 1 {
			t.Fatalf("gateway pod of %s: %v (%d pods)", p, err, len(pods))
		}
		gw := pods[0]
		eventually(t, p+"'s gateway pinging the consumer's over the tunnel", time.Minute, func() error {
			_, err := r.quiet("exec", p, gw.Namespace, gw.Name, "gateway", "--", "ping", "-c", "3", "-i", "0.2", "-W", "2", "169.254.18.2")
			return err
		})
		eventually(t, p+"'s internal network over the geneve stand-in's ends", time.Minute, func() error {
			return r.fabricReaches(p, gw)
		})
	}
}

// fabricReaches checks Liqo's internal network in provider p, over the
// geneve stand-in's tunnel ends: the node reaches its gateway pod's fabric
// address through the node end (the route Liqo's fabric controllers make),
// and the gateway pod reaches the node's fabric address through the
// gateway end (the route Liqo's gateway makes).
func (r *labRun) fabricReaches(p string, gw gatewayPod) error {
	out, err := r.kubectlIn(p, "get", "internalfabrics.networking.liqo.io", "-n", gw.Namespace, "-o", "jsonpath={.items[*].spec.interface.gateway.ip}")
	if err != nil || len(strings.Fields(out)) != 1 {
		return fmt.Errorf("the InternalFabric of %s/%s: %q, %v", gw.Namespace, gw.Name, out, err)
	}
	gwIP := strings.TrimSpace(out)
	node := "ll-" + p + "-n1"
	out, err = r.kubectlIn(p, "get", "internalnodes.networking.liqo.io", node, "-o", "jsonpath={.spec.interface.node.ip}")
	if err != nil || strings.TrimSpace(out) == "" {
		return fmt.Errorf("the InternalNode %s: %q, %v", node, out, err)
	}
	nodeIP := strings.TrimSpace(out)
	if b, err := exec.CommandContext(r.ctx, "ip", "netns", "exec", node, "ping", "-c", "3", "-i", "0.2", "-W", "2", gwIP).CombinedOutput(); err != nil {
		return fmt.Errorf("node %s to its gateway's fabric address %s: %w: %s", node, gwIP, err, b)
	}
	if _, err := r.quiet("exec", p, gw.Namespace, gw.Name, "gateway", "--", "ping", "-c", "3", "-i", "0.2", "-W", "2", nodeIP); err != nil {
		return fmt.Errorf("gateway %s/%s to the node's fabric address %s: %w", gw.Namespace, gw.Name, nodeIP, err)
	}
	return nil
}

// infoHealthy reads `liqoctl info -o json` and says what is not healthy:
// Liqo's own pods, or a peering's networking or authentication module.
func infoHealthy(out, c string) error {
	var info struct {
		Health struct {
			Healthy       bool            `json:"healthy"`
			UnhealthyPods json.RawMessage `json:"unhealthyPods"`
		} `json:"health"`
		Peerings struct {
			Peers []struct {
				ClusterID            string `json:"clusterID"`
				NetworkingStatus     string `json:"networkingStatus"`
				AuthenticationStatus string `json:"authenticationStatus"`
			} `json:"peers"`
		} `json:"peerings"`
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		return fmt.Errorf("liqoctl info -o json in %s: %w: %s", c, err, out)
	}
	if !info.Health.Healthy {
		return fmt.Errorf("liqoctl info in %s: not healthy: %s", c, info.Health.UnhealthyPods)
	}
	want := 1
	if c == "consumer" {
		want = 2
	}
	if len(info.Peerings.Peers) != want {
		return fmt.Errorf("liqoctl info in %s: %d peers, want %d: %s", c, len(info.Peerings.Peers), want, out)
	}
	for _, p := range info.Peerings.Peers {
		if p.NetworkingStatus != "Healthy" || p.AuthenticationStatus != "Healthy" {
			return fmt.Errorf("liqoctl info in %s: peer %s: networking %q, authentication %q", c, p.ClusterID, p.NetworkingStatus, p.AuthenticationStatus)
		}
	}
	return nil
}

// gatewayPod is a gateway pod of cluster c: its namespace, name and
// containers with their states.
type gatewayPod struct {
	Namespace, Name string
	Containers      []string
	Running         map[string]bool
}

func (r *labRun) gatewayPods(c string) ([]gatewayPod, error) {
	r.t.Helper()
	out, err := r.kubectlIn(c, "get", "pods", "-A", "-l", "networking.liqo.io/component=gateway", "-o", "json")
	if err != nil {
		return nil, fmt.Errorf("listing gateway pods of %s: %w: %s", c, err, out)
	}
	var l struct {
		Items []struct {
			Metadata struct{ Name, Namespace string } `json:"metadata"`
			Spec     struct {
				Containers []struct{ Name string } `json:"containers"`
			} `json:"spec"`
			Status struct {
				ContainerStatuses []struct {
					Name  string `json:"name"`
					State struct {
						Running *struct{} `json:"running"`
					} `json:"state"`
				} `json:"containerStatuses"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		return nil, fmt.Errorf("gateway pods of %s: %w", c, err)
	}
	var pods []gatewayPod
	for _, it := range l.Items {
		p := gatewayPod{Namespace: it.Metadata.Namespace, Name: it.Metadata.Name, Running: map[string]bool{}}
		for _, ct := range it.Spec.Containers {
			p.Containers = append(p.Containers, ct.Name)
		}
		for _, cs := range it.Status.ContainerStatuses {
			p.Running[cs.Name] = cs.State.Running != nil
		}
		pods = append(pods, p)
	}
	return pods, nil
}
