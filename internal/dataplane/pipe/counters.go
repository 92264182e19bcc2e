package pipe

import "sync/atomic"

// Counters are cumulative packet counts since Wrap.
type Counters struct {
	DroppedNoRules      uint64 // dropped because no rules were set
	DroppedBadSource    uint64 // read with a source outside Local
	DroppedBadDest      uint64 // written with a destination outside Local
	DroppedMalformed    uint64 // unparseable, or translation refused them
	TranslatedTX        uint64 // read from the local side and translated for a peer
	TranslatedRX        uint64 // received from a peer and translated for the local side
	MSSClamped          uint64 // TCP SYNs whose MSS was lowered
	ICMPSourceRewritten uint64 // foreign ICMP errors given the relay's source
}

// Counters returns a snapshot of the counters.
func (d *Device) Counters() Counters {
	c := &d.cnt
	return Counters{
		DroppedNoRules:      c.noRules.Load(),
		DroppedBadSource:    c.badSource.Load(),
		DroppedBadDest:      c.badDest.Load(),
		DroppedMalformed:    c.malformed.Load(),
		TranslatedTX:        c.translatedTX.Load(),
		TranslatedRX:        c.translatedRX.Load(),
		MSSClamped:          c.clamped.Load(),
		ICMPSourceRewritten: c.icmpRewritten.Load(),
	}
}

type counters struct {
	noRules, badSource, badDest, malformed, translatedTX, translatedRX, clamped, icmpRewritten atomic.Uint64
}

// batch accumulates one batch's counts so that the shared atomics are
// touched once per batch, not once per packet.
type batch struct {
	noRules, badSource, badDest, malformed, translatedTX, translatedRX, clamped, icmpRewritten uint64
}

func (c *counters) add(b *batch) {
	for _, f := range [...]struct {
		a *atomic.Uint64
		v uint64
	}{
		{&c.noRules, b.noRules}, {&c.badSource, b.badSource}, {&c.badDest, b.badDest},
		{&c.malformed, b.malformed}, {&c.translatedTX, b.translatedTX}, {&c.translatedRX, b.translatedRX},
		{&c.clamped, b.clamped},
		{&c.icmpRewritten, b.icmpRewritten},
	} {
		if f.v != 0 {
			f.a.Add(f.v)
		}
	}
}
