package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/liqo-relay/relay/internal/core/keys"
)

// A pair produced by `wg genkey | tee priv | wg pubkey`.
const (
	vectorPrivate = "yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk="
	vectorPublic  = "HIgo9xNzJMWLKASShiTqIybxZ0U3wGLiUeJ1PKf8ykw="
)

// testKey returns a distinct, valid, nonzero public key for each i.
func testKey(i byte) keys.Public {
	var k keys.Public
	for j := range k {
		k[j] = i
	}
	return k
}

// testPrivate returns a distinct, valid, nonzero private key for each i.
func testPrivate(i byte) keys.Private {
	var k keys.Private
	for j := range k {
		k[j] = i
	}
	return k
}

func mustPrivate(t testing.TB, s string) keys.Private {
	t.Helper()
	k, err := keys.ParsePrivate(s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// expand replaces the placeholders used by the YAML fixtures of the tests:
// $PRIV (our private key), $OWNPUB (its public key) and $K1..$K3 (peer
// public keys).
func expand(s string) string {
	return strings.NewReplacer(
		"$PRIV", vectorPrivate,
		"$OWNPUB", vectorPublic,
		"$K1", testKey(1).String(),
		"$K2", testKey(2).String(),
		"$K3", testKey(3).String(),
	).Replace(s)
}

// head is the top of a valid configuration without peers; cases append to
// it fields it does not set.
const head = `name: provider-a
privateKey: $PRIV
addresses: [100.80.0.1/32]
exports: [10.244.0.0/16]
`

// onePeer is head with one valid peer; peer fields can be appended at the
// indentation of "    ".
const onePeer = head + `peers:
  - name: provider-b
    publicKey: $K1
    prefixes: [10.72.0.0/16]
    paths:
      - {name: direct, endpoint: 192.0.2.10:51900}
`

func mustParse(t testing.TB, doc string) *Config {
	t.Helper()
	c, err := Parse([]byte(expand(doc)))
	if err != nil {
		t.Fatalf("Parse:\n%s\nerror:\n%v", expand(doc), err)
	}
	return c
}

// parseErrors parses doc and returns its problems, failing the test if it
// parses or if the error is not an Errors.
func parseErrors(t testing.TB, doc string) Errors {
	t.Helper()
	c, err := Parse([]byte(expand(doc)))
	if err == nil {
		t.Fatalf("Parse:\n%s\nsucceeded, want an error", expand(doc))
	}
	if c != nil {
		t.Errorf("Parse returned a Config along with an error")
	}
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Parse error %T is not an Errors: %v", err, err)
	}
	return errs
}
