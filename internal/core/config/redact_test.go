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
)

// TestPrivateKeyNeverPrints formats a private key, alone and inside a
// Config, with every fmt verb, slog handler and text encoder, and checks
// that neither its base64 nor its hex (nor its decimal bytes) appears,
// while the public key still prints.
func TestPrivateKeyNeverPrints(t *testing.T) {
	k, err := ParsePrivateKey(vectorPrivate)
	if err != nil {
		t.Fatal(err)
	}
	c := mustParse(t, onePeer)
	if c.PrivateKey != k {
		t.Fatal("onePeer does not use vectorPrivate")
	}
	secrets := []string{vectorPrivate, hex.EncodeToString(k[:]), strings.ToUpper(hex.EncodeToString(k[:])),
		fmt.Sprint([KeyLen]byte(k)), fmt.Sprintf("%#v", [KeyLen]byte(k))[len("[32]uint8{"):40]}

	var outs []string
	for _, v := range []any{k, &k, *c, c, []PrivateKey{k}, map[string]PrivateKey{"k": k}} {
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
		l.Debug("key", "k", k, "pk", &k, "cfg", c, "cfgv", *c, "group", slog.GroupValue(slog.Any("k", k)))
		l.Info("key", slog.Any("k", k))
	}
	outs = append(outs, buf.String())

	for _, out := range outs {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("output contains the private key (%q):\n%s", s, out)
			}
		}
	}
	if pub := c.Peers[0].PublicKey; fmt.Sprintf("%v", pub) != pub.String() || !strings.Contains(fmt.Sprintf("%+v", *c), pub.String()) {
		t.Error("a public key no longer prints as base64")
	}
	if got := fmt.Sprintf("%v|%s|%#v", k, k, k); got != "[redacted]|[redacted]|config.PrivateKey([redacted])" {
		t.Errorf("formatted key = %q", got)
	}
	if k.Reveal() != vectorPrivate || k.Hex() != hex.EncodeToString(k[:]) {
		t.Error("Reveal/Hex do not return the key")
	}
	if k.PublicKey().String() != vectorPublic {
		t.Error("PublicKey of a PrivateKey is wrong")
	}
}
