package metrics

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
// with the peer, for reason (engine.ReasonStartup and the other Reason constants).
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
