package agent_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/liqo-relay/relay/internal/agent"
	"github.com/liqo-relay/relay/internal/core/config"
)

const (
	adminToken = "a-long-enough-admin-token-42"
	// A pair from `wg genkey | tee priv | wg pubkey`.
	testPriv = "yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk="
)

func udpPort(t testing.TB) uint16 {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return uint16(c.LocalAddr().(*net.UDPAddr).Port)
}

func secret(t *testing.T, dir, name, data string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// netstackConfig is a relay without peers (no privileges needed), its key
// inline, with the given admin mapping.
func netstackConfig(t *testing.T, adminYAML string) *config.Config {
	t.Helper()
	cfg, err := config.Parse(fmt.Appendf(nil, "name: provider-a\nprivateKey: %s\nlistenPort: %d\nmode: netstack\naddresses: [100.80.0.1/32]\nadmin: %s\n",
		testPriv, udpPort(t), adminYAML))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func runAdminAgent(t *testing.T, a *agent.Agent) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

func getAuth(t *testing.T, addr, path, token string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestAdminTokenAndMetricsListen runs a relay with admin.tokenFile and
// admin.metricsListen: /status needs the token on admin.listen, and the
// metrics address serves /healthz, /readyz and /metrics but not /status or
// /ping.
func TestAdminTokenAndMetricsListen(t *testing.T) {
	tok := secret(t, t.TempDir(), "token", adminToken+"\n", 0o400)
	cfg := netstackConfig(t, fmt.Sprintf("{listen: '127.0.0.1:0', metricsListen: '127.0.0.1:0', tokenFile: %s}", tok))
	a, err := agent.New(cfg, agent.Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	runAdminAgent(t, a)
	waitFor(t, waitTimeout, "both admin servers to listen", func() bool { return a.AdminAddr() != nil && a.MetricsAddr() != nil })
	main, metrics := a.AdminAddr().String(), a.MetricsAddr().String()
	waitFor(t, waitTimeout, "ready", func() bool { return getAuth(t, metrics, "/readyz", "") == http.StatusOK })

	for _, tc := range []struct {
		addr, path, token string
		want              int
	}{
		{main, "/status", "", http.StatusUnauthorized},
		{main, "/status", "wrong-token-but-long-enough", http.StatusUnauthorized},
		{main, "/status", adminToken, http.StatusOK},
		{main, "/ping?peer=nobody", "", http.StatusUnauthorized},
		{main, "/ping?peer=nobody", adminToken, http.StatusNotFound},
		{main, "/healthz", "", http.StatusOK},
		{main, "/metrics", "", http.StatusOK},
		{metrics, "/healthz", "", http.StatusOK},
		{metrics, "/readyz", "", http.StatusOK},
		{metrics, "/metrics", "", http.StatusOK},
		{metrics, "/status", adminToken, http.StatusNotFound},
		{metrics, "/ping?peer=nobody", adminToken, http.StatusNotFound},
	} {
		if got := getAuth(t, tc.addr, tc.path, tc.token); got != tc.want {
			t.Errorf("GET %s%s (token %q): %d, want %d", tc.addr, tc.path, tc.token, got, tc.want)
		}
	}
}

// TestAdminRefusals: New refuses an admin token file that is too open or
// too short, and an admin address off loopback without a token, even one
// set in code.
func TestAdminRefusals(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, admin string
		opts        agent.Options
		want        []string
	}{
		{"token file world readable", fmt.Sprintf("{tokenFile: %s}", secret(t, dir, "t1", adminToken, 0o644)),
			agent.Options{}, []string{"admin.tokenFile", "permissions too open", "mode 0644"}},
		{"token too short", fmt.Sprintf("{tokenFile: %s}", secret(t, dir, "t2", "short\n", 0o600)),
			agent.Options{}, []string{"admin.tokenFile", "5 characters, want at least 16"}},
		{"token file missing", fmt.Sprintf("{tokenFile: %s}", filepath.Join(dir, "none")),
			agent.Options{}, []string{"admin.tokenFile", "no such file"}},
		{"override off loopback", "'127.0.0.1:0'", agent.Options{AdminAddr: "0.0.0.0:0"},
			[]string{`admin.listen: "0.0.0.0:0" is not a loopback address and no admin.tokenFile`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Logger = testLogger(t)
			a, err := agent.New(netstackConfig(t, tc.admin), tc.opts)
			if err == nil {
				a.Close()
				t.Fatal("New succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestPrivateKeyFileChecks: LoadFile refuses a key file that group or
// others can read, or that is not a regular file, and accepts one laid out
// as a Kubernetes Secret volume with defaultMode 0400 (symbolic links
// through ..data).
func TestPrivateKeyFileChecks(t *testing.T) {
	load := func(t *testing.T, keyPath string) error {
		dir := t.TempDir()
		cfgPath := filepath.Join(dir, "relay.yaml")
		doc := fmt.Sprintf("name: provider-a\nprivateKeyFile: %s\nlistenPort: 51900\nmode: netstack\naddresses: [100.80.0.1/32]\n", keyPath)
		if err := os.WriteFile(cfgPath, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := agent.LoadFile(cfgPath)
		if err == nil && cfg.PrivateKey.Reveal() != testPriv {
			t.Errorf("LoadFile read a different key")
		}
		return err
	}
	dir := t.TempDir()
	vol := filepath.Join(dir, "vol")
	if err := os.MkdirAll(filepath.Join(vol, "..2024_01_01"), 0o755); err != nil {
		t.Fatal(err)
	}
	secret(t, filepath.Join(vol, "..2024_01_01"), "key", testPriv+"\n", 0o400)
	if err := os.Symlink("..2024_01_01", filepath.Join(vol, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..data/key", filepath.Join(vol, "key")); err != nil {
		t.Fatal(err)
	}
	if err := load(t, filepath.Join(vol, "key")); err != nil {
		t.Errorf("Secret volume with defaultMode 0400: %v", err)
	}
	if err := load(t, secret(t, dir, "k600", testPriv+"\n", 0o600)); err != nil {
		t.Errorf("0600 key file: %v", err)
	}
	for _, tc := range []struct{ name, path, want string }{
		{"0644", secret(t, dir, "k644", testPriv+"\n", 0o644), "permissions too open: mode 0644"},
		{"0640", secret(t, dir, "k640", testPriv+"\n", 0o640), "permissions too open: mode 0640"},
		{"directory", dir, "not a regular file (it is a directory)"},
		{"too large", secret(t, dir, "big", strings.Repeat(testPriv+"\n", 100), 0o600), "too large"},
	} {
		err := load(t, tc.path)
		if err == nil || !strings.Contains(err.Error(), "privateKeyFile: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: LoadFile error %v, want privateKeyFile: ... %s", tc.name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), testPriv) {
			t.Errorf("%s: the error quotes the key", tc.name)
		}
	}
}
