package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/kube/client"
	"github.com/liqo-relay/relay/internal/testbed/netns"
	"github.com/liqo-relay/relay/test/k8s/k8stest"
)

// The helpers of TestE2EKubernetes: a provider's own API server inside its
// namespace, reached from the test through a forwarder, and a relay in TUN
// mode driven by it.

// kubeNamespace is the Kubernetes namespace the relays run in, in each
// provider's cluster (the clusters are separate, so the name repeats).
const kubeNamespace = "liqo-relay"

// Provider is one provider's control plane in the test: its API server
// (started inside the provider's network namespace, listening on that
// namespace's loopback, where only the relay reaches it), a forwarder that
// lets this process reach it, and the relay it drives.
type Provider struct {
	Side    *Side
	Cluster *k8stest.Cluster // Kubeconfig points at the forwarder (for the test's kubectl)
	API     *client.Client
	// InsideURL is the API server's URL inside the namespace.
	InsideURL string
	// stateDir is the cluster's cluster.sh state (pid files, logs).
	stateDir string
	// RelayKubeconfig holds the relay ServiceAccount's token and InsideURL.
	RelayKubeconfig string
	Relay           *Relay
}

var serverRe = regexp.MustCompile(`server: (https://127\.0\.0\.1:\d+)`)

// StartProvider starts the side's API server in its namespace
// (K8S_ADDRESS=127.0.0.1 there), installs the CRDs, creates kubeNamespace
// with the relay Role bound to ServiceAccount relay, and writes a
// kubeconfig for the relay with that ServiceAccount's token.
func StartProvider(t *testing.T, s *Side) *Provider {
	t.Helper()
	c := k8stest.Start(t, s.Name, s.NS.Name, "K8S_ADDRESS=127.0.0.1")
	admin, err := os.ReadFile(c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	m := serverRe.FindSubmatch(admin)
	if m == nil {
		t.Fatalf("no https://127.0.0.1 server in %s:\n%s", c.Kubeconfig, admin)
	}
	p := &Provider{Side: s, Cluster: c, InsideURL: string(m[1]), stateDir: filepath.Dir(c.Kubeconfig)}
	// The serving certificate names 127.0.0.1, so the forwarder on this
	// process's loopback serves the same certificate under a valid name.
	fwd := forwardInto(t, s.NS, strings.TrimPrefix(p.InsideURL, "https://"))
	outside := filepath.Join(t.TempDir(), s.Name+"-admin.kubeconfig")
	if err := os.WriteFile(outside, []byte(strings.ReplaceAll(string(admin), p.InsideURL, "https://"+fwd)), 0o600); err != nil {
		t.Fatal(err)
	}
	c.Kubeconfig = outside
	p.API, err = client.New(c.Config(t))
	if err != nil {
		t.Fatal(err)
	}

	c.InstallCRDs(t)
	c.Kubectl(t, "create", "namespace", kubeNamespace)
	c.Kubectl(t, "-n", kubeNamespace, "apply", "-f", filepath.Join(k8stest.Root(), "manifests", "rbac", "relay-role.yaml"))
	sa := c.ServiceAccountKubeconfig(t, kubeNamespace, "relay")
	c.Kubectl(t, "-n", kubeNamespace, "create", "rolebinding", "liqo-relay", "--role=liqo-relay",
		"--serviceaccount="+kubeNamespace+":relay")
	// The relay is not admin: for example it cannot list Secrets.
	if out, _ := c.KubectlErr("auth", "can-i", "--as=system:serviceaccount:"+kubeNamespace+":relay",
		"-n", kubeNamespace, "list", "secrets"); strings.TrimSpace(out) != "no" {
		t.Fatalf("the relay ServiceAccount may list Secrets (%q): the test would not run it with the Role's rights", out)
	}
	b, err := os.ReadFile(sa)
	if err != nil {
		t.Fatal(err)
	}
	p.RelayKubeconfig = filepath.Join(t.TempDir(), s.Name+"-relay.kubeconfig")
	if err := os.WriteFile(p.RelayKubeconfig, []byte(strings.ReplaceAll(string(b), "https://"+fwd, p.InsideURL)), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// RestartAPIServer stops the provider's kube-apiserver, keeps it down for
// down, and starts it again on the same address and port with the same
// etcd (cluster.sh restart, in the namespace it runs in). It returns when
// the API server is ready again.
func (p *Provider) RestartAPIServer(t *testing.T, down time.Duration) {
	t.Helper()
	before := p.apiserverPid(t)
	script := filepath.Join(k8stest.Root(), "test", "k8s", "cluster.sh")
	p.Side.NS.Run(t, "bash", script, "restart", p.Cluster.Name, fmt.Sprintf("%.1f", down.Seconds()))
	// A restart that left the old process serving would pass unnoticed.
	if after := p.apiserverPid(t); after == before {
		t.Fatalf("%s: kube-apiserver still has pid %d after the restart", p.Cluster.Name, before)
	}
	if running(before) {
		t.Fatalf("%s: the old kube-apiserver (pid %d) still runs after the restart", p.Cluster.Name, before)
	}
}

// running reports whether pid is a live process (not gone, not a zombie
// waiting for its reaper).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state ...: comm may hold spaces, the state follows the
	// last parenthesis.
	_, rest, _ := strings.Cut(string(b[bytes.LastIndexByte(b, ')')+1:]), " ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}

// apiserverPid reads the kube-apiserver's pid from the cluster's state.
func (p *Provider) apiserverPid(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(p.stateDir, "apiserver.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s/apiserver.pid: %v", p.stateDir, err)
	}
	return pid
}

// kubeRelayYAML is a relay's file in Kubernetes mode: what only a restart
// changes, no peers (they come from RelayPeers), the key from a Secret the
// relay creates, and the prefixes RelayPeers may claim (Liqo's pod CIDRs
// and the relays' overlay).
func kubeRelayYAML(s *Side) string {
	return fmt.Sprintf(`name: %s
privateKeySecret: {name: relay-key}
listenPort: %d
mode: tun
addresses: [%s/32]
exports: [%s]
allowedPeerPrefixes: [10.244.0.0/16, 100.80.0.0/16]
admin: %s
log: {level: info, format: text}
`, s.Name, relayPort, s.Overlay, s.Exports, adminAddr)
}

// StartRelay runs `relay run -c FILE --kubeconfig ... --namespace ...` in
// the provider's namespace and waits until its admin server answers.
func (p *Provider) StartRelay(t *testing.T, peer *Side) *Relay {
	t.Helper()
	return p.startRelayWith(t, peer, kubeRelayYAML(p.Side))
}

// startRelayWith is StartRelay with the given configuration file and
// extra arguments of relay run.
func (p *Provider) startRelayWith(t *testing.T, peer *Side, yaml string, extra ...string) *Relay {
	t.Helper()
	r := &Relay{Side: p.Side, Peer: peer, Dir: t.TempDir(), t: t}
	r.Config = filepath.Join(r.Dir, "relay.yaml")
	r.writeFile(yaml)
	args := append([]string{relayBin(t), "run", "-c", r.Config,
		"--kubeconfig", p.RelayKubeconfig, "--namespace", kubeNamespace}, extra...)
	r.Proc = p.Side.NS.Start(t, p.Side.Name, args...)
	waitFor(t, 30*time.Second, p.Side.Name+" admin server answers", func() (bool, string) {
		select {
		case <-r.Proc.Done():
			t.Fatalf("%s exited early:\n%s", p.Side.Name, r.Proc.Output())
		default:
		}
		_, err := r.Status()
		return err == nil, fmt.Sprint(err)
	})
	p.Relay = r
	return r
}

// StopRelay sends SIGTERM, checks the relay exits 0 within the budget and
// leaves no device, policy rule or route behind. (Relay.Stop would also
// count the API server's processes in the namespace as leftovers.)
func (p *Provider) StopRelay(t *testing.T) {
	t.Helper()
	r := p.Relay
	if err := syscall.Kill(r.Proc.Pid(), syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM %s: %v", r.Side.Name, err)
	}
	timer := time.NewTimer(exitBudget)
	defer timer.Stop()
	select {
	case <-r.Proc.Done():
	case <-timer.C:
		t.Errorf("%s did not exit within %v of SIGTERM", r.Side.Name, exitBudget)
	}
	if err := r.Proc.Stop(syscall.SIGKILL); err != nil {
		t.Errorf("%s exit after SIGTERM: %v\n%s", r.Side.Name, err, r.Proc.Output())
	}
	var left []string
	for _, l := range leftovers(t, r.Side) {
		if !strings.HasPrefix(l, "processes: ") {
			left = append(left, l)
		}
	}
	if len(left) > 0 {
		t.Errorf("after SIGTERM, %s still has:\n%s", r.Side.Name, strings.Join(left, "\n"))
	}
}

// PublishedKey waits until the relay's Relay object is ready and returns
// the public key in its status.
func (p *Provider) PublishedKey(t *testing.T) string {
	t.Helper()
	var key string
	waitFor(t, 30*time.Second, p.Side.Name+"'s Relay published and ready", func() (bool, string) {
		r, err := p.API.GetRelay(context.Background(), kubeNamespace, p.Side.Name)
		if err != nil {
			return false, err.Error()
		}
		key = r.Status.PublicKey
		return r.Status.Ready && key != "" && r.Status.Mode == "tun" && r.Status.ListenPort == relayPort,
			fmt.Sprintf("ready=%v publicKey=%q mode=%q listenPort=%d", r.Status.Ready, key, r.Status.Mode, r.Status.ListenPort)
	})
	return key
}

// PeerSpec is the RelayPeer the consumer operator would write in this
// provider's cluster for peer: the same peer as the file-driven e2e
// relays have (relay.go: the peer's pods and overlay address, direct then
// consumer with defaultBias).
func (p *Provider) PeerSpec(peer *Side, pub string) v1alpha1.RelayPeerSpec {
	return v1alpha1.RelayPeerSpec{
		PublicKey: pub,
		Prefixes:  []v1alpha1.Prefix{v1alpha1.Prefix(peer.PeerSees), v1alpha1.Prefix(peer.Overlay + "/32")},
		Paths: []v1alpha1.Path{
			{Name: "direct", Endpoint: fmt.Sprintf("%s:%d", peer.Direct, relayPort)},
			{Name: "consumer", Endpoint: fmt.Sprintf("%s:%d", peer.Consumer, relayPort), Bias: v1alpha1.Duration(defaultBias["consumer"])},
		},
	}
}

// ApplyPeer creates or updates the RelayPeer for peer in this provider's
// cluster, labelled for this provider's relay.
func (p *Provider) ApplyPeer(t *testing.T, peer *Side, spec v1alpha1.RelayPeerSpec) {
	t.Helper()
	labels := map[string]string{v1alpha1.RelayLabel: p.Side.Name}
	if err := p.API.ApplyRelayPeer(context.Background(), kubeNamespace, peer.Name, labels, spec); err != nil {
		t.Fatal(err)
	}
}

// peerView is what a RelayPeer's status says, for waits and messages.
type peerView struct {
	rp       *v1alpha1.RelayPeer
	err      error
	ready    bool
	degraded bool
}

func (v peerView) String() string {
	if v.err != nil {
		return v.err.Error()
	}
	st := v.rp.Status
	s := fmt.Sprintf("generation %d observed %d, active %q, reachable %v, ready %v, degraded %v;",
		v.rp.Generation, st.ObservedGeneration, st.ActivePath, st.Reachable, v.ready, v.degraded)
	for _, ps := range st.Paths {
		s += fmt.Sprintf(" %s=%s(rtt %s)", ps.Name, ps.State, ps.RTT)
	}
	for _, c := range st.Conditions {
		s += fmt.Sprintf("; %s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
	}
	return s
}

// Peer reads the RelayPeer for peer from this provider's cluster.
func (p *Provider) Peer(peer *Side) peerView {
	rp, err := p.API.GetRelayPeer(context.Background(), kubeNamespace, peer.Name)
	if err != nil {
		return peerView{err: err}
	}
	is := func(typ string) bool {
		c := meta.FindStatusCondition(rp.Status.Conditions, typ)
		return c != nil && c.Status == "True" && c.ObservedGeneration == rp.Generation
	}
	return peerView{rp: rp, ready: is(v1alpha1.ConditionReady), degraded: is(v1alpha1.ConditionDegraded)}
}

// WaitPeer waits until the RelayPeer for peer has been processed at its
// current generation, is Ready, and cond holds; it returns the view.
func (p *Provider) WaitPeer(t *testing.T, peer *Side, within time.Duration, what string, cond func(peerView) bool) peerView {
	t.Helper()
	var v peerView
	waitFor(t, within, fmt.Sprintf("%s's RelayPeer %s: %s", p.Side.Name, peer.Name, what), func() (bool, string) {
		v = p.Peer(peer)
		return v.err == nil && v.rp.Status.ObservedGeneration == v.rp.Generation && v.ready && cond(v), v.String()
	})
	return v
}

// activeOn holds when the peer is reachable on path; degraded is what the
// Degraded condition must say.
func activeOn(path string, degraded bool) func(peerView) bool {
	return func(v peerView) bool {
		return v.rp.Status.Reachable && v.rp.Status.ActivePath == path && v.degraded == degraded
	}
}

// forwardInto forwards TCP connections from a port on this process's
// loopback to target inside n (whose loopback this process cannot reach)
// and returns the local address. Every connection is dialled from inside
// n. Cleanup closes the listener and every open connection and waits for
// the goroutines.
func forwardInto(t *testing.T, n *netns.NS, target string) string {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns = map[net.Conn]bool{}
		done  bool
	)
	track := func(c net.Conn) bool {
		mu.Lock()
		defer mu.Unlock()
		if done {
			_ = c.Close()
			return false
		}
		conns[c] = true
		return true
	}
	forget := func(c net.Conn) {
		mu.Lock()
		delete(conns, c)
		mu.Unlock()
		_ = c.Close()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			if !track(in) {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer forget(in)
				var out net.Conn
				d := net.Dialer{Timeout: 5 * time.Second}
				if err := n.Do(func() (err error) {
					out, err = d.Dial("tcp4", target)
					return err
				}); err != nil {
					return // the API server is down (restart): the client sees EOF
				}
				if !track(out) {
					return
				}
				defer forget(out)
				copied := make(chan struct{})
				go func() {
					defer close(copied)
					_, _ = io.Copy(out, in)
					_ = out.Close()
				}()
				_, _ = io.Copy(in, out)
				_ = in.Close()
				<-copied
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		done = true
		for c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// requireK8sTools skips (fails in CI) without the API server binaries,
// before any namespace is made.
func requireK8sTools(t *testing.T) {
	t.Helper()
	k8stest.Bin(t)
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("needs openssl (cluster.sh makes the API server's certificates with it)")
	}
}
