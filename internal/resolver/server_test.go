package resolver

import (
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"
)

// record is what the test server answers for one name and type.
type record struct {
	addrs []netip.Addr
	ttl   uint32
	rcode int  // answered instead when non-zero
	drop  bool // no answer at all (the client times out)
	// big pads the UDP answer past 512 bytes: the server sets TC and
	// answers in full over TCP only.
	big bool
}

// testServer is a real DNS server on loopback (UDP and TCP on one port)
// whose answers a test changes at will.
type testServer struct {
	addr netip.AddrPort
	mu   sync.Mutex
	recs map[string]record // key: lower-case FQDN + " " + type
	asks map[string]int    // queries seen by key + " " + net
}

func newTestServer(t *testing.T) *testServer {
	t.Helper()
	s := &testServer{recs: map[string]record{}, asks: map[string]int{}}
	pc, ln := listenUDPAndTCP(t)
	port := pc.LocalAddr().(*net.UDPAddr).Port
	s.addr = netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port))
	udp := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) { s.serve(w, r, "udp") })}
	tcp := &dns.Server{Listener: ln, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) { s.serve(w, r, "tcp") })}
	var wg sync.WaitGroup
	for _, srv := range []*dns.Server{udp, tcp} {
		started := make(chan struct{})
		srv.NotifyStartedFunc = func() { close(started) }
		wg.Go(func() { _ = srv.ActivateAndServe() })
		<-started
	}
	t.Cleanup(func() {
		_ = udp.Shutdown()
		_ = tcp.Shutdown()
		wg.Wait()
	})
	return s
}

func key(name string, qtype uint16) string {
	return strings.ToLower(dns.Fqdn(name)) + " " + dns.TypeToString[qtype]
}

// set makes name answer qtype with rec.
func (s *testServer) set(name string, qtype uint16, rec record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs[key(name, qtype)] = rec
}

func (s *testServer) asked(name string, qtype uint16, network string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asks[key(name, qtype)+" "+network]
}

func (s *testServer) serve(w dns.ResponseWriter, r *dns.Msg, network string) {
	if len(r.Question) != 1 {
		return
	}
	q := r.Question[0]
	k := key(q.Name, q.Qtype)
	s.mu.Lock()
	s.asks[k+" "+network]++
	rec, ok := s.recs[k]
	_, nameKnown := s.recs[key(q.Name, dns.TypeA)]
	_, name6Known := s.recs[key(q.Name, dns.TypeAAAA)]
	s.mu.Unlock()
	m := new(dns.Msg)
	m.SetReply(r)
	switch {
	case rec.drop:
		return
	case !ok && !nameKnown && !name6Known:
		m.Rcode = dns.RcodeNameError
	case rec.rcode != 0:
		m.Rcode = rec.rcode
	default:
		for _, a := range rec.addrs {
			hdr := dns.RR_Header{Name: q.Name, Class: dns.ClassINET, Ttl: rec.ttl, Rrtype: q.Qtype}
			if a.Is4() {
				hdr.Rrtype = dns.TypeA
				m.Answer = append(m.Answer, &dns.A{Hdr: hdr, A: a.AsSlice()})
			} else {
				m.Answer = append(m.Answer, &dns.AAAA{Hdr: hdr, AAAA: a.AsSlice()})
			}
		}
		if rec.big && network == "udp" {
			m.Answer = nil
			m.Truncated = true
		}
	}
	_ = w.WriteMsg(m)
}

// listenUDPAndTCP listens on one loopback port for both UDP and TCP, as a
// DNS server does. The kernel picks a free UDP port, which may be taken
// for TCP by another test's connection: then it tries another.
func listenUDPAndTCP(t *testing.T) (net.PacketConn, net.Listener) {
	t.Helper()
	var last error
	for range 50 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			return pc, ln
		}
		pc.Close()
		last = err
	}
	t.Fatalf("no loopback port free for both UDP and TCP: %v", last)
	return nil, nil
}
