package admin

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/liqo-relay/relay/internal/core/status"
)

// eventsShown is how many recent path changes RenderTable lists.
const eventsShown = 5

// activeMark flags the path that carries a peer's traffic.
const activeMark = "*"

// RenderTable writes the human form of s, as `relay status` prints it: a
// header for the relay, then one block per peer (name, reachability,
// active path, prefixes, handshake age, traffic) with one row per path
// (name, endpoint, state, RTT, jitter, loss, time since the last change),
// the active path marked with "*", then the most recent path changes. Ages
// are relative to now. With color, states are green (up), red (down) and
// yellow (dampened); without it the output is plain ASCII apart from what
// the names themselves contain.
func RenderTable(w io.Writer, s status.Status, now time.Time, color bool) {
	fmt.Fprintf(w, "%s  mode %s  version %s  uptime %s  config generation %d\n",
		orDash(s.Name), orDash(s.Mode), orDash(s.Version),
		humanDuration(time.Duration(s.UptimeSeconds*float64(time.Second))), s.ConfigGeneration)
	fmt.Fprintf(w, "public key %s  listen port %d\n", orDash(s.PublicKey), s.ListenPort)

	if len(s.Peers) == 0 {
		io.WriteString(w, "\nno peers configured\n")
	}
	// One table for all peers, so the path columns line up across blocks.
	// Row 0 is the header; then each peer's paths, in order.
	var paths table
	paths.add(plain(""), plain("PATH"), plain("ENDPOINT"), plain("STATE"), plain("RTT"),
		plain("JITTER"), plain("LOSS"), plain("CHANGED"), plain(""))
	for _, p := range s.Peers {
		for _, ps := range p.Paths {
			paths.add(pathRow(p, ps, now)...)
		}
	}
	row := 1
	for _, p := range s.Peers {
		io.WriteString(w, "\n"+peerLine(p, now, color))
		if len(p.Paths) == 0 {
			io.WriteString(w, "  no paths\n")
			continue
		}
		io.WriteString(w, paths.line(0, "  ", color))
		for range p.Paths {
			io.WriteString(w, paths.line(row, "  ", color))
			row++
		}
	}

	if n := len(s.Events); n > 0 {
		io.WriteString(w, "\nrecent path changes\n")
		var ev table
		for _, e := range s.Events[max(0, n-eventsShown):] {
			ev.add(plain(age(e.At, now)), plain(e.Peer),
				plain(orNone(e.From)+" -> "+orNone(e.To)), plain(e.Reason))
		}
		ev.write(w, "  ", color)
	}
}

// peerLine is the first line of a peer's block.
func peerLine(p status.PeerStatus, now time.Time, color bool) string {
	reach := cell{text: "reachable", color: ansiGreen}
	if !p.Reachable {
		reach = cell{text: "UNREACHABLE", color: ansiRed}
	}
	r := reach.text
	if color {
		r = reach.color + reach.text + ansiReset
	}
	handshake := "never"
	if !p.LastHandshake.IsZero() {
		handshake = age(p.LastHandshake, now)
	}
	return fmt.Sprintf("peer %s  %s  active %s  prefixes %s  handshake %s  rx %s  tx %s\n",
		p.Name, r, orDash(p.ActivePath), orDash(strings.Join(p.Prefixes, ",")),
		handshake, humanBytes(p.RxBytes), humanBytes(p.TxBytes))
}

// pathRow is one path's row in the peer's block.
func pathRow(p status.PeerStatus, ps status.PathStatus, now time.Time) []cell {
	mark := ""
	if ps.Name != "" && ps.Name == p.ActivePath {
		mark = activeMark
	}
	endpoint := orDash(ps.Endpoint)
	if ps.Address != "" && ps.Address != ps.Endpoint {
		endpoint += " = " + ps.Address
	}
	if ps.Observed != "" && ps.Observed != ps.Endpoint && ps.Observed != ps.Address {
		endpoint += " (seen " + ps.Observed + ")"
	}
	rtt, jitter := "-", "-"
	if ps.State == status.PathUp || ps.State == status.PathDampened {
		rtt, jitter = ms(ps.RTTMs), ms(ps.JitterMs)
	}
	var notes []string
	if ps.Bias != 0 {
		notes = append(notes, "bias "+trimFloat(ps.Bias)+"ms")
	}
	if ps.Penalty != 0 {
		notes = append(notes, fmt.Sprintf("penalty %.0f", ps.Penalty))
	}
	if ps.DNSError != "" {
		notes = append(notes, "dns: "+ps.DNSError)
	}
	return []cell{
		plain(mark), plain(ps.Name), plain(endpoint),
		{text: string(ps.State), color: stateColor(ps.State)},
		plain(rtt), plain(jitter), plain(percent(ps.Loss)),
		plain(age(ps.LastChange, now)), plain(strings.Join(notes, " ")),
	}
}

// RenderPing writes the results of `relay ping PEER`: one row per path
// with its RTT, or the reason the probe failed.
func RenderPing(w io.Writer, peer string, r []status.PingResult) {
	fmt.Fprintf(w, "ping %s\n", peer)
	if len(r) == 0 {
		io.WriteString(w, "  no paths\n")
		return
	}
	var t table
	for _, p := range r {
		if p.OK {
			t.add(plain(p.Path), plain(ms(p.RTTMs)), plain("ok"))
			continue
		}
		msg := p.Error
		if msg == "" {
			msg = "failed"
		}
		t.add(plain(p.Path), plain("-"), plain(msg))
	}
	t.write(w, "  ", false)
}

func stateColor(s status.PathState) string {
	switch s {
	case status.PathUp:
		return ansiGreen
	case status.PathDown, status.PathUnresolved:
		return ansiRed
	case status.PathDampened, status.PathResolving:
		return ansiYellow
	}
	return ""
}

// age is how long before now t was, e.g. "12s ago", or "-" for the zero
// time.
func age(t status.Time, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return humanDuration(now.Sub(t.Time)) + " ago"
}

// humanDuration is a compact duration at a precision that suits its size:
// 45s, 3m12s, 5h7m, 2d4h. Negative durations (clock skew) show as 0s.
func humanDuration(d time.Duration) string {
	d = max(d, 0)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm%ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%dd%dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
}

// humanBytes is a byte count in binary units: 512 B, 1.5 KiB, 3.2 GiB.
func humanBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v := float64(n) / unit
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		if v < unit {
			return fmt.Sprintf("%.1f %s", v, u)
		}
		v /= unit
	}
	return fmt.Sprintf("%.1f PiB", v)
}

// ms is a duration in milliseconds with precision that suits its size.
func ms(v float64) string {
	if v < 1 {
		return fmt.Sprintf("%.2fms", v)
	}
	return fmt.Sprintf("%.1fms", v)
}

// percent is a loss ratio as a percentage: 0%, 2.5%, 40%.
func percent(ratio float64) string {
	p := ratio * 100
	switch {
	case p == 0:
		return "0%"
	case p < 10:
		return fmt.Sprintf("%.1f%%", p)
	}
	return fmt.Sprintf("%.0f%%", p)
}

func trimFloat(f float64) string { return fmt.Sprintf("%g", f) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
