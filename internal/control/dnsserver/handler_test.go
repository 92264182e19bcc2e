package dnsserver

import (
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// counts are what the hooks saw; the hooks run on the server's
// goroutines in the socket tests.
type counts struct {
	mu      sync.Mutex
	queries map[string]int
	limited int
}

func testHandler(v *View, now func() time.Time) (*Handler, *counts) {
	c := &counts{queries: map[string]int{}}
	h := NewHandler(HandlerConfig{
		Zone: "relay.local.", TTL: 5 * time.Second, RateLimit: 100, Burst: 200, Now: now,
		Hooks: Hooks{
			Query:   func(qt, rc string) { c.mu.Lock(); c.queries[qt+" "+rc]++; c.mu.Unlock() },
			Limited: func() { c.mu.Lock(); c.limited++; c.mu.Unlock() },
		},
	})
	h.SetView(v)
	return h, c
}

func query(name string, qtype uint16) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.RecursionDesired = true
	return m
}

// ask sends q to h from w and returns the one reply.
func ask(t *testing.T, h *Handler, w *fakeWriter, q *dns.Msg) *dns.Msg {
	t.Helper()
	n := len(w.msgs)
	h.ServeDNS(w, q)
	if len(w.msgs) != n+1 {
		t.Fatalf("%v: %d replies, want 1", q.Question, len(w.msgs)-n)
	}
	return w.msgs[n]
}

func answerAddrs(m *dns.Msg) []netip.Addr {
	var out []netip.Addr
	for _, rr := range m.Answer {
		switch r := rr.(type) {
		case *dns.A:
			a, _ := netip.AddrFromSlice(r.A)
			out = append(out, a.Unmap())
		case *dns.AAAA:
			a, _ := netip.AddrFromSlice(r.AAAA)
			out = append(out, a)
		}
	}
	return out
}

func TestHandlerAnswers(t *testing.T) {
	h, c := testHandler(testView(10*time.Millisecond, 30*time.Millisecond, true, false), time.Now)
	w := udpFrom("10.244.1.7")
	for _, tc := range []struct {
		name  string
		qtype uint16
		rcode int
		want  []netip.Addr
		soa   bool // SOA in the authority section (negative answer)
	}{
		{"provider-b.relay.local.", dns.TypeA, dns.RcodeSuccess, addrs("100.80.0.2"), false},
		{"Provider-B.Relay.Local.", dns.TypeAAAA, dns.RcodeSuccess, addrs("fd00::2"), false},
		{"provider-c.relay.local.", dns.TypeA, dns.RcodeSuccess, nil, true}, // unreachable: NODATA
		{"provider-b.relay.local.", dns.TypeTXT, dns.RcodeSuccess, nil, true},
		{"web.shop.relay.local.", dns.TypeA, dns.RcodeSuccess, addrs("10.244.1.5", "10.92.0.12", "10.92.0.13"), false},
		{"nobody.relay.local.", dns.TypeA, dns.RcodeNameError, nil, true},
		{"a.b.c.relay.local.", dns.TypeA, dns.RcodeNameError, nil, true},
		{"relay.local.", dns.TypeA, dns.RcodeSuccess, nil, true},
		{"example.com.", dns.TypeA, dns.RcodeRefused, nil, false},
		{"local.", dns.TypeA, dns.RcodeRefused, nil, false},
		{"xrelay.local.", dns.TypeA, dns.RcodeRefused, nil, false},
	} {
		m := ask(t, h, w, query(tc.name, tc.qtype))
		got := answerAddrs(m)
		hasSOA := len(m.Ns) == 1 && m.Ns[0].Header().Rrtype == dns.TypeSOA
		if m.Rcode != tc.rcode || !slices.Equal(got, tc.want) || hasSOA != tc.soa || m.RecursionAvailable {
			t.Errorf("%s %s: rcode %s, %v, soa %v, ra %v; want %s, %v, soa %v, no recursion",
				tc.name, dns.TypeToString[tc.qtype], dns.RcodeToString[m.Rcode], got, hasSOA, m.RecursionAvailable,
				dns.RcodeToString[tc.rcode], tc.want, tc.soa)
		}
		for _, rr := range m.Answer {
			if rr.Header().Ttl != 5 {
				t.Errorf("%s: TTL %d, want 5", tc.name, rr.Header().Ttl)
			}
		}
	}
	if c.queries["A NOERROR"] == 0 || c.queries["A REFUSED"] != 3 || c.queries["A NXDOMAIN"] != 2 || c.queries["TXT NOERROR"] != 1 {
		t.Errorf("queries counted: %v", c.queries)
	}
	soa := ask(t, h, w, query("relay.local.", dns.TypeSOA))
	if len(soa.Answer) != 1 || soa.Answer[0].Header().Rrtype != dns.TypeSOA {
		t.Errorf("SOA at the apex: %v", soa.Answer)
	}
}

func TestHandlerMalformed(t *testing.T) {
	h, _ := testHandler(testView(0, 0, true, true), time.Now)
	w := udpFrom("10.244.1.7")
	two := query("provider-b.relay.local.", dns.TypeA)
	two.Question = append(two.Question, two.Question[0])
	if m := ask(t, h, w, two); m.Rcode != dns.RcodeFormatError {
		t.Errorf("two questions: %s, want FORMERR", dns.RcodeToString[m.Rcode])
	}
	none := query("provider-b.relay.local.", dns.TypeA)
	none.Question = nil
	if m := ask(t, h, w, none); m.Rcode != dns.RcodeFormatError {
		t.Errorf("no question: %s, want FORMERR", dns.RcodeToString[m.Rcode])
	}
	upd := query("relay.local.", dns.TypeSOA)
	upd.Opcode = dns.OpcodeUpdate
	if m := ask(t, h, w, upd); m.Rcode != dns.RcodeNotImplemented {
		t.Errorf("UPDATE: %s, want NOTIMP", dns.RcodeToString[m.Rcode])
	}
	chaos := query("version.bind.", dns.TypeTXT)
	chaos.Question[0].Qclass = dns.ClassCHAOS
	if m := ask(t, h, w, chaos); m.Rcode != dns.RcodeRefused {
		t.Errorf("CHAOS: %s, want REFUSED", dns.RcodeToString[m.Rcode])
	}
	resp := query("provider-b.relay.local.", dns.TypeA)
	resp.Response = true
	n := len(w.msgs)
	h.ServeDNS(w, resp)
	if len(w.msgs) != n {
		t.Error("a response was answered")
	}
}

// TestHandlerTruncates: an answer too big for UDP is cut with TC set;
// over TCP (or with a larger EDNS0 size) it is whole.
func TestHandlerTruncates(t *testing.T) {
	v, many := bigView(100)
	h, _ := testHandler(v, time.Now)
	q := query("big.shop.relay.local.", dns.TypeA)
	udp := ask(t, h, udpFrom("10.244.1.7"), q)
	if !udp.Truncated || len(udp.Answer) >= 100 {
		t.Fatalf("UDP: TC %v with %d answers; want TC and fewer than 100", udp.Truncated, len(udp.Answer))
	}
	if b, err := udp.Pack(); err != nil || len(b) > dns.MinMsgSize {
		t.Fatalf("UDP answer is %d bytes (%v), want at most %d", len(b), err, dns.MinMsgSize)
	}
	tcp := ask(t, h, tcpFrom("10.244.1.7"), q)
	if tcp.Truncated || !slices.Equal(answerAddrs(tcp), many) {
		t.Fatalf("TCP: TC %v with %d answers; want all 100 in order", tcp.Truncated, len(tcp.Answer))
	}
	q.SetEdns0(4096, false)
	edns := ask(t, h, udpFrom("10.244.1.7"), q)
	if b, _ := edns.Pack(); len(b) > maxUDPSize || len(edns.Answer) <= len(udp.Answer) {
		t.Fatalf("EDNS0 4096: %d bytes, %d answers; want at most %d bytes, more than plain UDP's %d", len(b), len(edns.Answer), maxUDPSize, len(udp.Answer))
	}
}

// bigView is testView with big.shop, a Service of n local endpoints.
func bigView(n int) (*View, []netip.Addr) {
	v := testView(0, 0, true, true)
	var many []netip.Addr
	for i := range n {
		many = append(many, netip.AddrFrom4([4]byte{10, 244, 2, byte(i)}))
	}
	v.Services["big.shop"] = many
	return v, many
}

// TestHandlerRateLimit: with fake time, a source over its burst gets no
// answer, another source is unaffected, and the first recovers as tokens
// refill.
func TestHandlerRateLimit(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h, c := testHandler(testView(0, 0, true, true), func() time.Time { return now })
	flood, calm := udpFrom("10.244.1.66"), udpFrom("10.244.1.7")
	q := query("provider-b.relay.local.", dns.TypeA)
	for range 1000 {
		h.ServeDNS(flood, q)
	}
	if len(flood.msgs) != 200 || c.limited != 800 {
		t.Fatalf("flood: %d answered, %d limited; want the burst of 200 answered, 800 limited", len(flood.msgs), c.limited)
	}
	for i := range 10 {
		if m := ask(t, h, calm, q); m.Rcode != dns.RcodeSuccess {
			t.Fatalf("calm source query %d: %s", i, dns.RcodeToString[m.Rcode])
		}
	}
	now = now.Add(100 * time.Millisecond) // 10 tokens at 100/s
	n := len(flood.msgs)
	for range 50 {
		h.ServeDNS(flood, q)
	}
	if got := len(flood.msgs) - n; got != 10 {
		t.Fatalf("after 100 ms the flood got %d answers, want 10", got)
	}
}

func ExampleHandler() {
	h := NewHandler(HandlerConfig{Zone: "relay.local", TTL: 5 * time.Second, RateLimit: 100, Burst: 200})
	h.SetView(&View{Self: Cluster{Name: "provider-a", Overlay: []netip.Addr{netip.MustParseAddr("100.80.0.1")}, Healthy: true}})
	w := udpFrom("10.244.1.7")
	h.ServeDNS(w, query("provider-a.relay.local.", dns.TypeA))
	fmt.Println(w.msgs[0].Answer[0])
	// Output: provider-a.relay.local.	5	IN	A	100.80.0.1
}

// TestHandlerAnswersANYMinimally: ANY gets one HINFO "RFC8482" record
// (RFC 8482), not every address: no amplification toward a spoofed source.
func TestHandlerAnswersANYMinimally(t *testing.T) {
	v, _ := bigView(100)
	h, _ := testHandler(v, time.Now)
	for _, name := range []string{"big.shop.relay.local.", "relay.local."} {
		m := ask(t, h, udpFrom("10.244.1.7"), query(name, dns.TypeANY))
		if m.Rcode != dns.RcodeSuccess || m.Truncated || len(m.Answer) != 1 {
			t.Fatalf("ANY %s: rcode %d, TC %v, %d answers; want one record", name, m.Rcode, m.Truncated, len(m.Answer))
		}
		if hi, ok := m.Answer[0].(*dns.HINFO); !ok || hi.Cpu != "RFC8482" {
			t.Errorf("ANY %s: answer %v, want HINFO RFC8482", name, m.Answer[0])
		}
	}
}
