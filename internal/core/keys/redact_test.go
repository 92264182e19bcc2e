package keys

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

// TestPrivateKeyNeverPrints formats a private key, alone and inside other
// values, with every fmt verb (%v, %s, %+v, %#v and the rest), both slog
// handlers, encoding/json and YAML, and checks that neither its base64 nor
// its hex nor its decimal bytes appear, while a public key beside it still
// prints as base64.
func TestPrivateKeyNeverPrints(t *testing.T) {
	k := mustPrivate(t, vectorPrivate)
	pub := k.PublicKey()
	secrets := []string{
		vectorPrivate, hex.EncodeToString(k[:]), strings.ToUpper(hex.EncodeToString(k[:])),
		strings.Trim(fmt.Sprint([Len]byte(k)), "[]"), fmt.Sprintf("%#v", [Len]byte(k))[len("[32]uint8{"):40],
	}
	type holder struct {
		Name string
		Key  Private
		Pub  Public
	}
	h := holder{"a", k, pub}
	var outs []string
	for _, v := range []any{k, &k, h, &h, []Private{k}, map[string]Private{"k": k}} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "% x", "%d", "%o", "%b", "%c", "%U", "%T"} {
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
	for _, hd := range []slog.Handler{slog.NewTextHandler(&buf, opts), slog.NewJSONHandler(&buf, opts)} {
		l := slog.New(hd)
		l.Debug("key", "k", k, "pk", &k, "h", h, "ph", &h, "group", slog.GroupValue(slog.Any("k", k)))
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
	if got := fmt.Sprintf("%v|%s|%+v|%#v|%q", k, k, k, k, k); got != `[redacted]|[redacted]|[redacted]|keys.Private([redacted])|"[redacted]"` {
		t.Errorf("formatted key = %q", got)
	}
	if j, _ := json.Marshal(k); string(j) != `"[redacted]"` {
		t.Errorf("JSON = %s", j)
	}
	if y, _ := yaml.Marshal(k); string(y) != "'[redacted]'\n" {
		t.Errorf("YAML = %q", y)
	}
	if fmt.Sprintf("%v", pub) != vectorPublic || !strings.Contains(fmt.Sprintf("%+v", h), vectorPublic) {
		t.Error("a public key no longer prints as base64")
	}
	if k.Reveal() != vectorPrivate || k.Hex() != hex.EncodeToString(k[:]) {
		t.Error("Reveal/Hex do not return the key")
	}
}
