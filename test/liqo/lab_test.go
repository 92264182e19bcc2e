// Package lab_test runs Liqo v1.2.0's own code on this machine with
// test/liqo/lab.sh: three clusters, Liqo installed from its chart, the
// consumer peered with both providers by liqoctl, and checks that Liqo's
// controllers and gateways did their work: both Connections established,
// liqoctl info healthy, a process in a provider's gateway pod reaching the
// consumer's gateway over Liqo's WireGuard tunnel, and the gateway pods
// running the containers Liqo's template gives.
//
// It needs root and the lab's binaries (lab.sh build, which make test runs
// through make liqo-tools). Where Liqo cannot be built or started, it
// fails in CI (CI set) and skips elsewhere, saying why.
package lab_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/netns"
)

func labScript() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "lab.sh")
}

// lab runs lab.sh with args and returns its stdout; stderr goes to the
// test log.
func lab(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{labScript()}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("lab.sh %s: %v (%v)\n%s", strings.Join(args, " "), err, time.Since(start).Round(time.Second), tail(stderr.String(), 40))
	return stdout.String(), err
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

// kubectl runs the lab's kubectl against cluster c.
func kubectl(t *testing.T, c string, args ...string) (string, error) {
	t.Helper()
	kc, err := lab(t, "kubeconfig", c)
	if err != nil {
		return "", err
	}
	bins, err := lab(t, "bin")
	if err != nil {
		return "", err
	}
	k8s := strings.Fields(bins)[1]
	out, err := exec.Command(filepath.Join(k8s, "kubectl"), append([]string{"--kubeconfig", strings.TrimSpace(kc)}, args...)...).CombinedOutput()
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
		time.Sleep(time.Second) // polls a real cluster: Liqo's controllers act when they do
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

func list(t *testing.T, c, resource string) (objList, error) {
	t.Helper()
	out, err := kubectl(t, c, "get", resource, "-A", "-o", "json")
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
	if _, err := lab(t, "build"); err != nil {
		setupFailed(t, "building Liqo v1.2.0 and the lab failed: %v", err)
	}
	t.Cleanup(func() {
		if _, err := lab(t, "down"); err != nil {
			t.Errorf("lab.sh down: %v", err)
		}
	})
	start := time.Now()
	if _, err := lab(t, "up"); err != nil {
		setupFailed(t, "starting the lab's clusters failed: %v", err)
	}
	if _, err := lab(t, "install"); err != nil {
		t.Fatalf("helm install of Liqo's chart: %v", err)
	}
	if _, err := lab(t, "peer"); err != nil {
		t.Fatalf("liqoctl peer: %v", err)
	}
	t.Logf("from nothing running to two peerings: %v", time.Since(start).Round(time.Second))

	for _, c := range []string{"consumer", "provider-a", "provider-b"} {
		eventually(t, "the Connections of "+c+" established", 3*time.Minute, func() error {
			l, err := list(t, c, "connections.networking.liqo.io")
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
		pods, err := gatewayPods(t, c)
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
			out, err := lab(t, "liqoctl", c, "info", "-o", "json")
			if err != nil {
				return fmt.Errorf("liqoctl info: %w", err)
			}
			return infoHealthy(out, c)
		})
	}

	// What Liqo's code made, for the record (LAB_INVENTORY=FILE keeps it).
	inv, err := lab(t, "inventory")
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
		pods, err := gatewayPods(t, p)
		if err != nil || len(pods) != 1 {
			t.Fatalf("gateway pod of %s: %v (%d pods)", p, err, len(pods))
		}
		gw := pods[0]
		eventually(t, p+"'s gateway pinging the consumer's over the tunnel", time.Minute, func() error {
			out, err := lab(t, "exec", p, gw.Namespace, gw.Name, "gateway", "--", "ping", "-c", "3", "-i", "0.2", "-W", "2", "169.254.18.2")
			if err != nil {
				return fmt.Errorf("ping from %s/%s: %w: %s", gw.Namespace, gw.Name, err, out)
			}
			return nil
		})
	}
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

func gatewayPods(t *testing.T, c string) ([]gatewayPod, error) {
	t.Helper()
	out, err := kubectl(t, c, "get", "pods", "-A", "-l", "networking.liqo.io/component=gateway", "-o", "json")
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
