package metrics

// Redundant records what redundant sending to the peer cost so far: the
// copies sent over its second path and their bytes on the wire, as the
// Bind counts them (totals, not increments; see PeerBytes for resets).
// They are exported as relay_redundant_packets_total{peer} and
// relay_redundant_bytes_total{peer}.
func (m *Metrics) Redundant(peer string, packets, bytes uint64) {
	if m == nil {
		return
	}
	m.redundantPkts.set(packets, peer)
	m.redundantBytes.set(bytes, peer)
}
