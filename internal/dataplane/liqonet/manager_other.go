//go:build !linux

package liqonet

import "net/netip"

// Stats are the manager's counters since New.
type Stats struct {
	Reasserts uint64
	Resets    map[string]uint64
}

// Manager is only implemented on Linux.
type Manager struct{}

// New returns ErrUnsupported.
func New(Options) (*Manager, error) { return nil, ErrUnsupported }

// SetPeer returns ErrUnsupported.
func (*Manager) SetPeer(string, []netip.Prefix, bool) error { return ErrUnsupported }

// SetMapped returns ErrUnsupported.
func (*Manager) SetMapped(string, []netip.Prefix) error { return ErrUnsupported }

// RemovePeer returns ErrUnsupported.
func (*Manager) RemovePeer(string) error { return ErrUnsupported }

// Ensure returns ErrUnsupported.
func (*Manager) Ensure() (bool, error) { return false, ErrUnsupported }

// Stats returns nothing.
func (*Manager) Stats() Stats { return Stats{} }

// Close does nothing.
func (*Manager) Close() error { return nil }
