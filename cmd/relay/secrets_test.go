package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/keys"
)

const testAdminToken = "cli-admin-token-0123456789abcdef"

// pairConfig is a netstack relay with a private key file, a debug log,
// admin.tokenFile and admin.metricsListen, and one peer on loopback.
func pairConfig(name, keyFile, tokenFile string, port int, format, peer, peerPub string, peerPort int, bias string) string {
	self, other := "1", "2"
	if name == "provider-b" {
		self, other = "2", "1"
	}
	return fmt.Sprintf(`name: %s
privateKeyFile: %s
listenPort: %d
mode: netstack
addresses: [100.80.0.%s/32]
exports: [10.244.%s.0/24]
admin: {listen: '127.0.0.1:0', metricsListen: '127.0.0.1:0', tokenFile: %s}
log: {level: debug, format: %s}
peers:
  - name: %s
    publicKey: %s
    prefixes: [100.80.0.%s/32, 10.244.%s.0/24]
    paths:
      - {name: direct, endpoint: "127.0.0.1:%d", bias: %s}
`, name, keyFile, port, self, self, tokenFile, format, peer, peerPub, other, other, peerPort, bias)
}

// TestNoPrivateKeyInLogs runs two relays peered on loopback with debug
// logging, through startup, a WireGuard handshake, status, ping, a reload
// and shutdown, and checks that no log line of either contains either
// private key in base64 or hex. It also drives `relay status` and `relay
// ping` against the token-protected admin server.
func TestNoPrivateKeyInLogs(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) { noPrivateKeyInLogs(t, format) })
	}
}

func noPrivateKeyInLogs(t *testing.T, format string) {
	dir := t.TempDir()
	privs, pubs, files := genPairKeys(t, dir)
	token := writeFile(t, dir, "token", testAdminToken+"\n")
	port := map[string]int{"provider-a": freeUDPPort(t), "provider-b": freeUDPPort(t)}
	peerOf := map[string]string{"provider-a": "provider-b", "provider-b": "provider-a"}
	cfgFor := func(name, bias string) string {
		p := peerOf[name]
		return pairConfig(name, files[name], token, port[name], format, p, pubs[p], port[p], bias)
	}
	adminRe := regexp.MustCompile(`admin server listening.*?addr[=":]+([0-9.:]+)`)
	procs := map[string]*proc{}
	cfgPaths := map[string]string{}
	admins := map[string]string{}
	for _, name := range []string{"provider-a", "provider-b"} {
		cfgPaths[name] = writeFile(t, dir, name+".yaml", cfgFor(name, "0s"))
		procs[name] = startRelay(t, "run", "-c", cfgPaths[name])
		line, _ := procs[name].waitLine(t, 0, adminRe, 20*time.Second)
		admins[name] = adminRe.FindStringSubmatch(line)[1]
	}
	a := procs["provider-a"]

	// Without the token: refused, with a hint. With -c: the token file of
	// the config (the address still from --admin: the config says port 0).
	code, _, stderr := runCmd(t, "", "status", "--admin", admins["provider-a"])
	if code != 1 || !strings.Contains(stderr, "admin token is missing or wrong") || !strings.Contains(stderr, "--token-file") {
		t.Errorf("status without token: exit %d, %s", code, stderr)
	}
	waitDirectHandshake(t, admins["provider-a"], cfgPaths["provider-a"])
	if code, out, stderr := runCmd(t, "", "ping", "provider-b", "--admin", admins["provider-a"], "--token-file", token); code != 0 || !strings.Contains(out, "direct") {
		t.Errorf("ping --token-file: exit %d: %s%s", code, out, stderr)
	}

	// A reload (a new bias), then shutdown.
	writeFile(t, dir, "provider-a.yaml", cfgFor("provider-a", "1ms"))
	if err := a.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	a.waitLine(t, 0, regexp.MustCompile(`configuration applied`), 20*time.Second)
	stopRelays(t, procs)
	checkLogsHoldNoKey(t, procs, privs)
}

// genPairKeys makes the keys of provider-a and provider-b with `relay
// genkey`, each in a 0600 key file in dir, and returns them by relay name
// with their public keys and the files' paths.
func genPairKeys(t *testing.T, dir string) (privs map[string]keys.Private, pubs, files map[string]string) {
	t.Helper()
	privs, pubs, files = map[string]keys.Private{}, map[string]string{}, map[string]string{}
	for _, name := range []string{"provider-a", "provider-b"} {
		code, out, stderr := runCmd(t, "", "genkey")
		if code != 0 {
			t.Fatalf("genkey: %s", stderr)
		}
		k, err := keys.ParsePrivate(out)
		if err != nil {
			t.Fatal(err)
		}
		privs[name], pubs[name] = k, k.PublicKey().String()
		files[name] = writeFile(t, dir, name+".key", out) // 0600
	}
	return privs, pubs, files
}

// waitDirectHandshake polls `relay status -c CFG --json` on admin until
// the relay's one peer is active on its direct path with a handshake.
func waitDirectHandshake(t *testing.T, admin, cfgPath string) {
	t.Helper()
	type status struct {
		Peers []struct {
			ActivePath    string `json:"activePath"`
			LastHandshake string `json:"lastHandshake"`
		} `json:"peers"`
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, out, stderr := runCmd(t, "", "status", "--admin", admin, "-c", cfgPath, "--json")
		if code != 0 {
			t.Fatalf("status -c: exit %d: %s", code, stderr)
		}
		var st status
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatal(err)
		}
		if len(st.Peers) == 1 && st.Peers[0].ActivePath == "direct" && st.Peers[0].LastHandshake != "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no handshake on the direct path:\n%s", out)
		}
		time.Sleep(100 * time.Millisecond) // real: polls the relay process for its first handshake
	}
}

// stopRelays sends SIGTERM to every relay and waits until each has exited.
func stopRelays(t *testing.T, procs map[string]*proc) {
	t.Helper()
	for _, p := range procs {
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
	}
	for name, p := range procs {
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s did not exit", name)
		}
	}
}

// checkLogsHoldNoKey fails if a log line of any relay holds a private key
// of privs in base64 (padded or not) or hex, or if a log is incomplete or
// has no debug line at all.
func checkLogsHoldNoKey(t *testing.T, procs map[string]*proc, privs map[string]keys.Private) {
	t.Helper()
	var secrets []string
	for _, k := range privs {
		h := hex.EncodeToString(k[:])
		secrets = append(secrets, k.Reveal(), strings.TrimRight(k.Reveal(), "="), h, strings.ToUpper(h))
	}
	debug := 0
	for name, p := range procs {
		lines := p.log()
		for _, line := range lines {
			if strings.Contains(line, "DEBUG") {
				debug++
			}
			for _, s := range secrets {
				if strings.Contains(line, s) {
					t.Errorf("%s logged a private key: %s", name, line)
				}
			}
		}
		if len(lines) == 0 || !strings.Contains(strings.Join(lines, "\n"), "relay stopped") {
			t.Errorf("%s: log incomplete (%d lines)", name, len(lines))
		}
	}
	if debug == 0 {
		t.Error("no debug line logged: the test does not cover the debug level")
	}
	t.Logf("%d debug lines checked", debug)
}
