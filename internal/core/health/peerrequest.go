package health

import "time"

// Requests replace probes on idle peers. Both relays of a pair probe every
// path, each on its own schedule, so an idle path carries two requests and
// two answers per probe interval where one exchange would prove it. A
// fresh authenticated request from the peer that arrived over a path
// proves that the path delivers the peer's packets to us, as the peer's
// WireGuard data would (demand.go); the shell offers it with
// ReplacedByRequest, and when that replaces our probe, the pair's probes
// on the path thin out to about three packets per interval instead of
// four.
//
// A request proves only the peer-to-us direction. Our own probes prove the
// other, so a request replaces a probe only while every probe we sent on
// the path in the last expiry window was answered (none outstanding but
// the one being offered), and at most requestRefresh probes in a row: if
// the path stops carrying our packets while the peer's still arrive (a
// one-way failure), the next probe we send is lost, and from then on
// requests neither replace our probes nor count as evidence, so the path
// goes down a detect time after the last request counted.
//
// It applies to the up paths of idle peers only (SetIdle): their detect
// time is already DetectMultiplier x idlePeerSlowdown x IdleInterval
// (6 s), and they are most of the probes of a relay with many peers. A
// busy peer's paths are probed exactly as before, so its detection is
// unchanged. For an idle peer, a failure in both directions is still
// detected a detect time after the last evidence (6 s); a one-way failure
// towards the peer within requestRefresh probe intervals plus the detect
// time of the cut (8 s at the defaults: still below the ~10 s of a Liqo
// gateway): the last request that counts replaced the first probe due
// after the cut at the latest.

// requestRefresh: at most this many probes in a row are replaced by the
// peer's requests. One keeps the one-way detection of an idle peer's path
// within 8 s (above) and still drops one probe in two on the side that
// replaces them.
const requestRefresh = 1

// ReplacedByRequest decides about probe p, which Due just returned and
// Demand kept, at now. lastReq is when the latest fresh authenticated
// probe request from the peer arrived over the path (zero: none known).
// It reports true when that request replaces the probe: the probe is
// withdrawn (as in Demand: not outstanding, not counted in ProbesSent,
// counted in Suppressed), the request is recorded as evidence of the
// path, and the shell must not send the probe. It does so only for an up
// path of an idle peer with no other probe outstanding, for a request
// within the last half interval, and for at most requestRefresh probes in
// a row; otherwise the request is not evidence and the probe must be
// sent.
func (m *Monitor) ReplacedByRequest(p Probe, lastReq, now time.Time) bool {
	q, ok := m.paths[p.ID]
	if !ok {
		return false
	}
	fresh := !lastReq.IsZero() && !lastReq.After(now) && now.Sub(lastReq) < q.interval()/demandFreshDiv
	if !q.peer.idle || !q.det.Up() || !fresh || q.reqQuiet >= requestRefresh || q.nOut != 1 || q.out[0].nonce != p.Nonce {
		q.reqQuiet = 0
		return false
	}
	q.nOut = 0
	q.sent--
	q.reqQuiet++
	q.suppressed++
	q.det.OnPassive(lastReq, q.span()) // as any evidence: detect time plus the jitter margin
	m.reschedule(q)
	return true
}
