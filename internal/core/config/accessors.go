package config

import (
	"slices"

	"github.com/liqo-relay/relay/internal/core/keys"
)

// PublicKey returns the public key of c.PrivateKey, or the zero key when
// the private key is not set (it lives in PrivateKeyFile).
func (c *Config) PublicKey() keys.Public {
	if c.PrivateKey.IsZero() {
		return keys.Public{}
	}
	return c.PrivateKey.PublicKey()
}

// CheckPrivateKey checks a private key read from PrivateKeyFile: it must
// not be zero, and no peer may use its public key.
func (c *Config) CheckPrivateKey(k keys.Private) error {
	if k.IsZero() {
		return Errors{{Path: "privateKeyFile", Msg: "key is all zeros"}}
	}
	pub := k.PublicKey()
	for i, p := range c.Peers {
		if p.PublicKey == pub {
			return Errors{{Path: index("peers", i) + ".publicKey", Msg: "is this relay's own public key"}}
		}
	}
	return nil
}

// Peer returns the peer with the given name.
func (c *Config) Peer(name string) (*Peer, bool) {
	for i := range c.Peers {
		if c.Peers[i].Name == name {
			return &c.Peers[i], true
		}
	}
	return nil, false
}

// Equal reports whether p and q are identical in every field, slices
// compared element by element in order (order matters for paths). Live
// reload uses it to leave unchanged peers alone.
func (p Peer) Equal(q Peer) bool {
	return p.Name == q.Name &&
		p.PublicKey == q.PublicKey &&
		p.NextPublicKey == q.NextPublicKey &&
		slices.Equal(p.Prefixes, q.Prefixes) &&
		p.PersistentKeepalive == q.PersistentKeepalive &&
		slices.Equal(p.Paths, q.Paths) &&
		slices.Equal(p.SeesUs, q.SeesUs) &&
		p.Health == q.Health
}

// Clone returns a deep copy of c.
func (c *Config) Clone() *Config {
	d := *c
	d.Addresses = slices.Clone(c.Addresses)
	d.Exports = slices.Clone(c.Exports)
	d.AllowedPeerPrefixes = slices.Clone(c.AllowedPeerPrefixes)
	d.DNS.Servers = slices.Clone(c.DNS.Servers)
	d.DNSServer.Listen = slices.Clone(c.DNSServer.Listen)
	d.Peers = slices.Clone(c.Peers)
	for i := range d.Peers {
		p := &d.Peers[i]
		p.Prefixes = slices.Clone(p.Prefixes)
		p.Paths = slices.Clone(p.Paths)
		p.SeesUs = slices.Clone(p.SeesUs)
	}
	return &d
}

// Redacted returns a deep copy of c with the private key zeroed, safe to
// print or log.
func (c *Config) Redacted() *Config {
	d := c.Clone()
	d.PrivateKey = keys.Private{}
	d.NextPrivateKey = keys.Private{}
	return d
}
