package agent

import (
	"bufio"
	"strconv"
	"strings"
	"time"

	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/engine"
	"github.com/liqo-relay/relay/internal/core/failover"
	"github.com/liqo-relay/relay/internal/core/health"
	"github.com/liqo-relay/relay/internal/core/status"
	"github.com/liqo-relay/relay/internal/version"
)

// eventLogSize bounds the switch history kept for /status.
const eventLogSize = 64

// eventLog is a ring of the most recent path switches.
type eventLog struct {
	buf   [eventLogSize]status.Event
	next  int
	n     int
	added uint64 // every event ever added
}

func (l *eventLog) add(e status.Event) {
	l.added++
	l.buf[l.next] = e
	l.next = (l.next + 1) % eventLogSize
	if l.n < eventLogSize {
		l.n++
	}
}

// list returns the events, oldest first.
func (l *eventLog) list() []status.Event {
	out := make([]status.Event, 0, l.n)
	for i := 0; i < l.n; i++ {
		out = append(out, l.buf[(l.next-l.n+i+eventLogSize)%eventLogSize])
	}
	return out
}

// wgPeerInfo is what WireGuard knows of a peer.
type wgPeerInfo struct {
	lastHandshake time.Time
	rx, tx        uint64
}

// wireguardPeers reads per-peer counters from wireguard-go's UAPI.
func (a *Agent) wireguardPeers() map[string]wgPeerInfo {
	out := map[string]wgPeerInfo{}
	text, err := a.dp.wg.IpcGet()
	if err != nil {
		return out
	}
	var key string
	var info wgPeerInfo
	var sec int64
	flush := func() {
		if key != "" {
			out[key] = info
		}
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		switch k {
		case "public_key":
			flush()
			key, info, sec = v, wgPeerInfo{}, 0
		case "last_handshake_time_sec":
			sec, _ = strconv.ParseInt(v, 10, 64)
		case "last_handshake_time_nsec":
			nsec, _ := strconv.ParseInt(v, 10, 64)
			if sec != 0 || nsec != 0 {
				info.lastHandshake = time.Unix(sec, nsec)
			}
		case "rx_bytes":
			info.rx, _ = strconv.ParseUint(v, 10, 64)
		case "tx_bytes":
			info.tx, _ = strconv.ParseUint(v, 10, 64)
		}
	}
	flush()
	return out
}

func (a *Agent) lastHandshake(st *peerState) time.Time {
	return a.wireguardPeers()[hexKey(st.cfg.PublicKey)].lastHandshake
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// buildStatus renders the owner goroutine's state for /status.
func (a *Agent) buildStatus() status.Status {
	now := a.clock.Now()
	wg := a.wireguardPeers()
	st := status.Status{
		Name:             a.cfg.Name,
		Version:          version.String(),
		Mode:             string(a.cfg.Mode),
		PublicKey:        a.cfg.PrivateKey.PublicKey().String(),
		KeyRotation:      a.rotationStatus(now),
		ListenPort:       int(a.cfg.ListenPort),
		UptimeSeconds:    now.Sub(a.started).Seconds(),
		ConfigGeneration: a.gen,
		Peers:            []status.PeerStatus{},
		Events:           a.events.list(),
	}
	for _, p := range a.cfg.Peers {
		ps, ok := a.peers[p.Name]
		if !ok {
			continue
		}
		info := wg[hexKey(ps.cfg.PublicKey)]
		v, _ := a.eng.Peer(p.Name)
		out := status.PeerStatus{
			Name:          p.Name,
			PublicKey:     ps.cfg.PublicKey.String(),
			Reachable:     v.Reachable,
			Prefixes:      prefixStrings(p),
			LastHandshake: status.At(info.lastHandshake),
			RxBytes:       info.rx,
			TxBytes:       info.tx,
			Paths:         []status.PathStatus{},
		}
		if !ps.cfg.NextPublicKey.IsZero() {
			out.NextPublicKey = ps.cfg.NextPublicKey.String()
		}
		if v.Reachable && v.Active < len(p.Paths) {
			out.ActivePath = p.Paths[v.Active].Name
		}
		for i, path := range p.Paths {
			out.Paths = append(out.Paths, a.pathStatus(ps, v, i, path))
		}
		st.Peers = append(st.Peers, out)
	}
	return st
}

func prefixStrings(p config.Peer) []string {
	out := make([]string, len(p.Prefixes))
	for i, x := range p.Prefixes {
		out[i] = x.String()
	}
	return out
}

func (a *Agent) pathStatus(ps *peerState, v engine.PeerView, i int, path config.Path) status.PathStatus {
	out := status.PathStatus{
		Name:     path.Name,
		Endpoint: path.Endpoint,
		State:    status.PathDown,
		Bias:     ms(path.Bias),
	}
	if ps.paths[i].addr.IsValid() {
		out.Address = ps.paths[i].addr.String()
	}
	if i < len(v.Observed) && v.Observed[i].IsValid() {
		out.Observed = v.Observed[i].String()
	}
	if s, ok := a.eng.Stats(ps.cfg.Name, i); ok {
		if s.State == health.Up {
			out.State = status.PathUp
		}
		out.RTTMs = ms(s.SRTT)
		out.JitterMs = ms(s.Jitter)
		out.Loss = s.Loss
		out.LastChange = status.At(s.LastChange)
	}
	if state, penalty, ok := a.eng.Selection(ps.cfg.Name, i); ok {
		if state == failover.Dampened {
			out.State = status.PathDampened
		}
		out.Penalty = penalty
	}
	if state, errText, ok := a.dnsState(ps, i); ok {
		out.State, out.DNSError = state, errText
	} else {
		out.DNSError = errText
	}
	return out
}
