package config

import (
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/liqo-relay/relay/internal/core/keys"
)

// Settings of in-place key rotation (docs/protocol.md, "Key rotation"):
// nextPrivateKey stages our own next key, a peer's nextPublicKey stages
// the key that peer rotates to.

// DefaultKeyRotationDeadline is how long a relay waits for its peers to
// stage its next key before it switches anyway. Staging is one reload (or
// one RelayPeer update by an operator) on each peer: minutes, not hours; a
// peer that has not staged by then is reported as a straggler and loses
// its session until it is given the new key.
const DefaultKeyRotationDeadline = 10 * time.Minute

// MaxKeyRotationDeadline bounds keyRotationDeadline: a staged key that is
// never switched to is a rotation nobody finished.
const MaxKeyRotationDeadline = 7 * 24 * time.Hour

// rotationFields decodes nextPrivateKey and keyRotationDeadline.
func (d *decoder) rotationFields(m map[string]*yaml.Node, c *Config) {
	d.setPrivateKey(m, "", "nextPrivateKey", &c.NextPrivateKey)
	d.setDuration(m, "", "keyRotationDeadline", &c.KeyRotationDeadline)
}

// validateRotation checks nextPrivateKey, keyRotationDeadline and every
// peer's nextPublicKey against the other keys of the configuration.
func (c *Config) validateRotation(e *errList) {
	if d := c.KeyRotationDeadline; d < 0 || d > MaxKeyRotationDeadline {
		e.checkf("keyRotationDeadline", fmt.Sprintf("%v is out of range 0s..%v (0s: the default, %v)", d, MaxKeyRotationDeadline, DefaultKeyRotationDeadline))
	}
	var own, ownNext keys.Public
	if !c.PrivateKey.IsZero() {
		own = c.PublicKey()
	}
	if !c.NextPrivateKey.IsZero() {
		ownNext = c.NextPrivateKey.PublicKey()
		if c.NextPrivateKey == c.PrivateKey {
			e.checkf("nextPrivateKey", "is the current private key: give a new key to rotate to")
		}
	}
	// Every public key, current or next, names one peer: probes and
	// WireGuard tell peers apart by it.
	owner := make(map[keys.Public]string, 2*len(c.Peers))
	for i, p := range c.Peers {
		if !p.PublicKey.IsZero() {
			owner[p.PublicKey] = fmt.Sprintf("publicKey of peer %q (peers[%d])", p.Name, i)
		}
	}
	for i, p := range c.Peers {
		path := index("peers", i)
		if !ownNext.IsZero() && p.PublicKey == ownNext {
			e.checkf(field(path, "publicKey"), "is this relay's own nextPublicKey")
		}
		if p.NextPublicKey.IsZero() {
			continue
		}
		np := field(path, "nextPublicKey")
		switch other, dup := owner[p.NextPublicKey]; {
		case p.NextPublicKey == p.PublicKey:
			e.checkf(np, "equals the peer's publicKey: give the key it rotates to")
		case p.NextPublicKey == own:
			e.checkf(np, "is this relay's own public key")
		case !ownNext.IsZero() && p.NextPublicKey == ownNext:
			e.checkf(np, "is this relay's own next public key")
		case dup:
			e.checkf(np, "already the "+other)
		default:
			owner[p.NextPublicKey] = fmt.Sprintf("nextPublicKey of peer %q (peers[%d])", p.Name, i)
		}
	}
}

// RotationDeadline is KeyRotationDeadline, or its default when zero (a
// configuration built in code).
func (c *Config) RotationDeadline() time.Duration {
	if c.KeyRotationDeadline == 0 {
		return DefaultKeyRotationDeadline
	}
	return c.KeyRotationDeadline
}

// NextPublicKey returns the public key of NextPrivateKey, or the zero key
// when no rotation is staged.
func (c *Config) NextPublicKey() keys.Public {
	if c.NextPrivateKey.IsZero() {
		return keys.Public{}
	}
	return c.NextPrivateKey.PublicKey()
}
