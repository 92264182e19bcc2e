package main

import (
	"os"
	"strings"
	"testing"
)

func TestDialable(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:9586": "127.0.0.1:9586",
		"0.0.0.0:9586":   "127.0.0.1:9586",
		":9586":          "127.0.0.1:9586",
		"[::]:9586":      "[::1]:9586",
		"localhost:9586": "localhost:9586",
		"127.0.0.1:0":    `error: "127.0.0.1:0": port 0 is picked at start`,
	} {
		got, err := dialable(in)
		if err != nil {
			got = "error: " + err.Error()
		}
		if !strings.HasPrefix(got, want) {
			t.Errorf("dialable(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestAdminFlagsFromConfig: -c takes admin.listen and admin.tokenFile from
// the configuration, flags win, and the private key file is never read.
func TestAdminFlagsFromConfig(t *testing.T) {
	dir := t.TempDir()
	tok := writeFile(t, dir, "token", "a-token-from-the-config-file\n")
	cfg := writeFile(t, dir, "relay.yaml", "name: a\nprivateKeyFile: /nonexistent/key\naddresses: [100.80.0.1/32]\n"+
		"admin: {listen: '0.0.0.0:9600', tokenFile: "+tok+"}\n")
	f := adminFlags{config: cfg}
	c, err := f.client()
	if err != nil || c.Addr != "127.0.0.1:9600" || c.Token != "a-token-from-the-config-file" {
		t.Errorf("client() = %+v, %v", c, err)
	}
	f = adminFlags{config: cfg, addr: "127.0.0.1:1"}
	if c, err := f.client(); err != nil || c.Addr != "127.0.0.1:1" {
		t.Errorf("--admin does not win: %+v, %v", c, err)
	}
	open := writeFile(t, dir, "open-token", "a-token-from-the-config-file\n")
	if err := chmod(open, 0o644); err != nil {
		t.Fatal(err)
	}
	f = adminFlags{tokenFile: open}
	if _, err := f.client(); err == nil || !strings.Contains(err.Error(), "permissions too open") {
		t.Errorf("world-readable token file: %v", err)
	}
	if c, err := (&adminFlags{}).client(); err != nil || c.Addr != "127.0.0.1:9586" || c.Token != "" {
		t.Errorf("defaults: %+v, %v", c, err)
	}
}

func chmod(path string, mode os.FileMode) error { return os.Chmod(path, mode) }
