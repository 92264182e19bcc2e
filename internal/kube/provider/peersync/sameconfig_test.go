package peersync

import (
	"testing"

	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/keys"
)

// TestSameConfigSeesKeyChanges: the keys are redacted in the comparison's
// text, so a staged next key (key rotation) must be compared on its own, or
// it would never be applied.
func TestSameConfigSeesKeyChanges(t *testing.T) {
	a := &config.Config{Name: "provider-a", PrivateKey: keys.Private{1}}
	b := a.Clone()
	if !sameConfig(a, b) {
		t.Fatal("equal configurations differ")
	}
	b.NextPrivateKey = keys.Private{2}
	if sameConfig(a, b) {
		t.Error("a staged next key is no change")
	}
	c := a.Clone()
	c.PrivateKey = keys.Private{3}
	if sameConfig(a, c) {
		t.Error("a new private key is no change")
	}
}
