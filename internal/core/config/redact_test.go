package config

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/liqo-relay/relay/internal/core/keys"
)

// TestConfigNeverPrintsPrivateKeys formats a whole Config holding a private
// and a next private key with every fmt verb, slog handler and text
// encoder, and checks that neither key's base64 nor its hex (nor its
// decimal bytes) appears, while the peers' public keys still print. The
// redaction itself is keys.Private's (internal/core/keys); this checks
// that every way the Config reaches it goes through it.
func TestConfigNeverPrintsPrivateKeys(t *testing.T) {
	c := mustParse(t, onePeer+"nextPrivateKey: "+testPrivate(42).Reveal()+"\n")
	if c.PrivateKey != mustPrivate(t, vectorPrivate) || c.NextPrivateKey != testPrivate(42) {
		t.Fatal("the fixture does not hold both private keys")
	}
	var secrets []string
	for _, k := range []keys.Private{c.PrivateKey, c.NextPrivateKey} {
		secrets = append(secrets, k.Reveal(), hex.EncodeToString(k[:]), strings.ToUpper(hex.EncodeToString(k[:])),
			fmt.Sprint([keys.Len]byte(k)), fmt.Sprintf("%#v", [keys.Len]byte(k))[len("[32]uint8{"):40])
	}

	var outs []string
	for _, v := range []any{*c, c, []Config{*c}, map[string]Config{"c": *c}} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "% x", "%d", "%o", "%b", "%T"} {
			outs = append(outs, fmt.Sprintf(verb, v))
		}
		outs = append(outs, fmt.Sprint(v), fmt.Sprintln(v))
		j, err := json.Marshal(v)
		if err != nil {
			t.Errorf("json.Marshal(%T): %v", v, err)
		}
		y, err := yaml.Marshal(v)
		if err != nil {
			t.Errorf("yaml.Marshal(%T): %v", v, err)
		}
		outs = append(outs, string(j), string(y))
	}
	var buf bytes.Buffer
	opts := &slog.HandlerOptions{Level: slog.LevelDebug}
	for _, h := range []slog.Handler{slog.NewTextHandler(&buf, opts), slog.NewJSONHandler(&buf, opts)} {
		l := slog.New(h)
		l.Debug("config", "cfg", c, "cfgv", *c, "group", slog.GroupValue(slog.Any("cfg", c)))
	}
	outs = append(outs, buf.String())

	for _, out := range outs {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("output contains a private key (%q):\n%s", s, out)
			}
		}
	}
	if pub := c.Peers[0].PublicKey; !strings.Contains(fmt.Sprintf("%+v", *c), pub.String()) {
		t.Error("a peer's public key no longer prints as base64")
	}
}
