//go:build linux

package agent_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/status"
)

// rawUDP is a raw IPv4 socket for UDP on loopback: it sees a copy of every
// UDP datagram delivered on this host (a tap on the wire, as an
// eavesdropper on a path has), and sends UDP datagrams with any source
// port from 127.0.0.1 (a spoofer). It needs CAP_NET_RAW.
type rawUDP struct{ fd int }

func openRawUDP(t *testing.T) *rawUDP {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_RAW, syscall.IPPROTO_UDP)
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
		t.Skip("needs root (CAP_NET_RAW) to tap and spoof UDP on loopback")
	}
	if err != nil {
		t.Fatalf("raw socket: %v", err)
	}
	// It sees every UDP datagram on the host: a large buffer keeps it from
	// missing ours between two drains.
	_ = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVBUF, 8<<20)
	r := &rawUDP{fd: fd}
	t.Cleanup(func() { syscall.Close(fd) })
	return r
}

// drain calls fn for each UDP datagram queued on the tap, without waiting.
// payload is valid only during the call.
func (r *rawUDP) drain(fn func(src, dst netip.AddrPort, payload []byte)) {
	buf := make([]byte, 65536)
	for {
		n, _, err := syscall.Recvfrom(r.fd, buf, syscall.MSG_DONTWAIT)
		if err != nil || n < 20 {
			return
		}
		pkt := buf[:n]
		ihl := int(pkt[0]&0x0f) * 4
		if pkt[9] != syscall.IPPROTO_UDP || len(pkt) < ihl+8 {
			continue
		}
		udp := pkt[ihl:]
		src := netip.AddrPortFrom(netip.AddrFrom4([4]byte(pkt[12:16])), binary.BigEndian.Uint16(udp[0:2]))
		dst := netip.AddrPortFrom(netip.AddrFrom4([4]byte(pkt[16:20])), binary.BigEndian.Uint16(udp[2:4]))
		fn(src, dst, udp[8:])
	}
}

// send sends payload from 127.0.0.1:srcPort to 127.0.0.1:dstPort. The UDP
// checksum is left zero (none, which IPv4 allows).
func (r *rawUDP) send(srcPort, dstPort uint16, payload []byte) error {
	pkt := make([]byte, 8+len(payload))
	binary.BigEndian.PutUint16(pkt[0:], srcPort)
	binary.BigEndian.PutUint16(pkt[2:], dstPort)
	binary.BigEndian.PutUint16(pkt[4:], uint16(len(pkt)))
	copy(pkt[8:], payload)
	return syscall.Sendto(r.fd, pkt, 0, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}})
}

// isWGHandshake reports whether b is a WireGuard handshake initiation or
// response.
func isWGHandshake(b []byte) bool {
	return len(b) >= 4 && (b[0] == 1 || b[0] == 2) && b[1] == 0 && b[2] == 0 && b[3] == 0
}

// isWGData reports whether b is a WireGuard transport message carrying a
// packet (not an empty keepalive, which is never credited anyway).
func isWGData(b []byte) bool {
	return len(b) > 32 && b[0] == 4 && b[1] == 0 && b[2] == 0 && b[3] == 0
}

// pathStatus is from's status of its path to peer.
func (b *bed) pathStatus(from, peer, path string) status.PathStatus {
	b.t.Helper()
	p, _ := b.peer(from, peer)
	for _, ps := range p.Paths {
		if ps.Name == path {
			return ps
		}
	}
	b.t.Fatalf("%s has no path %s to %s", from, path, peer)
	return status.PathStatus{}
}

// TestDeadPathGoesDownUnderSpoofedReplays records genuine WireGuard data
// messages that provider-a sends to provider-b, blackholes A-B's direct
// path, and then keeps replaying the recorded messages to B from the
// address B knows as the direct path's (its endpoint, where the peer's
// answers come from: the address passive evidence is credited to). B's
// direct path to A must go down all the same: the replays carry B's valid
// receiver index for A, but WireGuard rejects them as replays, and only
// data that WireGuard authenticated and found fresh is evidence (docs/
// failover.md). When the Bind counted data by its cleartext receiver
// index, before decryption, the replays kept the dead path up: with the
// default health settings it still went down after several seconds in
// some runs (the cause was not pinned down; a stall of the spoofer longer
// than the 300 ms detect time is enough), with calmHealth it stayed up for
// the whole wait in every run. It must also go down before any handshake
// message: a new handshake would retire the replayed session's index, and
// then even that Bind would ignore the replays.
//
// The emulated links cannot send from another's address, so the spoofer
// is a raw socket (root only): the replays reach B's socket from exactly
// the path's address, as they would on a real network.
func TestDeadPathGoesDownUnderSpoofedReplays(t *testing.T) {
	// calmHealth: a spoofer goroutine that the loaded machine leaves
	// unscheduled for a detect time would let the path go down even where
	// replays count as evidence, and the test would prove nothing.
	b := newBed(t, bedOptions{Direct: 2 * time.Millisecond, Consumer: 3 * time.Millisecond, Health: calmHealth})
	b.waitActive(relayA, relayB, "direct")
	b.waitActive(relayB, relayA, "direct")
	b.upSnapshot()
	raw := openRawUDP(t)
	portB := b.f.Relay(relayB).Port
	pathAddr := b.direct.Endpoint(relayB) // B's endpoint for A's direct path
	if st := b.pathStatus(relayB, relayA, "direct"); st.Endpoint != pathAddr.String() {
		t.Fatalf("B's direct path to A has endpoint %s, want %s", st.Endpoint, pathAddr)
	}

	recorded := b.recordDataToB(raw, 16)
	if got := b.counter(relayB, "relay_path_up", map[string]string{"peer": relayA, "path": "direct"}); got != 1 {
		t.Fatalf("relay_path_up of B's direct path to A is %v before the cut, want 1", got)
	}

	// Replay from before the cut, so that a Bind that credited replays
	// would have evidence for the path without a gap across the cut; cut
	// once the tap has seen replays arrive from the path's address.
	spoof := startSpoofer(raw, pathAddr.Port(), portB, recorded)
	defer spoof.stop()
	// The tap counts the replays that reach B from the path's address, and
	// the handshake messages B sends or receives after the cut.
	replays, handshakes := 0, 0
	cut := false
	tap := func() {
		raw.drain(func(src, dst netip.AddrPort, p []byte) {
			switch {
			case src == pathAddr && dst.Port() == portB && slices.ContainsFunc(recorded, func(r []byte) bool { return bytes.Equal(r, p) }):
				replays++
			case cut && (src.Port() == portB || dst.Port() == portB) && isWGHandshake(p):
				handshakes++
			}
		})
	}
	waitFor(t, waitTimeout, "the tap to see replays reach B from the direct path's address", func() bool {
		tap()
		return replays >= 8
	})
	tap()
	cut = true
	b.direct.Cut(true)

	// The detector's own state (relay_path_up), not the status: the status
	// may show a path that is up as "dampened".
	directUp := func() float64 {
		return b.counter(relayB, "relay_path_up", map[string]string{"peer": relayA, "path": "direct"})
	}
	waitFor(t, waitTimeout, "B's direct path to A to go down under spoofed replays", func() bool {
		tap() // first, so that handshakes counted happened before the state read
		return directUp() == 0
	})
	// Handshake messages make the Bind learn new session indices and forget
	// the oldest; once the replayed session's index is forgotten, even a
	// Bind that counted messages by their cleartext index would ignore the
	// replays. The path must go down without that: while the replays still
	// name a current session.
	if handshakes > 0 {
		t.Fatalf("B's direct path went down only after %d handshake messages to or from B: the replays may have kept the dead path up until their session index was retired", handshakes)
	}
	b.waitActive(relayB, relayA, "consumer")
	tap()
	spoof.stop()
	if spoof.errs > 0 {
		t.Logf("%d replays could not be sent", spoof.errs)
	}
	t.Logf("%d recorded messages replayed %d times from %s (the tap saw %d arrive); B's direct path went down and B moved to consumer", len(recorded), spoof.sent, pathAddr, replays)
}

// recordDataToB echoes through A to a pod behind B until raw has seen n
// WireGuard data messages to B's port (they travel the active path), and
// returns copies of them.
func (b *bed) recordDataToB(raw *rawUDP, n int) [][]byte {
	b.t.Helper()
	portB := b.f.Relay(relayB).Port
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	c, err := b.agent(relayA).DialContext(ctx, "udp", pod(2, podPort).String())
	if err != nil {
		b.t.Fatalf("dial: %v", err)
	}
	defer c.Close()
	var recorded [][]byte
	for i := 0; len(recorded) < n; i++ {
		if i == 200 {
			b.t.Fatalf("recorded only %d data messages to B in %d echoes", len(recorded), i)
		}
		if err := echoOnce(c, fmt.Appendf(nil, "record %d", i), true); err != nil {
			b.t.Fatal(err)
		}
		raw.drain(func(_, dst netip.AddrPort, p []byte) {
			if dst.Port() == portB && isWGData(p) {
				recorded = append(recorded, slices.Clone(p))
			}
		})
	}
	return recorded
}

// spoofer replays recorded messages from srcPort to dstPort through a raw
// socket, one a millisecond, until stop.
type spoofer struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// sent and errs count the replays sent and failed; read them after
	// stop.
	sent, errs int
}

func startSpoofer(raw *rawUDP, srcPort, dstPort uint16, recorded [][]byte) *spoofer {
	ctx, cancel := context.WithCancel(context.Background())
	sp := &spoofer{cancel: cancel}
	sp.wg.Go(func() {
		for i := 0; ctx.Err() == nil; i++ {
			if err := raw.send(srcPort, dstPort, recorded[i%len(recorded)]); err != nil {
				sp.errs++
			} else {
				sp.sent++
			}
			time.Sleep(time.Millisecond) // real: paces the spoofed datagrams on real sockets, well within a detect time
		}
	})
	return sp
}

// stop ends the replays and waits for the spoofer's goroutine; it may be
// called more than once.
func (sp *spoofer) stop() {
	sp.cancel()
	sp.wg.Wait()
}
