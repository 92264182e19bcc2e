package health

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/liqo-relay/relay/internal/core/keys"
)

func testKeyPair(t testing.TB, seed uint64) (keys.Private, keys.Public) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 42))
	var priv keys.Private
	for i := range priv {
		priv[i] = byte(r.Uint32())
	}
	return priv, priv.PublicKey()
}

func testPeerKeys(t testing.TB) (ab, ba *PeerKey) {
	t.Helper()
	aPriv, aPub := testKeyPair(t, 1)
	bPriv, bPub := testKeyPair(t, 2)
	ab, err := NewPeerKey(aPriv, bPub)
	if err != nil {
		t.Fatal(err)
	}
	ba, err = NewPeerKey(bPriv, aPub)
	if err != nil {
		t.Fatal(err)
	}
	return ab, ba
}

func TestPeerKeySymmetric(t *testing.T) {
	ab, ba := testPeerKeys(t)
	if ab.Ours() != ba.Theirs() || ab.Theirs() != ba.Ours() {
		t.Fatal("sender ids do not cross-match")
	}
	var b [ProbeSize]byte
	Marshal(&b, &Message{Kind: KindRequest, Path: 1, Nonce: 99, Epoch: 5})
	ab.Seal(&b)
	if !ba.Verify(b[:]) {
		t.Fatal("B rejects A's probe")
	}
	var m Message
	if err := Unmarshal(b[:], &m); err != nil || m.Sender != ab.Ours() {
		t.Fatalf("sender = %x, err %v; want %x", m.Sender, err, ab.Ours())
	}
	// A cannot be fooled by its own probe reflected back at it: the sender
	// is A, not B.
	if ab.Verify(b[:]) {
		t.Fatal("A accepts its own probe reflected back")
	}
}

func TestVerifyRejectsEveryFlippedBit(t *testing.T) {
	ab, ba := testPeerKeys(t)
	var b [ProbeSize]byte
	Marshal(&b, &Message{Kind: KindReply, Path: 2, Nonce: 1 << 40, Epoch: 77})
	ab.Seal(&b)
	for i := range ProbeSize * 8 {
		c := b
		c[i/8] ^= 1 << (i % 8)
		if ba.Verify(c[:]) {
			t.Fatalf("Verify accepted a probe with bit %d flipped", i)
		}
	}
}

func TestVerifyRejectsThirdParty(t *testing.T) {
	ab, _ := testPeerKeys(t)
	cPriv, _ := testKeyPair(t, 3)
	_, bPub := testKeyPair(t, 2)
	cb, err := NewPeerKey(cPriv, bPub) // C knows B's public key, not A's secret
	if err != nil {
		t.Fatal(err)
	}
	var b [ProbeSize]byte
	Marshal(&b, &Message{Kind: KindRequest})
	cb.Seal(&b)
	aID := ab.Ours()
	copy(b[offSender:offMAC], aID[:]) // C claims to be A
	_, ba := testPeerKeys(t)
	if ba.Verify(b[:]) {
		t.Fatal("B accepts a probe forged by C under A's id")
	}
}

func TestNewPeerKeyLowOrder(t *testing.T) {
	priv, _ := testKeyPair(t, 1)
	var zero keys.Public // the identity point: all-zero shared secret
	if _, err := NewPeerKey(priv, zero); !errors.Is(err, ErrBadKey) {
		t.Fatalf("NewPeerKey(zero key) err = %v, want ErrBadKey", err)
	}
}

func TestSealVerifyZeroAlloc(t *testing.T) {
	ab, ba := testPeerKeys(t)
	var b [ProbeSize]byte
	Marshal(&b, &Message{Kind: KindRequest})
	if n := testing.AllocsPerRun(100, func() {
		ab.Seal(&b)
		if !ba.Verify(b[:]) {
			t.Fatal("verify failed")
		}
	}); n != 0 {
		t.Fatalf("allocs per Seal+Verify = %v, want 0", n)
	}
}

func BenchmarkSealVerify(b *testing.B) {
	ab, ba := testPeerKeys(b)
	var buf [ProbeSize]byte
	Marshal(&buf, &Message{Kind: KindRequest})
	b.ReportAllocs()
	for b.Loop() {
		ab.Seal(&buf)
		if !ba.Verify(buf[:]) {
			b.Fatal("verify failed")
		}
	}
}

func BenchmarkIsProbe(b *testing.B) {
	wg := make([]byte, 1420)
	wg[0] = 4
	for b.Loop() {
		if IsProbe(wg) {
			b.Fatal("wireguard data taken for a probe")
		}
	}
}

// TestRequestReplyExchange runs a whole exchange as the shell does: A
// requests, B verifies, filters replays and replies, A verifies and matches.
func TestRequestReplyExchange(t *testing.T) {
	ab, ba := testPeerKeys(t)
	var req, rep [ProbeSize]byte
	Marshal(&req, &Message{Kind: KindRequest, Path: 3, Nonce: 41, Epoch: 1111})
	ab.Seal(&req)

	var f ReplayFilter
	var got Message
	if err := Unmarshal(req[:], &got); err != nil || got.Sender != ba.Theirs() || !ba.Verify(req[:]) {
		t.Fatalf("B cannot read A's request: %v", err)
	}
	if !f.Accept(got.Epoch, got.Nonce) || f.Accept(got.Epoch, got.Nonce) {
		t.Fatal("replay filter: first must pass, second must not")
	}
	r := got.Reply(2222)
	Marshal(&rep, &r)
	ba.Seal(&rep)

	var back Message
	if err := Unmarshal(rep[:], &back); err != nil || !ab.Verify(rep[:]) {
		t.Fatalf("A cannot read B's reply: %v", err)
	}
	want := Message{Kind: KindReply, Path: 3, Nonce: 41, Epoch: 2222, Sender: ab.Theirs()}
	if back != want {
		t.Fatalf("reply %+v, want %+v", back, want)
	}
}
