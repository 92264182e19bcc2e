package sim

import "fmt"

// CheckInvariant: never an active path that is down while another path of
// the same peer is usable (up and not dampened), and never an unreachable
// peer with a usable path.
func (m *Mesh) CheckInvariant() error {
	for _, peer := range m.peers {
		act, ok := m.Engine.ActivePath(peer)
		for i, l := range m.links[peer] {
			if !m.usable(peer, i) {
				continue
			}
			if !ok {
				return fmt.Errorf("%v: %s unreachable while %s is up", m.Now, peer, l.Name)
			}
			if a := m.index(peer, act); a < 0 || !m.up(peer, a) {
				return fmt.Errorf("%v: %s active on %s, which is down, while %s is up", m.Now, peer, act, l.Name)
			}
		}
	}
	return nil
}
