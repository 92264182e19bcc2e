package config

import (
	"strings"
	"testing"

	"github.com/liqo-relay/relay/internal/core/keys"
)

func TestRotationSettings(t *testing.T) {
	// Keys of the test configuration (helpers_test.go) and two fresh ones.
	base := mustParse(t, onePeer)
	own := base.PublicKey().String()
	peerKey := base.Peers[0].PublicKey.String()
	next := "gI6EdUSYvn8ugXOt8QQD6Yc+JyiZxIhp3GInSWRfWGE="
	nextPub := mustPrivate(t, next).PublicKey().String()
	other := testKey(9).String()
	for _, tc := range []struct {
		name, top, peer string
		want            []string // error substrings; none: valid
	}{
		{"nothing staged", "", "", nil},
		{"our next key", "nextPrivateKey: " + next + "\nkeyRotationDeadline: 1h\n", "", nil},
		{"a peer's next key", "", "    nextPublicKey: " + other + "\n", nil},
		{"next equals current private key", "nextPrivateKey: " + base.PrivateKey.Reveal() + "\n", "", []string{"nextPrivateKey: is the current private key"}},
		{"deadline out of range", "keyRotationDeadline: 200h\n", "", []string{"keyRotationDeadline: 200h0m0s is out of range"}},
		{"peer next is its current key", "", "    nextPublicKey: " + peerKey + "\n", []string{"peers[0].nextPublicKey: equals the peer's publicKey"}},
		{"peer next is our key", "", "    nextPublicKey: " + own + "\n", []string{"peers[0].nextPublicKey: is this relay's own public key"}},
		{"peer next is our next key", "nextPrivateKey: " + next + "\n", "    nextPublicKey: " + nextPub + "\n", []string{"peers[0].nextPublicKey: is this relay's own next public key"}},
		{"peer key is our next key", "nextPrivateKey: " + next + "\n", "    publicKey: " + nextPub + "\n", []string{"peers[0].publicKey: is this relay's own nextPublicKey"}},
		{"peer next not base64", "", "    nextPublicKey: not-base64!\n", []string{"peers[0].nextPublicKey: key is not valid base64"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := withPeerField(t, tc.top+onePeer, tc.peer)
			c, err := Parse([]byte(expand(doc)))
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v\n%s", err, doc)
				}
				if tc.top != "" && c.NextPrivateKey.IsZero() {
					t.Error("nextPrivateKey not decoded")
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted:\n%s", doc)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestRotationDefaultsAndRedaction(t *testing.T) {
	c := mustParse(t, "nextPrivateKey: gI6EdUSYvn8ugXOt8QQD6Yc+JyiZxIhp3GInSWRfWGE=\n"+onePeer)
	if c.RotationDeadline() != DefaultKeyRotationDeadline {
		t.Errorf("default deadline %v, want %v", c.RotationDeadline(), DefaultKeyRotationDeadline)
	}
	if (&Config{}).RotationDeadline() != DefaultKeyRotationDeadline {
		t.Error("a zero deadline (built in code) does not mean the default")
	}
	if !c.Redacted().NextPrivateKey.IsZero() {
		t.Error("Redacted kept nextPrivateKey")
	}
	if c.NextPublicKey() != c.NextPrivateKey.PublicKey() || (&Config{}).NextPublicKey() != (keys.Public{}) {
		t.Error("NextPublicKey")
	}
}

// withPeerField adds lines to the first peer of doc, after its name (or
// replaces its publicKey line when lines sets publicKey).
func withPeerField(t *testing.T, doc, lines string) string {
	t.Helper()
	if lines == "" {
		return doc
	}
	out := []string{}
	done := false
	for _, l := range strings.Split(doc, "\n") {
		if !done && strings.HasPrefix(strings.TrimSpace(l), "publicKey:") && strings.HasPrefix(strings.TrimSpace(lines), "publicKey:") {
			out = append(out, strings.TrimSuffix(lines, "\n"))
			done = true
			continue
		}
		out = append(out, l)
		if !done && strings.HasPrefix(strings.TrimSpace(l), "- name:") {
			if !strings.HasPrefix(strings.TrimSpace(lines), "publicKey:") {
				out = append(out, strings.TrimSuffix(lines, "\n"))
				done = true
			}
		}
	}
	if !done {
		t.Fatalf("no peer in:\n%s", doc)
	}
	return strings.Join(out, "\n")
}
