package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/status"
	"github.com/liqo-relay/relay/internal/testbed/netns"
)

// exitBudget is the contract for a clean shutdown: exit 0 within 5 s.
const exitBudget = 5 * time.Second

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildDir  string
)

// relayBin builds the relay binary once per test binary (from the module
// root) and returns its path.
func relayBin(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "relay-e2e-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(buildDir, "relay")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/relay")
		cmd.Dir = "../.."
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/relay: %w: %s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// keyPair returns a new private key and its public key, made by the
// binary's genkey and pubkey commands.
func keyPair(t *testing.T) (priv, pub string) {
	t.Helper()
	bin := relayBin(t)
	out, err := exec.Command(bin, "genkey").Output()
	if err != nil {
		t.Fatalf("relay genkey: %v", err)
	}
	priv = strings.TrimSpace(string(out))
	cmd := exec.Command(bin, "pubkey")
	cmd.Stdin = strings.NewReader(priv + "\n")
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("relay pubkey: %v", err)
	}
	return priv, strings.TrimSpace(string(out))
}

// RelaySpec is what varies in a relay's configuration file.
type RelaySpec struct {
	Mode       string            // "tun" (default) or "netstack"
	PathOrder  []string          // default direct, consumer
	Bias       map[string]string // path name to bias; nil means defaultBias
	Overlap    bool              // write seesUs for the peer
	ExtraYAML  string            // appended at top level
	privateKey string
}

// defaultBias makes the consumer path dearer than the direct one, as the
// extra hop through the consumer is in a real federation (the namespaces'
// veths have no latency of their own, and netem may be missing): without it
// the two paths tie and, once traffic has left the direct path, it would
// never have a reason to come back.
var defaultBias = map[string]string{"consumer": "5ms"}

// Relay is one relay process in a provider namespace.
type Relay struct {
	Side    *Side
	Peer    *Side
	Dir     string // holds the config and key files
	Config  string // path of the config file
	Proc    *netns.Proc
	PubKey  string
	spec    RelaySpec
	peerPub string
	t       *testing.T
}

// Relays creates the two relays' keys and config files (not yet started).
func (top *Topology) Relays(t *testing.T, specA, specB RelaySpec) (a, b *Relay) {
	t.Helper()
	a, b = relayPair(t, top.A, top.B, specA, specB)
	a.WriteConfig(a.spec)
	b.WriteConfig(b.spec)
	return a, b
}

// relayPair creates two relays for sides sa and sb, each with a key pair and
// a directory holding its key file, and tells each the other's public key.
func relayPair(t *testing.T, sa, sb *Side, specA, specB RelaySpec) (a, b *Relay) {
	t.Helper()
	a = &Relay{Side: sa, Peer: sb, spec: specA, t: t}
	b = &Relay{Side: sb, Peer: sa, spec: specB, t: t}
	for _, r := range []*Relay{a, b} {
		r.spec.privateKey, r.PubKey = keyPair(t)
		r.Dir = t.TempDir()
		r.Config = filepath.Join(r.Dir, "relay.yaml")
		if err := os.WriteFile(filepath.Join(r.Dir, "key"), []byte(r.spec.privateKey+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	a.peerPub, b.peerPub = b.PubKey, a.PubKey
	return a, b
}

// YAML renders the configuration for spec.
func (r *Relay) YAML(spec RelaySpec) string {
	mode := spec.Mode
	if mode == "" {
		mode = "tun"
	}
	order := spec.PathOrder
	if len(order) == 0 {
		order = []string{"direct", "consumer"}
	}
	bias := spec.Bias
	if bias == nil {
		bias = defaultBias
	}
	endpoint := map[string]string{"direct": r.Peer.Direct, "consumer": r.Peer.Consumer}
	var sb strings.Builder
	fmt.Fprintf(&sb, "name: %s\n", r.Side.Name)
	fmt.Fprintf(&sb, "privateKeyFile: %s\n", filepath.Join(r.Dir, "key"))
	fmt.Fprintf(&sb, "listenPort: %d\nmode: %s\n", relayPort, mode)
	fmt.Fprintf(&sb, "addresses: [%s/32]\n", r.Side.Overlay)
	fmt.Fprintf(&sb, "exports: [%s]\n", r.Side.Exports)
	fmt.Fprintf(&sb, "admin: %s\n", adminAddr)
	sb.WriteString("log: {level: info, format: text}\n")
	sb.WriteString(spec.ExtraYAML)
	sb.WriteString("peers:\n")
	fmt.Fprintf(&sb, "  - name: %s\n", r.Peer.Name)
	fmt.Fprintf(&sb, "    publicKey: %s\n", r.peerPub)
	fmt.Fprintf(&sb, "    prefixes: [%s, %s/32]\n", r.Peer.PeerSees, r.Peer.Overlay)
	sb.WriteString("    paths:\n")
	for _, p := range order {
		fmt.Fprintf(&sb, "      - name: %s\n        endpoint: %s:%d\n", p, endpoint[p], relayPort)
		if b := bias[p]; b != "" {
			fmt.Fprintf(&sb, "        bias: %s\n", b)
		}
	}
	if spec.Overlap {
		fmt.Fprintf(&sb, "    seesUs:\n      - {real: %s, as: %s}\n", r.Side.Exports, r.Side.PeerSees)
	}
	return sb.String()
}

// WriteConfig (re)writes the config file for spec.
func (r *Relay) WriteConfig(spec RelaySpec) {
	r.t.Helper()
	spec.privateKey = r.spec.privateKey
	r.spec = spec
	r.writeFile(r.YAML(spec))
}

// writeFile replaces the config file atomically, so a SIGHUP never reads
// half a file.
func (r *Relay) writeFile(content string) {
	r.t.Helper()
	tmp := r.Config + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Rename(tmp, r.Config); err != nil {
		r.t.Fatal(err)
	}
}

// Start runs `relay run -c FILE` in the provider namespace and waits until
// its admin server answers.
func (r *Relay) Start() {
	r.t.Helper()
	if out, err := exec.Command(relayBin(r.t), "check", "-c", r.Config).CombinedOutput(); err != nil {
		r.t.Fatalf("relay check %s: %v: %s\n%s", r.Side.Name, err, out, r.YAML(r.spec))
	}
	r.Proc = r.Side.NS.Start(r.t, r.Side.Name, relayBin(r.t), "run", "-c", r.Config)
	waitFor(r.t, 15*time.Second, r.Side.Name+" admin server answers", func() (bool, string) {
		select {
		case <-r.Proc.Done():
			r.t.Fatalf("%s exited early:\n%s", r.Side.Name, r.Proc.Output())
		default:
		}
		_, err := r.Status()
		return err == nil, fmt.Sprint(err)
	})
}

// Stop sends SIGTERM and checks the relay exits 0 within the budget and
// leaves nothing behind in its namespace.
func (r *Relay) Stop() {
	r.t.Helper()
	start := time.Now()
	if err := syscall.Kill(r.Proc.Pid(), syscall.SIGTERM); err != nil {
		r.t.Fatalf("SIGTERM %s: %v", r.Side.Name, err)
	}
	timer := time.NewTimer(exitBudget)
	defer timer.Stop()
	select {
	case <-r.Proc.Done():
	case <-timer.C:
		r.t.Errorf("%s did not exit within %v of SIGTERM", r.Side.Name, exitBudget)
	}
	// Reaps (and kills, if still running); the process's own exit status
	// comes back as an error unless it was 0.
	if err := r.Proc.Stop(syscall.SIGKILL); err != nil {
		r.t.Errorf("%s exit after SIGTERM: %v\n%s", r.Side.Name, err, r.Proc.Output())
	}
	r.t.Logf("%s exited %v after SIGTERM", r.Side.Name, time.Since(start).Round(time.Millisecond))
	if left := leftovers(r.t, r.Side); len(left) > 0 {
		r.t.Errorf("after SIGTERM, %s still has:\n%s", r.Side.Name, strings.Join(left, "\n"))
	}
}

// Status reads /status through `relay status --json` inside the namespace.
func (r *Relay) Status() (*status.Status, error) {
	out, err := r.Side.NS.Output(relayBin(r.t), "status", "--admin", adminAddr, "--json")
	if err != nil {
		return nil, err
	}
	var st status.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		return nil, fmt.Errorf("status JSON: %w: %s", err, out)
	}
	return &st, nil
}

// PeerStatus returns the status of the relay's only peer.
func (r *Relay) PeerStatus() (*status.PeerStatus, error) {
	st, err := r.Status()
	if err != nil {
		return nil, err
	}
	for i := range st.Peers {
		if st.Peers[i].Name == r.Peer.Name {
			return &st.Peers[i], nil
		}
	}
	return nil, fmt.Errorf("peer %s not in status", r.Peer.Name)
}

// WaitActive waits until the peer is reachable over path.
func (r *Relay) WaitActive(path string, within time.Duration) *status.PeerStatus {
	r.t.Helper()
	var last *status.PeerStatus
	waitFor(r.t, within, fmt.Sprintf("%s: peer %s active on %q", r.Side.Name, r.Peer.Name, path), func() (bool, string) {
		ps, err := r.PeerStatus()
		if err != nil {
			return false, err.Error()
		}
		last = ps
		return ps.Reachable && ps.ActivePath == path, fmt.Sprintf("reachable=%v active=%q", ps.Reachable, ps.ActivePath)
	})
	return last
}

// waitFor polls cond every 100 ms until it holds or the deadline passes;
// the deadlines are generous, so a slow machine only makes a test slower.
func waitFor(t *testing.T, within time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		ok, detail := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s (last: %s)", within, what, detail)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
