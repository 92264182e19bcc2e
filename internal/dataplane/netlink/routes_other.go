//go:build !linux

package netlink

import "net/netip"

// RouteManager is only implemented on Linux, where it programs routes and
// policy rules over netlink.
type RouteManager struct{}

// NewRouteManager returns ErrRoutesUnsupported off Linux.
func NewRouteManager(opts RouteOptions) (*RouteManager, error) { return nil, ErrRoutesUnsupported }

// SetPeer returns ErrRoutesUnsupported off Linux.
func (m *RouteManager) SetPeer(name string, prefixes []netip.Prefix, reachable bool) error {
	return ErrRoutesUnsupported
}

// RemovePeer returns ErrRoutesUnsupported off Linux.
func (m *RouteManager) RemovePeer(name string) error { return ErrRoutesUnsupported }

// EnsureRules returns ErrRoutesUnsupported off Linux.
func (m *RouteManager) EnsureRules() (bool, error) { return false, ErrRoutesUnsupported }

// Close does nothing off Linux.
func (m *RouteManager) Close() error { return nil }

// CleanupStale returns ErrRoutesUnsupported off Linux.
func CleanupStale(opts RouteOptions) error { return ErrRoutesUnsupported }
