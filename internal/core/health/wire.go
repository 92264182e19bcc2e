package health

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Probe wire format (all integers little-endian, like WireGuard's):
//
//	off len field
//	  0   4 magic    0xF1 'L' 'R' 'P'
//	  4   1 version  1
//	  5   1 kind     1 = request, 2 = reply
//	  6   2 path     path id in the requester's config, echoed in the reply
//	  8   8 nonce    requester's monotonic counter, echoed in the reply
//	 16   8 epoch    sender's per-boot random value
//	 24  16 sender   SenderID of the message's sender
//	 40  16 mac      keyed BLAKE2s-128 over bytes 0..39
//
// WireGuard messages start with a little-endian uint32 type in 1..4, so
// their first byte is 1..4 and bytes 1..3 are zero. A probe's first byte is
// 0xF1, so one byte already tells them apart; the rest of the magic guards
// against stray traffic.
const (
	// ProbeSize is the exact size of every probe, request or reply. Equal
	// sizes mean a reply never amplifies the request that caused it.
	ProbeSize = 56

	// Version is the only wire version this package speaks.
	Version = 1

	offVersion = 4
	offKind    = 5
	offPath    = 6
	offNonce   = 8
	offEpoch   = 16
	offSender  = 24
	offMAC     = 40
	macSize    = ProbeSize - offMAC
)

// magic is the first four bytes of every probe; byte 0 is outside
// WireGuard's message types 1..4.
var magic = [4]byte{0xF1, 'L', 'R', 'P'}

// Kind says whether a probe asks or answers.
type Kind uint8

const (
	// KindRequest asks the receiver to answer with a KindReply.
	KindRequest Kind = 1
	// KindReply answers a request, echoing its path id and nonce.
	KindReply Kind = 2
)

func (k Kind) String() string {
	switch k {
	case KindRequest:
		return "request"
	case KindReply:
		return "reply"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// SenderID names the sender of a probe: the first 16 bytes of a BLAKE2s
// hash of its static public key (see IDOf). It lets the receiver pick the
// right PeerKey without putting the public key itself on the wire.
type SenderID [16]byte

// Message is the decoded header of a probe. The MAC is not part of it: it is
// written by PeerKey.Seal and checked by PeerKey.Verify on the raw bytes.
type Message struct {
	Kind   Kind
	Path   uint16
	Nonce  uint64
	Epoch  uint64
	Sender SenderID
}

// Errors returned by Unmarshal. They are contract conditions: the caller
// drops the datagram and may count it.
var (
	ErrNotProbe = errors.New("health: not a probe")
	ErrVersion  = errors.New("health: unsupported probe version")
	ErrKind     = errors.New("health: unknown probe kind")
)

// IsProbe reports whether b looks like a probe: exact size and magic. It is
// cheap enough to run on every datagram the Bind receives; anything for which
// it returns false is handed to WireGuard untouched.
func IsProbe(b []byte) bool {
	return len(b) == ProbeSize &&
		b[0] == magic[0] && b[1] == magic[1] && b[2] == magic[2] && b[3] == magic[3]
}

// Marshal writes m into b and zeroes the MAC field; call PeerKey.Seal
// afterwards. It does not allocate.
func Marshal(b *[ProbeSize]byte, m *Message) {
	copy(b[0:4], magic[:])
	b[offVersion] = Version
	b[offKind] = byte(m.Kind)
	binary.LittleEndian.PutUint16(b[offPath:], m.Path)
	binary.LittleEndian.PutUint64(b[offNonce:], m.Nonce)
	binary.LittleEndian.PutUint64(b[offEpoch:], m.Epoch)
	copy(b[offSender:offMAC], m.Sender[:])
	clear(b[offMAC:])
}

// Unmarshal decodes the header of b into m. It does NOT authenticate: the
// caller looks up the PeerKey for m.Sender and must call Verify before
// acting on anything in m. It does not allocate, not even on error: the
// errors are the bare sentinels.
func Unmarshal(b []byte, m *Message) error {
	if !IsProbe(b) {
		return ErrNotProbe
	}
	if b[offVersion] != Version {
		return ErrVersion
	}
	k := Kind(b[offKind])
	if k != KindRequest && k != KindReply {
		return ErrKind
	}
	m.Kind = k
	m.Path = binary.LittleEndian.Uint16(b[offPath:])
	m.Nonce = binary.LittleEndian.Uint64(b[offNonce:])
	m.Epoch = binary.LittleEndian.Uint64(b[offEpoch:])
	copy(m.Sender[:], b[offSender:offMAC])
	return nil
}

// Reply returns the header of the reply to request m: same path and nonce,
// kind reply, and the replier's epoch. PeerKey.Seal stamps the replier's
// sender id. The reply has the request's size: no amplification.
func (m *Message) Reply(epoch uint64) Message {
	return Message{Kind: KindReply, Path: m.Path, Nonce: m.Nonce, Epoch: epoch}
}
