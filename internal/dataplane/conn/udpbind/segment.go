package udpbind

// Planning how GRO-coalesced datagrams are split and how packets are
// grouped for a GSO send: pure functions over sizes, so that the
// system-call code only moves bytes where these say.

// maxSegments is the kernel's limit of segments in one UDP GSO send
// (UDP_MAX_SEGMENTS) and in one GRO-coalesced receive.
const maxSegments = 64

// Largest UDP payloads of one (GSO) datagram, headers excluded: beyond
// them the kernel answers EMSGSIZE. IPv6 does not count its own header.
const (
	maxIPv4Payload = 1<<16 - 1 - 20 - 8
	maxIPv6Payload = 1<<16 - 1 - 8
)

// segments returns how many datagrams a received message of n bytes
// coalesced with segment size gso (0: not coalesced) holds.
func segments(n, gso int) int {
	if gso <= 0 || n <= gso {
		return 1
	}
	return (n + gso - 1) / gso
}

// gsoGroups splits packets of the given lengths, in order, into groups
// for UDP GSO sends: each group is sent as one datagram whose payload the
// kernel cuts every segment bytes (the group's first length). A group
// holds at most maxSegments packets and maxPayload bytes, every packet but
// the last is exactly as long as the first, and the last may be shorter.
// It appends the number of packets of each group to out and returns it.
func gsoGroups(lens []int, maxPayload int, out []int) []int {
	for i := 0; i < len(lens); {
		size, total, n := lens[i], lens[i], 1
		for i+n < len(lens) && n < maxSegments && lens[i+n-1] == size && lens[i+n] <= size &&
			total+lens[i+n] <= maxPayload && size > 0 {
			total += lens[i+n]
			n++
		}
		out = append(out, n)
		i += n
	}
	return out
}
