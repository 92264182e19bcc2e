// Package admintest provides a scripted admin.Source for tests of the admin
// server and of the commands that talk to it.
package admintest

import (
	"context"
	"fmt"
	"sync"

	"github.com/liqo-relay/relay/internal/control/admin"
	"github.com/liqo-relay/relay/internal/core/status"
)

var _ admin.Source = (*Source)(nil)

// Source is an admin.Source whose answers are set by the test. The zero
// value is not ready, has an empty status and knows no peers. It is safe
// for concurrent use.
type Source struct {
	mu        sync.Mutex
	status    status.Status
	statusErr error
	ready     bool
	reason    string
	pings     map[string][]status.PingResult
	pingErr   error
	pingHook  func(ctx context.Context, peer string) error
	pinged    []string
}

// SetStatus sets what Status returns.
func (s *Source) SetStatus(st status.Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status = st
}

// SetReady sets what Ready returns.
func (s *Source) SetReady(ready bool, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ready, s.reason = ready, reason
}

// SetPing makes Ping(peer) return r; peers never set are unknown.
func (s *Source) SetPing(peer string, r []status.PingResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pings == nil {
		s.pings = make(map[string][]status.PingResult)
	}
	s.pings[peer] = r
}

// SetPingError makes every Ping of a known peer fail with err (nil to
// clear).
func (s *Source) SetPingError(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pingErr = err
}

// SetPingHook installs f to run at the start of every Ping, outside the
// lock; a non-nil error from it is returned by Ping. Tests use it to block
// a ping until its context ends.
func (s *Source) SetPingHook(f func(ctx context.Context, peer string) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pingHook = f
}

// Pinged returns the peers Ping was called with, in order.
func (s *Source) Pinged() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.pinged...)
}

// SetStatusError makes Status fail with err (nil: succeed again).
func (s *Source) SetStatusError(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.statusErr = err
}

// Status implements admin.Source.
func (s *Source) Status(context.Context) (status.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.statusErr != nil {
		return status.Status{}, s.statusErr
	}
	return s.status, nil
}

// Ready implements admin.Source.
func (s *Source) Ready() (bool, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ready, s.reason
}

// Ping implements admin.Source.
func (s *Source) Ping(ctx context.Context, peer string) ([]status.PingResult, error) {
	s.mu.Lock()
	s.pinged = append(s.pinged, peer)
	hook := s.pingHook
	s.mu.Unlock()
	if hook != nil {
		if err := hook(ctx, peer); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.pings[peer]
	if !ok {
		return nil, fmt.Errorf("ping %q: %w", peer, admin.ErrUnknownPeer)
	}
	if s.pingErr != nil {
		return nil, s.pingErr
	}
	return append([]status.PingResult(nil), r...), nil
}
