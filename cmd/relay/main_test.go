package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/liqo-relay/relay/internal/core/keys"
)

// runCmd runs the command line in-process and returns exit code, stdout
// and stderr.
func runCmd(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestGenkeyPubkeyRoundTrip(t *testing.T) {
	code, priv, stderr := runCmd(t, "", "genkey")
	if code != 0 {
		t.Fatalf("genkey: exit %d: %s", code, stderr)
	}
	k, err := keys.ParsePrivate(strings.TrimSpace(priv))
	if err != nil {
		t.Fatalf("genkey printed %q: %v", priv, err)
	}
	if k[0]&7 != 0 || k[31]&0x80 != 0 || k[31]&0x40 == 0 {
		t.Errorf("genkey key is not clamped: %x", k)
	}
	code, pub, stderr := runCmd(t, priv, "pubkey")
	if code != 0 {
		t.Fatalf("pubkey: exit %d: %s", code, stderr)
	}
	if got, want := strings.TrimSpace(pub), k.PublicKey().String(); got != want {
		t.Errorf("pubkey printed %q, keys.Public says %q", got, want)
	}
	if _, again, _ := runCmd(t, "", "genkey"); again == priv {
		t.Errorf("genkey printed the same key twice")
	}
}

// TestPubkeyVector is the vector that `wg pubkey` gives for this key.
func TestPubkeyVector(t *testing.T) {
	const priv = "yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk="
	const pub = "HIgo9xNzJMWLKASShiTqIybxZ0U3wGLiUeJ1PKf8ykw="
	for _, in := range []string{priv, priv + "\n", "  " + priv + "  \n"} {
		code, out, stderr := runCmd(t, in, "pubkey")
		if code != 0 || out != pub+"\n" {
			t.Errorf("pubkey <<%q: exit %d, stdout %q, stderr %q; want %q", in, code, out, stderr, pub)
		}
	}
	for _, bad := range []string{"", "not a key", priv[:20]} {
		if code, _, stderr := runCmd(t, bad, "pubkey"); code != 1 || stderr == "" {
			t.Errorf("pubkey <<%q: exit %d, stderr %q; want exit 1 and a message", bad, code, stderr)
		}
	}
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const validConfig = `name: provider-a
privateKey: yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=
mode: netstack
addresses: [100.80.0.1/32]
exports: [10.244.1.0/24]
peers:
  - name: provider-b
    publicKey: xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg=
    prefixes: [100.80.0.2/32, 10.244.2.0/24]
    paths:
      - {name: direct, endpoint: "192.0.2.10:51900"}
      - {name: consumer, endpoint: "10.70.0.9:51900"}
`

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good.yaml", validConfig)
	for _, flag := range []string{"-c", "--config"} {
		code, out, stderr := runCmd(t, "", "check", flag, good)
		if code != 0 || !strings.Contains(out, "valid") {
			t.Errorf("check %s good.yaml: exit %d, stdout %q, stderr %q", flag, code, out, stderr)
		}
	}

	// Four problems in one file: every one must be reported.
	bad := writeFile(t, dir, "bad.yaml", `name: Provider_A
privateKey: yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=
listenport: 51900
mode: netstack
addresses: [100.80.0.1/32]
exports: [10.244.1.0/16]
peers:
  - name: provider-b
    publicKey: xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg=
    prefixes: [10.72.0.0/16]
    paths:
      - {name: direct, endpoint: "foo"}
`)
	code, out, stderr := runCmd(t, "", "check", "-c", bad)
	if code != 1 {
		t.Errorf("check bad.yaml: exit %d, want 1", code)
	}
	if out != "" {
		t.Errorf("check bad.yaml printed on stdout: %q", out)
	}
	for _, want := range []string{
		`name: "Provider_A" is not a DNS-1123 label`,
		`listenport: unknown field (did you mean "listenPort"?)`,
		`exports[0]: 10.244.1.0/16 has host bits set`,
		`peers[0].paths[0].endpoint: "foo" is not host:port`,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("check bad.yaml: stderr lacks %q:\n%s", want, stderr)
		}
	}

	if code, _, stderr := runCmd(t, "", "check", "-c", filepath.Join(dir, "missing.yaml")); code != 1 || !strings.Contains(stderr, "missing.yaml") {
		t.Errorf("check of a missing file: exit %d, stderr %q", code, stderr)
	}
	if code, _, _ := runCmd(t, "", "check"); code != 2 {
		t.Errorf("check without -c: exit %d, want 2", code)
	}
}

func TestUsageAndVersion(t *testing.T) {
	code, _, stderr := runCmd(t, "", "frobnicate")
	if code != 2 || !strings.Contains(stderr, `unknown command "frobnicate"`) || !strings.Contains(stderr, "Usage:") {
		t.Errorf("unknown command: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runCmd(t, ""); code != 2 || !strings.Contains(stderr, "Usage:") {
		t.Errorf("no command: exit %d, stderr %q", code, stderr)
	}
	code, out, _ := runCmd(t, "", "version")
	if code != 0 || !strings.HasPrefix(out, "relay ") {
		t.Errorf("version: exit %d, stdout %q", code, out)
	}
	if code, out, _ := runCmd(t, "", "help"); code != 0 || !strings.Contains(out, "Commands:\n  run ") {
		t.Errorf("help: exit %d, stdout %q", code, out)
	}
	if code, _, _ := runCmd(t, "", "run", "--no-such-flag"); code != 2 {
		t.Errorf("run with an unknown flag: exit %d, want 2", code)
	}
	if code, _, stderr := runCmd(t, "", "run", "--sockets", "fast", "-c", "relay.yaml"); code != 2 || !strings.Contains(stderr, `--sockets "fast"`) {
		t.Errorf("run --sockets fast: exit %d, stderr %q; want 2 naming the flag", code, stderr)
	}
}
