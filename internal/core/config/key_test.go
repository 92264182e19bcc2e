package config

import (
	"strings"
	"testing"
)

// A pair produced by `wg genkey | tee priv | wg pubkey`.
const (
	vectorPrivate = "yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk="
	vectorPublic  = "HIgo9xNzJMWLKASShiTqIybxZ0U3wGLiUeJ1PKf8ykw="
)

func TestKeyVector(t *testing.T) {
	priv, err := ParseKey(vectorPrivate)
	if err != nil {
		t.Fatal(err)
	}
	if got := priv.String(); got != vectorPrivate {
		t.Errorf("String() = %s, want %s", got, vectorPrivate)
	}
	if got := priv.PublicKey().String(); got != vectorPublic {
		t.Errorf("PublicKey() = %s, want %s", got, vectorPublic)
	}
	// The key file written by `wg genkey > key` ends in a newline.
	if k, err := ParseKey(vectorPrivate + "\n"); err != nil || k != priv {
		t.Errorf("ParseKey with newline = %v, %v", k, err)
	}
}

func TestKeyClamping(t *testing.T) {
	// Clamping ignores the low 3 bits and the top bit, so keys differing
	// only there have the same public key.
	priv, _ := ParseKey(vectorPrivate)
	other := priv
	other[0] ^= 7
	other[31] ^= 0x80
	if priv.PublicKey() != other.PublicKey() {
		t.Error("keys differing only in clamped bits have different public keys")
	}
	if priv != mustKey(t, vectorPrivate) {
		t.Error("PublicKey modified its receiver")
	}
}

func TestParseKeyErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "has 0 bytes"},
		{"not base64!", "not valid base64"},
		{"AAAA", "has 3 bytes"},
		{strings.Repeat("A", 43) + "=", ""}, // valid: 32 zero bytes
		{"yAnz5TF-lXXJte14tji3zlMNq-hd2rYUIgJBgB3fBmk=", "not valid base64"}, // URL alphabet
		{strings.Repeat("A", 44) + "AAAA", "has 36 bytes"},
	} {
		_, err := ParseKey(tc.in)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("ParseKey(%q) = %v, want success", tc.in, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("ParseKey(%q) = %v, want error containing %q", tc.in, err, tc.want)
		}
	}
}

func TestKeyHexAndZero(t *testing.T) {
	var k Key
	if !k.IsZero() {
		t.Error("zero key is not IsZero")
	}
	k[31] = 0xab
	if k.IsZero() {
		t.Error("nonzero key is IsZero")
	}
	if got, want := k.Hex(), strings.Repeat("00", 31)+"ab"; got != want {
		t.Errorf("Hex() = %s, want %s", got, want)
	}
}

func mustKey(t testing.TB, s string) Key {
	t.Helper()
	k, err := ParseKey(s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
