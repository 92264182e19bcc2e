package metrics

// Reasons for HandshakeInitiated. The agent passes one of these (or
// another fixed string of its own); the label set stays as small as the set
// of literals in the agent.
const (
	// HandshakeStartup: the relay started and greets every configured peer.
	HandshakeStartup = "startup"
	// HandshakePeerAdded: the peer appeared in a reloaded configuration.
	HandshakePeerAdded = "peer-added"
	// HandshakePeerRestarted: the peer's probes show it restarted (its
	// session state is gone), so a fresh handshake is needed.
	HandshakePeerRestarted = "peer-restarted"
	// HandshakeRecovered: the peer became reachable again after its
	// session went stale.
	HandshakeRecovered = "recovered"
	// HandshakePeerRotated: the peer switched to its next key and we
	// moved its allowed IPs to the new key (docs/protocol.md, "Key
	// rotation"): the new key needs its first session.
	HandshakePeerRotated = "peer-rotated"
)

// ConfigReload counts one configuration reload attempt, by result: "ok"
// when it was applied, "error" when it was rejected.
func (m *Metrics) ConfigReload(ok bool) {
	if m == nil {
		return
	}
	if ok {
		m.reloadOK.Inc()
		return
	}
	m.reloadError.Inc()
}

// HandshakeInitiated counts one WireGuard handshake the relay initiated
// with the peer, for reason (see the Handshake constants).
func (m *Metrics) HandshakeInitiated(peer, reason string) {
	if m == nil {
		return
	}
	m.handshakes.WithLabelValues(peer, reason).Inc()
}

// ProbeRejected counts one probe packet the relay received and discarded:
// it failed authentication, was a replay, or arrived while the relay was
// too busy to handle it. A steady rate points at a key mismatch or an
// overloaded relay.
func (m *Metrics) ProbeRejected() {
	if m == nil {
		return
	}
	m.probesRejected.Inc()
}
