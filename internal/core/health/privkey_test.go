package health

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// TestPrivateKeyNeverPrints formats a private key, alone and inside a
// struct, with every fmt verb, both slog handlers and encoding/json, and
// checks that neither its base64 nor its hex nor its decimal bytes appear.
func TestPrivateKeyNeverPrints(t *testing.T) {
	k, _ := testKeyPair(t, 7)
	secrets := []string{
		base64.StdEncoding.EncodeToString(k[:]), hex.EncodeToString(k[:]), strings.ToUpper(hex.EncodeToString(k[:])),
		strings.Trim(fmt.Sprint([KeySize]byte(k)), "[]"), fmt.Sprintf("%#v", [KeySize]byte(k))[len("[32]uint8{"):40],
	}
	type holder struct {
		Name string
		Key  PrivateKey
	}
	h := holder{"a", k}
	var outs []string
	for _, v := range []any{k, &k, h, &h, []PrivateKey{k}, map[string]PrivateKey{"k": k}} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "% x", "%d", "%o", "%b", "%c", "%U"} {
			outs = append(outs, fmt.Sprintf(verb, v))
		}
		outs = append(outs, fmt.Sprint(v), fmt.Sprintln(v))
		j, err := json.Marshal(v)
		if err != nil {
			t.Errorf("json.Marshal(%T): %v", v, err)
		}
		outs = append(outs, string(j))
	}
	var buf bytes.Buffer
	opts := &slog.HandlerOptions{Level: slog.LevelDebug}
	for _, hd := range []slog.Handler{slog.NewTextHandler(&buf, opts), slog.NewJSONHandler(&buf, opts)} {
		l := slog.New(hd)
		l.Debug("key", "k", k, "pk", &k, "h", h, "group", slog.GroupValue(slog.Any("k", k)))
	}
	outs = append(outs, buf.String())
	for _, out := range outs {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("output contains the private key (%q):\n%s", s, out)
			}
		}
	}
	if got := fmt.Sprintf("%v|%s|%#v", k, k, k); got != "[redacted]|[redacted]|health.PrivateKey([redacted])" {
		t.Errorf("formatted key = %q", got)
	}
}
