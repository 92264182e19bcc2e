package demo

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/liqo-relay/relay/internal/core/status"
)

// view renders the demo: a redrawn screen on a terminal, plain lines
// otherwise.
type view struct {
	o       Options
	f       *demoFederation
	start   time.Time
	phase   string
	steps   []step // the cuts and restores of the direct link, in order
	stream  *stream
	seen    map[string]time.Time // per relay: newest event already printed
	events  []string             // formatted, newest last
	lastOut time.Time
	status  map[string]status.Status
}

func newView(o Options, f *demoFederation) *view {
	return &view{o: o, f: f, start: time.Now(), seen: map[string]time.Time{}, status: map[string]status.Status{}}
}

const (
	reset  = "\x1b[0m"
	bold   = "\x1b[1m"
	dim    = "\x1b[2m"
	green  = "\x1b[32m"
	red    = "\x1b[31m"
	yellow = "\x1b[33m"
	cyan   = "\x1b[36m"
)

func (v *view) c(code, s string) string {
	if !v.o.TTY {
		return s
	}
	return code + s + reset
}

func (v *view) elapsed(t time.Time) string {
	return fmt.Sprintf("%5.1fs", t.Sub(v.start).Seconds())
}

// collect refreshes the relays' status and gathers new events.
func (v *view) collect() {
	for _, name := range relayNames {
		st, err := v.f.Relay(name).Agent.Status(context.Background())
		if err != nil {
			continue // the relay is stopping: keep its last status
		}
		v.status[name] = st
		for _, e := range st.Events {
			at := e.At.Time
			if !at.After(v.seen[name]) {
				continue
			}
			v.seen[name] = at
			to := e.To
			if to == "" {
				to = "(unreachable)"
			}
			from := e.From
			if from == "" {
				from = "-"
			}
			line := fmt.Sprintf("%s  %-10s → %-10s  %s → %s  (%s)", v.elapsed(at), name, e.Peer, from, to, e.Reason)
			v.events = append(v.events, line)
			if !v.o.TTY {
				fmt.Fprintf(v.o.Out, "event  %s\n", line)
			}
		}
	}
	if len(v.events) > 8 {
		v.events = v.events[len(v.events)-8:]
	}
}

// announce prints a phase change.
func (v *view) announce() {
	if !v.o.TTY {
		fmt.Fprintf(v.o.Out, "phase  %s  %s\n", v.elapsed(time.Now()), v.phase)
	}
}

func (v *view) draw(now time.Time) {
	v.collect()
	if !v.o.TTY {
		// Plain mode: a summary every 2 s, events as they happen.
		if now.Sub(v.lastOut) < 2*time.Second {
			return
		}
		v.lastOut = now
		v.plain(now)
		return
	}
	var b strings.Builder
	b.WriteString("\x1b[H\x1b[2J")
	v.screen(&b, now)
	io.WriteString(v.o.Out, b.String())
}

func (v *view) screen(b *strings.Builder, now time.Time) {
	l := v.o.Latencies
	fmt.Fprintf(b, "%s  %s\n", v.c(bold, "liqo-relay demo"), v.c(dim, fmt.Sprintf("three relays in netstack mode on loopback · t=%.1fs · Ctrl-C to quit", now.Sub(v.start).Seconds())))
	fmt.Fprintf(b, "%s\n\n", v.c(dim, fmt.Sprintf("emulated WAN, one way: A–B %s · A–consumer %s · consumer–B %s", l.AB, l.AC, l.CB)))
	b.WriteString("          provider-a ════ direct ════ provider-b\n")
	b.WriteString("                 ╲                      ╱\n")
	b.WriteString("                  ╲─── consumer path ──╱\n")
	b.WriteString("                        consumer\n\n")
	for _, pair := range [][2]string{{"provider-a", "provider-b"}, {"provider-b", "provider-a"}, {"provider-a", "consumer"}, {"provider-b", "consumer"}} {
		v.peerBlock(b, pair[0], pair[1], now)
	}
	v.trafficBlock(b)
	b.WriteString(v.c(bold, "path switches") + "\n")
	if len(v.events) == 0 {
		b.WriteString(v.c(dim, "  none yet") + "\n")
	}
	for _, e := range v.events {
		fmt.Fprintf(b, "  %s\n", e)
	}
	fmt.Fprintf(b, "\n%s %s\n", v.c(cyan, "▸"), v.phase)
}

func (v *view) peerBlock(b *strings.Builder, from, to string, now time.Time) {
	st := v.status[from]
	i := slices.IndexFunc(st.Peers, func(p status.PeerStatus) bool { return p.Name == to })
	if i < 0 {
		return
	}
	p := st.Peers[i]
	reach := v.c(green, "reachable")
	if !p.Reachable {
		reach = v.c(red, "unreachable")
	}
	fmt.Fprintf(b, "%s → %s  %s\n", v.c(bold, from), v.c(bold, to), reach)
	for _, path := range p.Paths {
		mark := "  "
		if path.Name == p.ActivePath {
			mark = v.c(cyan, "▶ ")
		}
		state := string(path.State)
		switch path.State {
		case "up":
			state = v.c(green, fmt.Sprintf("%-8s", state))
		case "down":
			state = v.c(red, fmt.Sprintf("%-8s", state))
		default:
			state = v.c(yellow, fmt.Sprintf("%-8s", state))
		}
		rtt := "      -"
		if path.RTTMs > 0 {
			rtt = fmt.Sprintf("%6.1f ms", path.RTTMs)
		}
		fmt.Fprintf(b, "   %s%-9s %s %s  jitter %5.1f ms  loss %3.0f%%\n", mark, path.Name, state, rtt, path.JitterMs, path.Loss*100)
	}
	b.WriteString("\n")
}

func (v *view) trafficBlock(b *strings.Builder) {
	b.WriteString(v.c(bold, "application traffic") + v.c(dim, "  TCP echo, pod behind provider-a ⇄ pod 10.244.2.10 behind provider-b, 100 msg/s") + "\n")
	if v.stream == nil {
		b.WriteString(v.c(dim, "  not started") + "\n\n")
		return
	}
	s := v.stream.snapshot()
	flow := v.c(green, "flowing")
	if s.Stalled > 0 {
		flow = v.c(red, fmt.Sprintf("stalled for %s", s.Stalled.Round(time.Millisecond)))
	}
	fmt.Fprintf(b, "  %s · echo RTT %s · sent %d · echoed %d\n", flow, s.LastRTT.Round(100*time.Microsecond), s.Sent, s.Echoed)
	fmt.Fprintf(b, "  longest silence per cut of the direct link: %s\n\n", fmtSilences(silences(s.Gaps, v.steps), 3))
}

// plain prints a summary in plain lines.
func (v *view) plain(now time.Time) {
	out := v.o.Out
	for _, pair := range [][2]string{{"provider-a", "provider-b"}, {"provider-b", "provider-a"}} {
		st := v.status[pair[0]]
		for _, p := range st.Peers {
			if p.Name != pair[1] {
				continue
			}
			var parts []string
			for _, path := range p.Paths {
				parts = append(parts, fmt.Sprintf("%s %s %.1fms", path.Name, path.State, path.RTTMs))
			}
			active := p.ActivePath
			if !p.Reachable {
				active = "(unreachable)"
			}
			fmt.Fprintf(out, "paths  %s  %s -> %s via %s  [%s]\n", v.elapsed(now), pair[0], pair[1], active, strings.Join(parts, ", "))
		}
	}
	if v.stream != nil {
		s := v.stream.snapshot()
		fmt.Fprintf(out, "app    %s  tcp echo rtt %s, sent %d, echoed %d, longest silence per cut: %s\n", v.elapsed(now), s.LastRTT.Round(100*time.Microsecond), s.Sent, s.Echoed, fmtSilences(silences(s.Gaps, v.steps), 3))
	}
}

// final prints the closing summary.
func (v *view) final() {
	v.collect()
	if v.o.TTY {
		var b strings.Builder
		b.WriteString("\x1b[H\x1b[2J")
		v.screen(&b, time.Now())
		io.WriteString(v.o.Out, b.String())
	}
	rep := v.report()
	fmt.Fprintf(v.o.Out, "\nsummary: %d cut(s) of the direct link; %d messages sent, %d echoed; longest silence the TCP application saw per cut: %s\n",
		rep.Cuts, rep.Sent, rep.Echoed, fmtSilences(rep.Silences, len(rep.Silences)))
	fmt.Fprintf(v.o.Out, "redundancy duplicate sends every packet over both paths: a cut of one loses nothing, at twice the bandwidth; the silence left is the consumer path's extra delay (docs/failover.md)\n")
}

func (v *view) report() Report {
	var rep Report
	for _, st := range v.steps {
		if st.cut {
			rep.Cuts++
		}
	}
	if v.stream != nil {
		s := v.stream.snapshot()
		rep.Silences, rep.Sent, rep.Echoed = silences(s.Gaps, v.steps), s.Sent, s.Echoed
	}
	for _, e := range v.status["provider-a"].Events {
		if e.Peer == "provider-b" {
			rep.Switches = append(rep.Switches, e)
		}
	}
	return rep
}
