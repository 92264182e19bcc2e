package health

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"fmt"
	"hash"
	"sync"

	"golang.org/x/crypto/blake2s"
	"golang.org/x/crypto/curve25519"

	"github.com/liqo-relay/relay/internal/core/keys"
)

// Labels bind derived values to this protocol and version so that they can
// never collide with WireGuard's own uses of the same keys.
const (
	keyLabel = "liqo-relay probe v1"
	idLabel  = "liqo-relay probe id v1"
)

// ErrBadKey is returned when a key agreement yields the all-zero value (a
// low-order public key): such a peer key would be known to anyone.
var ErrBadKey = errors.New("health: public key gives all-zero shared secret")

// IDOf returns the SenderID announced in the probes of the relay whose static
// public key is pub. Probes reuse the relay's WireGuard key pair, so that a
// relay needs no second identity.
func IDOf(pub keys.Public) SenderID {
	h, _ := blake2s.New256(nil) // unkeyed: cannot fail
	h.Write([]byte(idLabel))
	h.Write(pub[:])
	var sum [blake2s.Size]byte
	h.Sum(sum[:0])
	var id SenderID
	copy(id[:], sum[:])
	return id
}

// PeerKey is the probe key shared by our relay and one peer relay:
//
//	k = BLAKE2s-256(label || X25519(ourPriv, theirPub) || min(pubA,pubB) || max(pubA,pubB))
//
// Both sides compute the same k (the shared secret is symmetric, the public
// keys are sorted), and only the two of them can. The MAC of a probe is
// keyed BLAKE2s-128(k) over its first 40 bytes. A PeerKey is safe for
// concurrent use; Seal and Verify do not allocate.
type PeerKey struct {
	ours, theirs SenderID

	mu  sync.Mutex
	mac hash.Hash          // keyed BLAKE2s-128; Reset restores the key block
	sum [blake2s.Size]byte // scratch for mac.Sum, kept here so it never escapes per call
}

// NewPeerKey precomputes the probe key between ourPriv and theirPub.
func NewPeerKey(ourPriv keys.Private, theirPub keys.Public) (*PeerKey, error) {
	ourPub := ourPriv.PublicKey()
	shared, err := curve25519.X25519(ourPriv[:], theirPub[:])
	if err != nil {
		// x/crypto reports the all-zero output of a low-order point as an error.
		return nil, fmt.Errorf("%w: %w", ErrBadKey, err)
	}
	lo, hi := ourPub[:], theirPub[:]
	if bytes.Compare(lo, hi) > 0 {
		lo, hi = hi, lo
	}
	h, _ := blake2s.New256(nil)
	h.Write([]byte(keyLabel))
	h.Write(shared)
	h.Write(lo)
	h.Write(hi)
	k := h.Sum(nil)
	clear(shared)
	mac, err := blake2s.New128(k)
	clear(k)
	if err != nil {
		return nil, fmt.Errorf("health: keyed BLAKE2s: %w", err)
	}
	return &PeerKey{ours: IDOf(ourPub), theirs: IDOf(theirPub), mac: mac}, nil
}

// Ours is the SenderID we put in our probes to this peer.
func (k *PeerKey) Ours() SenderID { return k.ours }

// Theirs is the SenderID this peer puts in its probes; the shell indexes its
// PeerKeys by it.
func (k *PeerKey) Theirs() SenderID { return k.theirs }

// Seal stamps our SenderID into b and writes the MAC over the header. Call
// Marshal first.
func (k *PeerKey) Seal(b *[ProbeSize]byte) {
	copy(b[offSender:offMAC], k.ours[:])
	k.mu.Lock()
	k.compute(b[:offMAC])
	copy(b[offMAC:], k.sum[:macSize])
	k.mu.Unlock()
}

// Verify reports whether b is a probe sent by this peer (its sender field
// is Theirs) and carries a valid MAC under this key. It compares in
// constant time. A probe that fails Verify must be dropped without answer.
func (k *PeerKey) Verify(b []byte) bool {
	if !IsProbe(b) || !bytes.Equal(b[offSender:offMAC], k.theirs[:]) {
		return false
	}
	k.mu.Lock()
	k.compute(b[:offMAC])
	ok := subtle.ConstantTimeCompare(b[offMAC:], k.sum[:macSize]) == 1
	k.mu.Unlock()
	return ok
}

// compute leaves the MAC of msg in k.sum[:macSize]; k.mu must be held.
func (k *PeerKey) compute(msg []byte) {
	k.mac.Reset()
	k.mac.Write(msg)
	k.mac.Sum(k.sum[:0])
}
