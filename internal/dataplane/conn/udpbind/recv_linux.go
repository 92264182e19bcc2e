package udpbind

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
	"golang.zx2c4.com/wireguard/conn"
)

// receiver is the state of one receive function: wireguard-go calls each
// from one goroutine, so it needs no lock. Its headers point into the
// caller's buffers only during a call.
type receiver struct {
	s     *socket
	hdrs  []unix.Mmsghdr
	iovs  []unix.Iovec
	names []sockaddr
	ctrls []control
	meta  []received
	eps   []*Endpoint
	// limit is how many messages the next read asks for: all the caller's
	// buffers while nothing arrives coalesced, fewer after coalesced
	// messages, so that their segments fit in the buffers (expand).
	limit int
	// stash holds the messages of a read whose segments did not fit,
	// handed out before the next read.
	stash []stashed
}

// stashed is a received message kept for the next call.
type stashed struct {
	data []byte // the message; data[off:] is still to hand out
	off  int
	gso  int
	ep   *Endpoint
}

func newReceiver(s *socket, batch int) *receiver {
	return &receiver{
		s:     s,
		hdrs:  make([]unix.Mmsghdr, batch),
		iovs:  make([]unix.Iovec, batch),
		names: make([]sockaddr, batch),
		ctrls: make([]control, batch),
		meta:  make([]received, batch),
		eps:   make([]*Endpoint, batch),
		limit: batch,
	}
}

// receive is the conn.ReceiveFunc.
func (r *receiver) receive(bufs [][]byte, sizes []int, eps []conn.Endpoint) (int, error) {
	if len(r.stash) > 0 {
		return r.fromStash(bufs, sizes, eps), nil
	}
	want := min(len(bufs), len(r.hdrs), r.limit)
	for i := range want {
		r.iovs[i].Base = unsafe.SliceData(bufs[i])
		r.iovs[i].SetLen(len(bufs[i]))
		h := &r.hdrs[i].Hdr
		h.Name = (*byte)(unsafe.Pointer(&r.names[i]))
		h.Namelen = uint32(len(r.names[i]))
		h.Iov = &r.iovs[i]
		h.SetIovlen(1)
		h.Control = &r.ctrls[i][0]
		h.SetControllen(len(r.ctrls[i]))
		h.Flags = 0
		r.hdrs[i].Len = 0
	}
	n, err := r.recvmmsg(want)
	for i := range want {
		r.iovs[i].Base = nil // keep no caller buffer alive
	}
	if err != nil {
		return 0, err
	}
	maxSegs, total := 1, 0
	for i := range n {
		h := &r.hdrs[i]
		m := parseControl(r.ctrls[i][:h.Hdr.Controllen])
		r.meta[i] = m
		r.eps[i] = &Endpoint{Dst: r.names[i].get(), src: m.dst, ifindex: m.ifindex}
		segs := segments(int(h.Len), m.gso)
		maxSegs = max(maxSegs, segs)
		total += segs
	}
	r.limit = max(1, len(bufs)/maxSegs)
	if total == n {
		for i := range n {
			sizes[i] = int(r.hdrs[i].Len)
			eps[i] = r.eps[i]
			r.eps[i] = nil
		}
		return n, nil
	}
	return r.expand(n, bufs, sizes, eps), nil
}

// recvmmsg reads up to want messages, waiting in the netpoller while
// there are none.
func (r *receiver) recvmmsg(want int) (int, error) {
	n, errno, err := r.s.mmsg(unix.SYS_RECVMMSG, r.hdrs[:want])
	if err != nil {
		return 0, err // net.ErrClosed once the bind is closed
	}
	if errno != 0 {
		return 0, os.NewSyscallError("recvmmsg", errno)
	}
	return n, nil
}

// expand splits the n messages just read, some of them coalesced, into
// one datagram per buffer, in place: message i's segments go to the
// buffers from pos(i), the segments of the messages before it. Moving
// from the last message back, a segment is only ever written over a
// message already moved. Messages whose segments do not fit any more go to
// the stash. It hands out at least one datagram.
func (r *receiver) expand(n int, bufs [][]byte, sizes []int, eps []conn.Endpoint) int {
	fit, total := 0, 0
	for ; fit < n; fit++ {
		segs := segments(int(r.hdrs[fit].Len), r.meta[fit].gso)
		if total+segs > len(bufs) {
			break
		}
		total += segs
	}
	for i := fit; i < n; i++ {
		r.keep(bufs[i][:r.hdrs[i].Len], r.meta[i].gso, r.eps[i])
		r.eps[i] = nil
	}
	pos := total
	for i := fit - 1; i >= 0; i-- {
		size, gso := int(r.hdrs[i].Len), r.meta[i].gso
		segs := segments(size, gso)
		pos -= segs
		for s := segs - 1; s >= 0; s-- {
			start, end := 0, size
			if segs > 1 {
				start, end = s*gso, min((s+1)*gso, size)
			}
			n := end - start // the first segment already in place
			if pos+s != i || start != 0 {
				n = copy(bufs[pos+s], bufs[i][start:end])
			}
			sizes[pos+s] = n
			eps[pos+s] = r.eps[i]
		}
		r.eps[i] = nil
	}
	if total == 0 {
		// The first message alone has more segments than the caller
		// has buffers: hand out what fits of it now.
		return r.fromStash(bufs, sizes, eps)
	}
	return total
}

// keep copies a message that did not fit into the stash.
func (r *receiver) keep(msg []byte, gso int, ep *Endpoint) {
	r.stash = append(r.stash, stashed{})
	st := &r.stash[len(r.stash)-1]
	st.data = append(st.data[:0], msg...)
	st.off, st.gso, st.ep = 0, gso, ep
}

// fromStash hands out stashed datagrams, as many as fit.
func (r *receiver) fromStash(bufs [][]byte, sizes []int, eps []conn.Endpoint) int {
	n, done := 0, 0
	for done < len(r.stash) && n < len(bufs) {
		st := &r.stash[done]
		if len(st.data) == 0 { // an empty datagram
			sizes[n], eps[n] = 0, st.ep
			n++
			done++
			continue
		}
		for n < len(bufs) && st.off < len(st.data) {
			end := len(st.data)
			if st.gso > 0 {
				end = min(st.off+st.gso, end)
			}
			sizes[n] = copy(bufs[n], st.data[st.off:end])
			eps[n] = st.ep
			st.off = end
			n++
		}
		if st.off < len(st.data) {
			break
		}
		done++
	}
	rest := copy(r.stash, r.stash[done:])
	clear(r.stash[rest:])
	r.stash = r.stash[:rest]
	return n
}
