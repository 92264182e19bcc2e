package metrics

// PipelineCounters are the packet pipeline's cumulative counters, as the
// pipeline reports them (totals since it started, not increments).
type PipelineCounters struct {
	// Packets dropped because the source address is not one the sender
	// may use.
	DroppedBadSource uint64
	// Packets dropped because the destination is not routable to, or not
	// owned by, the receiving side.
	DroppedBadDestination uint64
	// Packets dropped because they could not be parsed.
	DroppedMalformed uint64
	// Packets whose addresses were rewritten (overlapping pod CIDRs), by
	// direction: RX was received from a peer, TX is sent to one.
	TranslatedRX uint64
	TranslatedTX uint64
	// TCP SYNs whose MSS option was lowered to fit the tunnel MTU.
	MSSClamped uint64
}

// Drop reasons and directions: the complete label value sets.
const (
	dropBadSource      = "bad_source"
	dropBadDestination = "bad_destination"
	dropMalformed      = "malformed"
	dirRX              = "rx"
	dirTX              = "tx"
)

// Pipeline records the pipeline's cumulative counters (see
// PipelineCounters). Call it periodically; a total that goes down is taken
// as a pipeline restart and the exported counter stays monotonic.
func (m *Metrics) Pipeline(c PipelineCounters) {
	if m == nil {
		return
	}
	m.dropped.set(c.DroppedBadSource, dropBadSource)
	m.dropped.set(c.DroppedBadDestination, dropBadDestination)
	m.dropped.set(c.DroppedMalformed, dropMalformed)
	m.translated.set(c.TranslatedRX, dirRX)
	m.translated.set(c.TranslatedTX, dirTX)
	m.mssClamped.set(c.MSSClamped)
}
