package udpbind

import (
	"fmt"
	"net/netip"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sender holds the message headers of one send; Send and SendBatch take
// one from the bind's pool, since wireguard-go sends from a goroutine per
// peer. Only the entries a send fills are used, so nothing is cleared
// between sends but the buffer pointers.
type sender struct {
	hdrs   []unix.Mmsghdr
	iovs   []unix.Iovec
	names  []sockaddr
	ctrls  []control
	lens   []int
	groups []int
	// covered[m] is the number of packets in messages before m.
	covered []int
}

func newSender(batch int) *sender {
	return &sender{
		hdrs:    make([]unix.Mmsghdr, batch),
		iovs:    make([]unix.Iovec, batch),
		names:   make([]sockaddr, batch),
		ctrls:   make([]control, batch),
		lens:    make([]int, 0, batch),
		groups:  make([]int, 0, batch),
		covered: make([]int, batch+1),
	}
}

// fillOne prepares bufs, all to dst, from src if valid: with gso, runs of
// packets go out as one GSO message (gsoGroups) whose packets are its
// iovecs, so nothing is copied; without, one message per packet. It
// returns the number of messages.
func (w *sender) fillOne(bufs [][]byte, dst netip.AddrPort, src netip.Addr, ifindex int32, gso bool) int {
	nameLen := w.names[0].put(dst)
	w.lens = w.lens[:0]
	for _, b := range bufs {
		w.lens = append(w.lens, len(b))
	}
	w.groups = w.groups[:0]
	if gso {
		maxPayload := maxIPv4Payload
		if dst.Addr().Unmap().Is6() {
			maxPayload = maxIPv6Payload
		}
		w.groups = gsoGroups(w.lens, maxPayload, w.groups)
	} else {
		for range bufs {
			w.groups = append(w.groups, 1)
		}
	}
	k := 0
	for m, count := range w.groups {
		w.covered[m] = k
		for j := range count {
			w.iovs[k+j].Base = unsafe.SliceData(bufs[k+j])
			w.iovs[k+j].SetLen(len(bufs[k+j]))
		}
		segment := 0
		if count > 1 {
			segment = len(bufs[k])
		}
		h := &w.hdrs[m].Hdr
		h.Name = (*byte)(unsafe.Pointer(&w.names[0]))
		h.Namelen = nameLen
		h.Iov = &w.iovs[k]
		h.SetIovlen(count)
		w.setControl(m, putControl(&w.ctrls[m], src, ifindex, segment))
		k += count
	}
	w.covered[len(w.groups)] = k
	return len(w.groups)
}

// fillMany prepares one message per packet, pkts[i] to dsts[i], for the
// packets whose destination is of the family v6 says, from start on,
// until the headers are full. It returns the number of messages and the
// index after the last packet looked at.
func (w *sender) fillMany(pkts [][]byte, dsts []netip.AddrPort, start int, v6 bool) (n, next int) {
	i := start
	for ; i < len(pkts) && n < len(w.hdrs); i++ {
		if dsts[i].Addr().Unmap().Is6() != v6 {
			continue
		}
		w.iovs[n].Base = unsafe.SliceData(pkts[i])
		w.iovs[n].SetLen(len(pkts[i]))
		h := &w.hdrs[n].Hdr
		h.Name = (*byte)(unsafe.Pointer(&w.names[n]))
		h.Namelen = w.names[n].put(dsts[i])
		h.Iov = &w.iovs[n]
		h.SetIovlen(1)
		w.setControl(n, 0)
		n++
	}
	return n, i
}

func (w *sender) setControl(m, n int) {
	h := &w.hdrs[m].Hdr
	if n == 0 {
		h.Control = nil
		h.SetControllen(0)
		return
	}
	h.Control = &w.ctrls[m][0]
	h.SetControllen(n)
}

// release drops the pointers into the caller's buffers.
func (w *sender) release(iovs int) {
	for i := range iovs {
		w.iovs[i].Base = nil
	}
}

// sendmmsg sends messages [start, n). With keepGoing, a message the
// kernel refuses is skipped and the rest still go (a batch to many
// destinations: one unreachable peer must not silence the others), and
// the first error is returned at the end (the others are of the same
// sort, or rarer); without it, sending stops at
// the first error. It reports how many messages went before a stop.
func (w *sender) sendmmsg(s *socket, start, n int, keepGoing bool) (int, error) {
	var first error
	for start < n {
		sent, errno, err := s.mmsg(unix.SYS_SENDMMSG, w.hdrs[start:n])
		if err != nil {
			return start, err
		}
		if errno != 0 {
			// sendmmsg fails only when the first message of the call
			// does; the ones before it were counted by the last call.
			serr := os.NewSyscallError("sendmmsg", errno)
			if !keepGoing {
				return start, serr
			}
			if first == nil {
				first = fmt.Errorf("to %v: %w", w.names[start].get(), serr)
			}
			start++
			continue
		}
		start += sent
	}
	return start, first
}
