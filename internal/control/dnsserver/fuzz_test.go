package dnsserver

import (
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/liqo-relay/relay/internal/core/health"
)

// FuzzHandler feeds arbitrary bytes to the request path: whatever unpacks
// as a message is served, must not panic, and any answer must pack within
// the UDP size and carry the query's ID.
func FuzzHandler(f *testing.F) {
	for _, q := range []*dns.Msg{
		query("provider-b.relay.local.", dns.TypeA),
		query("web.shop.relay.local.", dns.TypeAAAA),
		query("example.com.", dns.TypeANY),
		query("relay.local.", dns.TypeSOA),
	} {
		b, err := q.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	e := query("big.shop.relay.local.", dns.TypeA)
	e.SetEdns0(65535, true)
	b, _ := e.Pack()
	f.Add(b)
	v := testView(10*time.Millisecond, 20*time.Millisecond, true, true)
	h, _ := testHandler(v, time.Now)
	h.lim = health.NewSourceBudget(1<<30, 1<<30, 1) // the fuzzer is one source
	f.Fuzz(func(t *testing.T, data []byte) {
		r := new(dns.Msg)
		if err := r.Unpack(data); err != nil {
			return
		}
		w := udpFrom("10.244.1.7")
		h.ServeDNS(w, r)
		for _, m := range w.msgs {
			if m.Id != r.Id || !m.Response {
				t.Fatalf("answer id %d response %v for query id %d", m.Id, m.Response, r.Id)
			}
			out, err := m.Pack()
			if err != nil {
				t.Fatalf("answer does not pack: %v", err)
			}
			if len(out) > maxUDPSize {
				t.Fatalf("UDP answer of %d bytes", len(out))
			}
		}
	})
}
