package packet

import "encoding/binary"

// Internet checksum helpers (RFC 1071) and incremental update (RFC 1624).
//
// A "delta" is the unfolded one's-complement sum of ~m + m' over every 16-bit
// word m that changed to m'. Applying it to a checksum HC gives
// HC' = ~(~HC + delta) (RFC 1624, eqn. 3), which never turns a valid checksum
// into the other representation of zero.

// fold reduces a 64-bit accumulator to 16 bits with end-around carry.
func fold(acc uint64) uint16 {
	acc = (acc >> 32) + (acc & 0xffffffff)
	acc = (acc >> 16) + (acc & 0xffff)
	acc = (acc >> 16) + (acc & 0xffff)
	acc = (acc >> 16) + (acc & 0xffff)
	return uint16(acc)
}

// applyDelta returns the checksum csum updated for the word changes in d.
// d is a sum of at most a few dozen 16-bit terms, so ^csum + d < 2^32 and
// two end-around-carry steps reduce it to 16 bits.
func applyDelta(csum uint16, d uint64) uint16 {
	x := uint64(^csum) + d
	x = (x >> 16) + (x & 0xffff)
	x = (x >> 16) + (x & 0xffff)
	return ^uint16(x)
}

// updateAt updates the checksum stored at b[off:off+2] by d and returns the
// delta of that write itself (for an enclosing checksum that covers it).
func updateAt(b []byte, off int, d uint64) uint64 {
	old := binary.BigEndian.Uint16(b[off:])
	nw := applyDelta(old, d)
	binary.BigEndian.PutUint16(b[off:], nw)
	return uint64(^old) + uint64(nw)
}

// updateUDPAt is updateAt for a UDP checksum: a result of zero is sent as
// 0xffff, since zero means "no checksum".
func updateUDPAt(b []byte, off int, d uint64) uint64 {
	old := binary.BigEndian.Uint16(b[off:])
	nw := applyDelta(old, d)
	if nw == 0 {
		nw = 0xffff
	}
	binary.BigEndian.PutUint16(b[off:], nw)
	return uint64(^old) + uint64(nw)
}

// Sum adds the 16-bit big-endian words of b to acc (an odd trailing byte is
// padded with zero). Use Checksum to finish.
func Sum(b []byte, acc uint64) uint64 {
	for len(b) >= 8 {
		acc += uint64(binary.BigEndian.Uint16(b)) + uint64(binary.BigEndian.Uint16(b[2:])) +
			uint64(binary.BigEndian.Uint16(b[4:])) + uint64(binary.BigEndian.Uint16(b[6:]))
		b = b[8:]
	}
	for len(b) >= 2 {
		acc += uint64(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		acc += uint64(b[0]) << 8
	}
	return acc
}

// Checksum finishes a Sum into the value stored in a header.
func Checksum(acc uint64) uint16 { return ^fold(acc) }
