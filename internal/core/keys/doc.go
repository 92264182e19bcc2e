// Package keys holds the relay's WireGuard (Curve25519) keys: Public, which
// prints as base64 the way `wg pubkey` does, and Private, which never
// prints at all. Every package that carries a key (the configuration, the
// probe authentication in health, the agent, the Kubernetes controllers)
// uses these two types, so that there is one parser, one public key
// derivation and one redaction.
//
// A Private formats as Redacted with every fmt verb, in slog and through
// any text encoder (encoding/json, YAML), also inside a larger value; its
// key material leaves only through Reveal (base64, for a key file or a
// Secret) and Hex (for the WireGuard UAPI).
//
// The package is pure: it parses, derives and formats, and generates keys
// from an io.Reader the caller supplies (or from crypto/rand, NewPrivate).
package keys
