package metrics

// HandshakeReason is why the relay initiated a WireGuard handshake with a
// peer. The set is closed so the label stays bounded.
type HandshakeReason string

const (
	// HandshakeStartup: the relay started and greets every configured peer.
	HandshakeStartup HandshakeReason = "startup"
	// HandshakePeerAdded: the peer appeared in a reloaded configuration.
	HandshakePeerAdded HandshakeReason = "peer-added"
	// HandshakePeerRestarted: the peer's probes show it restarted (its
	// session state is gone), so a fresh handshake is needed.
	HandshakePeerRestarted HandshakeReason = "peer-restarted"
)

// ConfigReloaded counts one configuration reload: result "ok" when err is
// nil, "error" otherwise.
func (m *Metrics) ConfigReloaded(err error) {
	if m == nil {
		return
	}
	if err != nil {
		m.reloadError.Inc()
		return
	}
	m.reloadOK.Inc()
}

// HandshakeInitiated counts one handshake the relay initiated with the peer.
func (m *Metrics) HandshakeInitiated(peer string, reason HandshakeReason) {
	if m == nil {
		return
	}
	m.handshakes.WithLabelValues(peer, string(reason)).Inc()
}
