package metrics

// DropReason is why the router refused a packet. The set is closed so the
// reason label stays bounded; every reason is exported from the start, at 0.
type DropReason uint8

const (
	// DropBadSource: the source address is not one the sender may use
	// (not inside the sending side's pod CIDR after translation).
	DropBadSource DropReason = iota
	// DropBadDestination: no route for the destination, or it is not one of
	// the receiving peer's prefixes.
	DropBadDestination
	// DropMalformed: the packet could not be parsed.
	DropMalformed
	numDropReasons
)

// String returns the reason label value.
func (r DropReason) String() string {
	switch r {
	case DropBadSource:
		return "bad_source"
	case DropBadDestination:
		return "bad_destination"
	case DropMalformed:
		return "malformed"
	}
	return "unknown"
}

// Direction is the direction of traffic relative to this relay.
type Direction uint8

const (
	// DirRX is traffic received from a peer, towards local pods.
	DirRX Direction = iota
	// DirTX is traffic from local pods, sent to a peer.
	DirTX
	numDirections
)

// String returns the direction label value.
func (d Direction) String() string {
	switch d {
	case DirRX:
		return "rx"
	case DirTX:
		return "tx"
	}
	return "unknown"
}

// AddPacketsDropped counts n packets dropped for reason. Out-of-range
// reasons are ignored. It does not allocate, so the router may call it per
// packet, though batching (once per read or write batch) is cheaper.
func (m *Metrics) AddPacketsDropped(reason DropReason, n int) {
	if m == nil || reason >= numDropReasons || n <= 0 {
		return
	}
	m.dropped[reason].Add(float64(n))
}

// AddTranslated counts n packets whose addresses were rewritten in the
// given direction. Out-of-range directions are ignored. It does not
// allocate.
func (m *Metrics) AddTranslated(dir Direction, n int) {
	if m == nil || dir >= numDirections || n <= 0 {
		return
	}
	m.translated[dir].Add(float64(n))
}

// AddMSSClamped counts n TCP SYNs whose MSS option was lowered. It does not
// allocate.
func (m *Metrics) AddMSSClamped(n int) {
	if m == nil || n <= 0 {
		return
	}
	m.mssClamped.Add(float64(n))
}
