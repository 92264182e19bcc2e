//go:build linux

package liqonet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// watchPoll bounds how long the watcher blocks in one read, so it notices
// Close. It costs one wake-up per period and nothing else.
const watchPoll = 200 * time.Millisecond

// watcher is a netlink socket subscribed to IPv4 rule and route changes.
type watcher struct{ fd int }

// newWatcher subscribes to RTNLGRP_IPV4_RULE and RTNLGRP_IPV4_ROUTE in the
// current network namespace.
func newWatcher() (*watcher, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("liqo: open netlink watch socket: %w", err)
	}
	groups := uint32(1<<(unix.RTNLGRP_IPV4_RULE-1) | 1<<(unix.RTNLGRP_IPV4_ROUTE-1))
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: groups}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("liqo: subscribe to rule and route changes: %w", err)
	}
	tv := unix.NsecToTimeval(watchPoll.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("liqo: set watch socket timeout: %w", err)
	}
	return &watcher{fd: fd}, nil
}

func (w *watcher) close() { unix.Close(w.fd) }

// watch reasserts the rules and resyncs the route copy after every batch of
// rule or route changes (its own changes included: the resync that follows
// them finds nothing to do and changes nothing, so it settles). It is the
// manager's one goroutine; Close ends it.
func (m *Manager) watch(ctx context.Context, w *watcher) {
	defer close(m.done)
	defer w.close()
	buf := make([]byte, 1<<16)
	for {
		dirty := false
		for {
			n, _, err := unix.Recvfrom(w.fd, buf, 0)
			if n > 0 || errors.Is(err, unix.ENOBUFS) {
				// ENOBUFS: notifications were lost; resync anyway.
				dirty = true
				if _, _, err := unix.Recvfrom(w.fd, buf, unix.MSG_PEEK|unix.MSG_DONTWAIT); err == nil {
					continue // more queued: drain the batch first
				}
			}
			break
		}
		if ctx.Err() != nil {
			return
		}
		if !dirty {
			continue
		}
		m.mu.Lock()
		if !m.closed {
			if _, err := m.ensureLocked(true); err != nil {
				m.log.Error("reasserting policy rules and routes", "err", err)
			}
		}
		m.mu.Unlock()
	}
}
