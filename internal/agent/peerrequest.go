package agent

import (
	"net/netip"
	"sync/atomic"
	"time"
)

// requestTimes records, per path address of one peer, when its latest
// fresh authenticated probe request arrived from there: the input of
// health.Monitor.ReplacedByRequest, by which the peer's requests replace
// our probes of an idle peer's paths. Receive goroutines write it
// (handleProbe), the engine reads it through the agent's facts (ready.go). Its
// address set is fixed when the probe index is built; the times carry over
// to the next index for the addresses that stay.
type requestTimes struct {
	base time.Time                        // the zero of the stored times, shared by every index of the agent
	at   map[netip.AddrPort]*atomic.Int64 // unmapped path address -> nanoseconds after base; 0: none yet
}

// newRequestTimes returns the record for addrs (unmapped, invalid ones
// skipped), keeping the times old has for them; old may be nil.
func newRequestTimes(base time.Time, old *requestTimes, addrs []netip.AddrPort) *requestTimes {
	r := &requestTimes{base: base, at: make(map[netip.AddrPort]*atomic.Int64, len(addrs))}
	for _, ap := range addrs {
		if !ap.IsValid() {
			continue
		}
		ap = unmapAddrPort(ap)
		if _, ok := r.at[ap]; ok {
			continue
		}
		if old != nil {
			if t, ok := old.at[ap]; ok {
				r.at[ap] = t
				continue
			}
		}
		r.at[ap] = new(atomic.Int64)
	}
	return r
}

// record notes a request from src at now; sources that are no path
// address of the peer are not recorded (they prove no path).
func (r *requestTimes) record(src netip.AddrPort, now time.Time) {
	if r == nil {
		return
	}
	if t, ok := r.at[unmapAddrPort(src)]; ok {
		t.Store(max(int64(now.Sub(r.base)), 1))
	}
}

// last returns the latest request time recorded for any of addrs; zero if
// none.
func (r *requestTimes) last(addrs ...netip.AddrPort) time.Time {
	if r == nil {
		return time.Time{}
	}
	var n int64
	for _, ap := range addrs {
		if !ap.IsValid() {
			continue
		}
		if t, ok := r.at[unmapAddrPort(ap)]; ok {
			n = max(n, t.Load())
		}
	}
	if n == 0 {
		return time.Time{}
	}
	return r.base.Add(time.Duration(n))
}
