package sim

import (
	"net/netip"
	"slices"
	"time"

	"github.com/liqo-relay/relay/internal/core/engine"
)

// The simulated WireGuard: a handshake initiation goes over the peer's
// active link; unless the link is cut when the initiation or the response
// leaves, the session is made one base RTT after it is sent. A lost
// initiation is retried after rekeyTimeout, up to rekeyAttempts in all,
// as wireguard-go does. While our initiations to a peer are held (Hold),
// the Bind drops ours, retries included; the peer's go through.
const (
	rekeyTimeout  = 5 * time.Second // wireguard-go's REKEY_TIMEOUT
	rekeyAttempts = 18              // REKEY_ATTEMPT_TIME (90 s) / REKEY_TIMEOUT
)

// Session is a WireGuard session made at At, by the peer's initiation
// (ByPeer) or by ours.
type Session struct {
	Peer   string
	At     time.Time
	ByPeer bool
}

// session is the simulated WireGuard state of one peer.
type session struct {
	last time.Time // when the current session began; zero: none
	held bool      // our initiations are held
}

// attempt is a handshake initiation to be sent at at (its tries-th), or,
// with done, a response arriving at at that makes the session.
type attempt struct {
	peer   string
	at     time.Time
	byPeer bool
	tries  int
	done   bool
}

// Initiate has the peer initiate a handshake at at (not before Now): as
// the designated initiator, say, or after moving to our new key.
func (m *Mesh) Initiate(peer string, at time.Time) {
	if at.Before(m.Now) {
		at = m.Now
	}
	m.initiate(peer, at, true)
}

// initiate sends an initiation of ours or the peer's at at; it replaces
// one of the same side still waiting to be sent or retried (WireGuard has
// one handshake in progress per peer and side).
func (m *Mesh) initiate(peer string, at time.Time, byPeer bool) {
	if _, ok := m.wg[peer]; !ok {
		return
	}
	m.attempts = slices.DeleteFunc(m.attempts, func(a attempt) bool {
		return a.peer == peer && a.byPeer == byPeer && !a.done
	})
	m.schedule(attempt{peer: peer, at: at, byPeer: byPeer})
}

// schedule queues a, after the attempts due no later.
func (m *Mesh) schedule(a attempt) {
	i, _ := slices.BinarySearchFunc(m.attempts, a.at, func(x attempt, t time.Time) int {
		if x.at.After(t) {
			return 1
		}
		return -1
	})
	m.attempts = slices.Insert(m.attempts, i, a)
}

// handshakes carries out the attempts due at Now.
func (m *Mesh) handshakes() {
	for len(m.attempts) > 0 && !m.attempts[0].at.After(m.Now) {
		a := m.attempts[0]
		m.attempts = m.attempts[1:]
		m.send(a)
	}
}

// send sends the initiation a over the peer's active link, or, when a is
// done, makes the session and ends the peer's other attempts.
func (m *Mesh) send(a attempt) {
	w := m.wg[a.peer]
	if a.done {
		w.last = a.at
		m.Sessions = append(m.Sessions, Session{Peer: a.peer, At: a.at, ByPeer: a.byPeer})
		m.attempts = slices.DeleteFunc(m.attempts, func(x attempt) bool { return x.peer == a.peer })
		return
	}
	active, _ := m.Engine.Reach(a.peer)
	l := m.links[a.peer][active]
	if (w.held && !a.byPeer) || l.Cut(a.at) || l.Cut(a.at.Add(l.Base/2)) {
		if a.tries++; a.tries < rekeyAttempts {
			a.at = a.at.Add(rekeyTimeout)
			m.schedule(a)
		}
		return
	}
	a.done, a.at = true, a.at.Add(l.Base)
	m.schedule(a)
}

// facts are what the engine reads of the simulated world while it steps.
// No peer sends probe requests of its own, so LastRequest is always zero:
// requests replace only the probes of idle peers, and no peer goes idle
// here (Mesh.housekeep).
type facts struct{ m *Mesh }

var _ engine.Facts = facts{}

// LastRx is the arrival of the latest data over the link with either
// address, while the links carry traffic (Mesh.Demand) and the data plane
// times it (not Mesh.CountsOnly).
func (f facts) LastRx(peer string, observed, addr netip.AddrPort) time.Time {
	m := f.m
	if !m.Demand || m.CountsOnly {
		return time.Time{}
	}
	id, ok := m.pathOf[addr]
	if !ok {
		id, ok = m.pathOf[observed]
	}
	if !ok || id.Peer != peer {
		return time.Time{}
	}
	return m.links[peer][id.Path].LastRx(m.Now)
}

func (facts) LastRequest(string, netip.AddrPort, netip.AddrPort) time.Time { return time.Time{} }

// LastHandshake is when the peer's current simulated session began.
func (f facts) LastHandshake(peer string) time.Time {
	if w, ok := f.m.wg[peer]; ok {
		return w.last
	}
	return time.Time{}
}

// LastHandshake is when the peer's current session began (zero: none).
func (m *Mesh) LastHandshake(peer string) time.Time { return facts{m}.LastHandshake(peer) }
