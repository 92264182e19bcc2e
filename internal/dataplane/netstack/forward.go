package netstack

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/adapters/gonet"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
	"gvisor.dev/gvisor/pkg/tcpip/transport/udp"
	"gvisor.dev/gvisor/pkg/waiter"
)

func nsDst(id stack.TransportEndpointID) netip.AddrPort {
	return netip.AddrPortFrom(nsAddr(id.LocalAddress), id.LocalPort)
}

func nsSrc(id stack.TransportEndpointID) netip.AddrPort {
	return netip.AddrPortFrom(nsAddr(id.RemoteAddress), id.RemotePort)
}

// forwardTCP handles a SYN to an exported destination. It runs on a
// goroutine gVisor starts per request. The backend is dialled first and
// the peer's handshake is completed only then, so that a closed backend port
// reaches the peer as a RST, like a direct connection would.
func (n *Netstack) forwardTCP(r *tcp.ForwarderRequest) {
	if !n.enter() {
		r.Complete(true)
		return
	}
	defer n.wg.Done()
	id := r.ID()
	dst, src := nsDst(id), nsSrc(id)
	ctx, cancel := context.WithTimeout(n.ctx, nsDialTimeout)
	backend, err := n.dial(ctx, "tcp", dst.String())
	cancel()
	if err != nil {
		n.stats.tcpDialFailures.Add(1)
		n.log.Debug("tcp forward: backend dial failed", "src", src, "dst", dst, "err", err)
		r.Complete(true)
		return
	}
	var wq waiter.Queue
	ep, terr := r.CreateEndpoint(&wq)
	if terr != nil {
		backend.Close()
		n.log.Debug("tcp forward: handshake with peer failed", "src", src, "dst", dst, "err", terr.String())
		r.Complete(true)
		return
	}
	r.Complete(false)
	nsKeepalive(ep)
	peer := gonet.NewTCPConn(&wq, ep)
	n.stats.tcpForwarded.Add(1)
	n.stats.tcpActive.Add(1)
	defer n.stats.tcpActive.Add(-1)
	n.log.Debug("tcp forward: open", "src", src, "dst", dst)
	n.splice(peer, backend)
}

// nsKeepalive bounds the life of a forwarded connection whose peer vanished:
// the stack probes after nsTCPKeepIdle of silence and aborts after
// nsTCPKeepCount unanswered probes.
func nsKeepalive(ep tcpip.Endpoint) {
	ep.SocketOptions().SetKeepAlive(true)
	idle := tcpip.KeepaliveIdleOption(nsTCPKeepIdle)
	ep.SetSockOpt(&idle)
	intvl := tcpip.KeepaliveIntervalOption(nsTCPKeepInterval)
	ep.SetSockOpt(&intvl)
	ep.SetSockOptInt(tcpip.KeepaliveCountOption, nsTCPKeepCount)
}

type nsHalfCloser interface{ CloseWrite() error }

// splice copies both ways between a and b until both directions are done,
// passing each EOF on as a half-close. An error in either direction closes
// both connections. Close aborts it by closing both connections.
func (n *Netstack) splice(a, b net.Conn) {
	if !n.track(a) {
		b.Close()
		return
	}
	defer n.untrack(a)
	if !n.track(b) {
		a.Close()
		return
	}
	defer n.untrack(b)
	var once sync.Once
	abort := func() {
		once.Do(func() {
			a.Close()
			b.Close()
		})
	}
	defer abort()
	done := make(chan struct{})
	if !n.spawn(func() {
		defer close(done)
		nsCopyHalf(b, a, abort)
	}) {
		return
	}
	nsCopyHalf(a, b, abort)
	<-done
}

// nsCopyHalf copies src to dst; on EOF it half-closes dst, on error it aborts.
func nsCopyHalf(dst, src net.Conn, abort func()) {
	_, err := io.Copy(dst, src)
	if err != nil {
		abort()
		return
	}
	if hc, ok := dst.(nsHalfCloser); ok {
		if hc.CloseWrite() == nil {
			return
		}
	}
	abort()
}

// nsUDPFlow is one forwarded UDP 4-tuple: a connected endpoint in the stack
// and a connected socket on the host side.
type nsUDPFlow struct {
	src, dst netip.AddrPort
	peer     *gonet.UDPConn
	last     atomic.Int64 // unix nanoseconds of the last datagram either way

	mu      sync.Mutex
	backend net.Conn // nil until dialled
	closed  bool
}

func (f *nsUDPFlow) setBackend(c net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	f.backend = c
	return true
}

// close closes both sides; it reports whether this call did it.
func (f *nsUDPFlow) close() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	f.closed = true
	f.peer.Close()
	if f.backend != nil {
		f.backend.Close()
	}
	return true
}

func (f *nsUDPFlow) stop() { f.close() }

func (f *nsUDPFlow) touch(now time.Time) { f.last.Store(now.UnixNano()) }

// forwardUDP handles the first datagram of a new 4-tuple to an exported
// destination. It runs inline in the stack's receive path, so it only binds
// the endpoint (which queues the datagram) and hands the rest to a goroutine.
// When the flow table is full and no flow is idle enough to evict, the
// datagram is dropped; the 4-tuple's next datagram tries again.
func (n *Netstack) forwardUDP(r *udp.ForwarderRequest) {
	id := r.ID()
	now := n.now()
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return
	}
	evicted, ok := n.udpAdmitLocked(now)
	n.mu.Unlock()
	n.udpEvict(evicted)
	if !ok {
		n.stats.udpRefused.Add(1)
		n.log.Debug("udp forward: flow table full, datagram dropped", "src", nsSrc(id), "dst", nsDst(id), "max", n.udpMax)
		return
	}
	var wq waiter.Queue
	ep, terr := r.CreateEndpoint(&wq)
	if terr != nil {
		n.mu.Lock()
		n.udpPending--
		n.mu.Unlock()
		n.log.Debug("udp forward: endpoint", "src", nsSrc(id), "dst", nsDst(id), "err", terr.String())
		return
	}
	f := &nsUDPFlow{src: nsSrc(id), dst: nsDst(id), peer: gonet.NewUDPConn(&wq, ep)}
	f.touch(now)
	n.mu.Lock()
	n.udpPending--
	if n.closed {
		n.mu.Unlock()
		f.close()
		return
	}
	n.flows[f] = struct{}{}
	n.mu.Unlock()
	if !n.spawn(func() { n.runUDPFlow(f) }) {
		f.close()
	}
}

func (n *Netstack) runUDPFlow(f *nsUDPFlow) {
	defer func() {
		f.close()
		n.mu.Lock()
		delete(n.flows, f)
		n.mu.Unlock()
	}()
	ctx, cancel := context.WithTimeout(n.ctx, nsDialTimeout)
	backend, err := n.dial(ctx, "udp", f.dst.String())
	cancel()
	if err != nil {
		n.stats.udpDialFailures.Add(1)
		n.log.Debug("udp forward: backend dial failed", "src", f.src, "dst", f.dst, "err", err)
		return
	}
	if !f.setBackend(backend) {
		backend.Close()
		return
	}
	n.stats.udpFlows.Add(1)
	n.stats.udpActive.Add(1)
	defer n.stats.udpActive.Add(-1)
	n.log.Debug("udp forward: open", "src", f.src, "dst", f.dst)
	done := make(chan struct{})
	if !n.spawn(func() {
		defer close(done)
		n.pumpUDP(backend, f.peer, f)
	}) {
		return
	}
	n.pumpUDP(f.peer, backend, f)
	<-done
}

// pumpUDP moves datagrams from src to dst until either fails, then stops
// the flow.
func (n *Netstack) pumpUDP(dst, src net.Conn, f *nsUDPFlow) {
	defer f.stop()
	buf := make([]byte, 64<<10)
	for {
		m, err := src.Read(buf)
		if err != nil {
			if nsTransientUDP(err) {
				continue
			}
			return
		}
		f.touch(n.now())
		if _, err := dst.Write(buf[:m]); err != nil && !nsTransientUDP(err) {
			return
		}
	}
}

// nsTransientUDP reports errors a UDP flow survives, such as a
// backend's ICMP port unreachable surfacing as ECONNREFUSED.
func nsTransientUDP(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}

// reapLoop closes idle UDP flows until Close.
func (n *Netstack) reapLoop() {
	t := time.NewTicker(n.udpIdle / 4)
	defer t.Stop()
	for {
		select {
		case <-n.ctx.Done():
			return
		case now := <-t.C:
			n.reapUDP(now)
		}
	}
}

// reapUDP closes every UDP flow idle for at least the idle timeout at now.
// It returns how many it closed.
func (n *Netstack) reapUDP(now time.Time) int {
	cutoff := now.Add(-n.udpIdle).UnixNano()
	var idle []*nsUDPFlow
	n.mu.Lock()
	for f := range n.flows {
		if f.last.Load() <= cutoff {
			idle = append(idle, f)
		}
	}
	n.mu.Unlock()
	closed := 0
	for _, f := range idle {
		if f.close() {
			n.log.Debug("udp forward: idle, closed", "src", f.src, "dst", f.dst)
			closed++
		}
	}
	n.stats.udpIdle.Add(uint64(closed))
	return closed
}
