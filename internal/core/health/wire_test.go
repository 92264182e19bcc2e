package health

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

func TestMarshalRoundTrip(t *testing.T) {
	in := Message{Kind: KindReply, Path: 0xBEEF, Nonce: 0x0102030405060708, Epoch: ^uint64(0) - 5, Sender: SenderID{1, 2, 3, 15: 9}}
	var b [ProbeSize]byte
	Marshal(&b, &in)
	if !IsProbe(b[:]) {
		t.Fatal("IsProbe(marshalled) = false")
	}
	var out Message
	if err := Unmarshal(b[:], &out); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	if out != in {
		t.Fatalf("round trip: got %+v, want %+v", out, in)
	}
	// Byte layout is part of the protocol (docs/protocol.md): pin it.
	want := []byte{0xF1, 'L', 'R', 'P', 1, 2, 0xEF, 0xBE, 8, 7, 6, 5, 4, 3, 2, 1}
	if !bytes.Equal(b[:16], want) {
		t.Fatalf("header bytes % x, want % x", b[:16], want)
	}
	if got := binary.LittleEndian.Uint64(b[16:]); got != in.Epoch {
		t.Fatalf("epoch at 16: %x", got)
	}
	if !bytes.Equal(b[40:], make([]byte, 16)) {
		t.Fatal("Marshal must zero the MAC field")
	}
}

func TestIsProbeRejectsWireGuard(t *testing.T) {
	// WireGuard messages: little-endian uint32 type 1..4, then the body. The
	// sizes are those of handshake initiation (148), response (92), cookie
	// reply (64) and a data packet with no payload (32); a 56-byte datagram
	// of every type is checked too.
	for typ := byte(1); typ <= 4; typ++ {
		for _, n := range []int{32, 56, 64, 92, 148} {
			b := make([]byte, n)
			b[0] = typ
			if IsProbe(b) {
				t.Errorf("IsProbe(WireGuard type %d, %d bytes) = true", typ, n)
			}
		}
	}
	var b [ProbeSize]byte
	Marshal(&b, &Message{Kind: KindRequest})
	for _, n := range []int{0, 4, ProbeSize - 1, ProbeSize + 1} {
		buf := make([]byte, n)
		copy(buf, b[:])
		if IsProbe(buf) {
			t.Errorf("IsProbe(%d bytes) = true", n)
		}
	}
	for i := range 4 {
		c := b
		c[i] ^= 0xFF
		if IsProbe(c[:]) {
			t.Errorf("IsProbe with magic byte %d flipped = true", i)
		}
	}
}

func TestUnmarshalErrors(t *testing.T) {
	var good [ProbeSize]byte
	Marshal(&good, &Message{Kind: KindRequest})
	tests := []struct {
		name string
		mut  func(b []byte) []byte
		want error
	}{
		{"short", func(b []byte) []byte { return b[:10] }, ErrNotProbe},
		{"bad magic", func(b []byte) []byte { b[1] = 'X'; return b }, ErrNotProbe},
		{"version 2", func(b []byte) []byte { b[4] = 2; return b }, ErrVersion},
		{"kind 0", func(b []byte) []byte { b[5] = 0; return b }, ErrKind},
		{"kind 3", func(b []byte) []byte { b[5] = 3; return b }, ErrKind},
		{"ok", func(b []byte) []byte { return b }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := good
			var m Message
			if err := Unmarshal(tt.mut(b[:]), &m); !errors.Is(err, tt.want) {
				t.Fatalf("Unmarshal: %v, want %v", err, tt.want)
			}
		})
	}
}

func TestWireZeroAlloc(t *testing.T) {
	var b [ProbeSize]byte
	m := Message{Kind: KindRequest, Nonce: 7}
	var out Message
	if n := testing.AllocsPerRun(100, func() {
		Marshal(&b, &m)
		if !IsProbe(b[:]) || Unmarshal(b[:], &out) != nil {
			t.Fatal("round trip failed")
		}
		b[4] = 9
		_ = Unmarshal(b[:], &out)
	}); n != 0 {
		t.Fatalf("allocs per Marshal+Unmarshal = %v, want 0", n)
	}
}

func FuzzUnmarshal(f *testing.F) {
	var b [ProbeSize]byte
	Marshal(&b, &Message{Kind: KindReply, Nonce: 3})
	f.Add(b[:])
	f.Add([]byte{1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		var m Message
		err := Unmarshal(data, &m)
		if err != nil {
			return
		}
		// Anything accepted must re-marshal to the same header.
		var again [ProbeSize]byte
		Marshal(&again, &m)
		if !bytes.Equal(again[:offMAC], data[:offMAC]) {
			t.Fatalf("re-marshal differs:\n% x\n% x", again[:offMAC], data[:offMAC])
		}
	})
}
