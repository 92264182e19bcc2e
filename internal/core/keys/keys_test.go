package keys

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// A pair produced by `wg genkey | tee priv | wg pubkey`.
const (
	vectorPrivate = "yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk="
	vectorPublic  = "HIgo9xNzJMWLKASShiTqIybxZ0U3wGLiUeJ1PKf8ykw="
)

func mustPrivate(t testing.TB, s string) Private {
	t.Helper()
	k, err := ParsePrivate(s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestKeyVector(t *testing.T) {
	priv := mustPrivate(t, vectorPrivate)
	if got := priv.Reveal(); got != vectorPrivate {
		t.Errorf("Reveal() = %s, want %s", got, vectorPrivate)
	}
	if got := priv.PublicKey().String(); got != vectorPublic {
		t.Errorf("PublicKey() = %s, want %s", got, vectorPublic)
	}
	pub, err := ParsePublic(vectorPublic)
	if err != nil || pub != priv.PublicKey() {
		t.Errorf("ParsePublic = %v, %v; want %v", pub, err, priv.PublicKey())
	}
	// The key file written by `wg genkey > key` ends in a newline.
	if k, err := ParsePrivate(vectorPrivate + "\n"); err != nil || k != priv {
		t.Errorf("ParsePrivate with newline: equal %v, %v", k == priv, err)
	}
}

func TestKeyClamping(t *testing.T) {
	// Clamping ignores the low 3 bits and the top bit, so keys differing
	// only there have the same public key.
	priv := mustPrivate(t, vectorPrivate)
	other := priv
	other[0] ^= 7
	other[31] ^= 0x80
	if priv.PublicKey() != other.PublicKey() {
		t.Error("keys differing only in clamped bits have different public keys")
	}
	if priv != mustPrivate(t, vectorPrivate) {
		t.Error("PublicKey modified its receiver")
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "has 0 bytes"},
		{"not base64!", "not valid base64"},
		{"AAAA", "has 3 bytes"},
		{strings.Repeat("A", 43) + "=", ""}, // valid: 32 zero bytes
		{"yAnz5TF-lXXJte14tji3zlMNq-hd2rYUIgJBgB3fBmk=", "not valid base64"}, // URL alphabet
		{strings.Repeat("A", 44) + "AAAA", "has 36 bytes"},
	} {
		_, perr := ParsePublic(tc.in)
		_, kerr := ParsePrivate(tc.in)
		for _, err := range []error{perr, kerr} {
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Parse(%q) = %v, want success", tc.in, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Parse(%q) = %v, want error containing %q", tc.in, err, tc.want)
			}
		}
		if kerr != nil && tc.in != "" && strings.Contains(kerr.Error(), tc.in) {
			t.Errorf("ParsePrivate(%q) error quotes its input: %v", tc.in, kerr)
		}
	}
}

func TestHexAndZero(t *testing.T) {
	var k Public
	var p Private
	if !k.IsZero() || !p.IsZero() {
		t.Error("zero key is not IsZero")
	}
	k[31], p[31] = 0xab, 0xab
	if k.IsZero() || p.IsZero() {
		t.Error("nonzero key is IsZero")
	}
	want := strings.Repeat("00", 31) + "ab"
	if k.Hex() != want || p.Hex() != want {
		t.Errorf("Hex() = %s and %s, want %s", k.Hex(), p.Hex(), want)
	}
}

// TestGenerate: a generated key is the reader's bytes, clamped as
// `wg genkey` clamps them; a seeded reader gives the same key every time,
// a short one an error, and NewPrivate distinct keys.
func TestGenerate(t *testing.T) {
	seeded := func() io.Reader { return rand.NewChaCha8([32]byte{1, 2, 3}) }
	a, err := Generate(seeded())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(seeded())
	if a != b {
		t.Error("the same seed gave different keys")
	}
	var raw [Len]byte
	_, _ = io.ReadFull(seeded(), raw[:])
	raw[0] &= 248
	raw[31] = (raw[31] & 127) | 64
	if a != Private(raw) {
		t.Error("Generate did not return the reader's bytes, clamped")
	}
	if a[0]&7 != 0 || a[31]&0x80 != 0 || a[31]&0x40 == 0 {
		t.Errorf("generated key is not clamped: %08b … %08b", a[0], a[31])
	}
	if _, err := Generate(bytes.NewReader(make([]byte, Len-1))); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("Generate from a short reader = %v, want %v", err, io.ErrUnexpectedEOF)
	}
	x, err1 := NewPrivate()
	y, err2 := NewPrivate()
	if err1 != nil || err2 != nil || x == y || x.IsZero() {
		t.Errorf("NewPrivate: %v, %v, distinct %v", err1, err2, x != y)
	}
}
