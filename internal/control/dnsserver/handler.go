package dnsserver

import (
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"

	"github.com/liqo-relay/relay/internal/core/health"
)

// Hooks count what the handler does (metrics); nil fields count nothing.
type Hooks struct {
	// Query is called for every query answered, with its type (A, AAAA,
	// ..., "other") and response code (NOERROR, REFUSED, ...).
	Query func(qtype, rcode string)
	// Limited is called for every query dropped by the rate limit.
	Limited func()
}

// Handler answers queries for one zone from the current View.
type Handler struct {
	zone  string // lower case, fully qualified
	ttl   uint32
	now   func() time.Time
	hooks Hooks
	log   *slog.Logger
	view  atomic.Pointer[View]

	mu  sync.Mutex
	lim *health.SourceBudget
}

// HandlerConfig configures a Handler.
type HandlerConfig struct {
	Zone      string // fully qualified
	TTL       time.Duration
	RateLimit int // queries a second per source
	Burst     int
	Now       func() time.Time // nil: time.Now
	Hooks     Hooks
	Logger    *slog.Logger
}

// NewHandler returns a handler with an empty View.
func NewHandler(c HandlerConfig) *Handler {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Hooks.Query == nil {
		c.Hooks.Query = func(string, string) {}
	}
	if c.Hooks.Limited == nil {
		c.Hooks.Limited = func() {}
	}
	h := &Handler{
		zone: strings.ToLower(dns.Fqdn(c.Zone)), ttl: uint32(c.TTL / time.Second),
		now: c.Now, hooks: c.Hooks, log: c.Logger,
		lim: health.NewSourceBudget(c.RateLimit, c.Burst, maxSources),
	}
	h.view.Store(&View{})
	return h
}

// SetView publishes v; later queries are answered from it.
func (h *Handler) SetView(v *View) { h.view.Store(v) }

// ServeDNS answers one query (dns.Handler). Over the limit of its source,
// a query gets no answer at all: an answer would let a spoofed flood
// reflect off the relay.
func (h *Handler) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	if h.Admit(w.RemoteAddr()) {
		h.respond(w, r)
	}
}

// Admit takes a token from the bucket of the query's source, and reports
// whether there was one; a refusal is counted. The Server calls it from
// its UDP read loop, so that a flood is dropped before it costs a
// goroutine or a parse.
func (h *Handler) Admit(from net.Addr) bool {
	src, _ := source(from)
	h.mu.Lock()
	ok := h.lim.Allow(src, h.now())
	h.mu.Unlock()
	if !ok {
		h.hooks.Limited()
	}
	return ok
}

// respond answers an admitted query.
func (h *Handler) respond(w dns.ResponseWriter, r *dns.Msg) {
	_, udp := source(w.RemoteAddr())
	resp := h.answer(r)
	if resp == nil {
		return
	}
	size := dns.MaxMsgSize
	if udp {
		size = dns.MinMsgSize
		if o := r.IsEdns0(); o != nil {
			size = int(max(min(o.UDPSize(), maxUDPSize), dns.MinMsgSize))
		}
	}
	resp.Truncate(size)
	if err := w.WriteMsg(resp); err != nil {
		h.log.Debug("dns answer not sent", "to", w.RemoteAddr(), "err", err)
	}
}

// maxSources bounds the rate limiter's memory under a spoofed-source
// flood (64 Ki sources are a few MB). When full, the source remembered
// longest is forgotten: it only ever gets a fresh burst, never less.
const maxSources = 1 << 16

// maxUDPSize is the largest UDP answer: the DNS flag day 2020 size, which
// fits every path without fragmentation.
const maxUDPSize = 1232

func source(a net.Addr) (netip.Addr, bool) {
	switch a := a.(type) {
	case *net.UDPAddr:
		ap := a.AddrPort()
		return ap.Addr().Unmap(), true
	case *net.TCPAddr:
		ap := a.AddrPort()
		return ap.Addr().Unmap(), false
	}
	return netip.Addr{}, true
}

// answer builds the reply to r, or nil for a message that gets none (a
// response: answering it could start a loop).
func (h *Handler) answer(r *dns.Msg) *dns.Msg {
	if r.Response {
		return nil
	}
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative, m.RecursionAvailable = true, false
	qtype := "none"
	defer func() { h.hooks.Query(qtype, rcodeName(m.Rcode)) }()
	if o := r.IsEdns0(); o != nil {
		m.SetEdns0(maxUDPSize, false)
	}
	switch {
	case r.Opcode != dns.OpcodeQuery:
		m.Authoritative = false
		m.Rcode = dns.RcodeNotImplemented
		return m
	case len(r.Question) != 1:
		m.Authoritative = false
		m.Rcode = dns.RcodeFormatError
		return m
	}
	q := r.Question[0]
	qtype = typeName(q.Qtype)
	name := strings.ToLower(q.Name)
	if q.Qclass != dns.ClassINET || !dns.IsSubDomain(h.zone, name) {
		m.Authoritative = false
		m.Rcode = dns.RcodeRefused
		return m
	}
	v := h.view.Load()
	rel := strings.TrimSuffix(strings.TrimSuffix(name, h.zone), ".")
	var addrs []netip.Addr
	known := false
	switch labels := dns.SplitDomainName(rel); len(labels) {
	case 0: // the apex
		known = true
		if q.Qtype == dns.TypeSOA {
			m.Answer = append(m.Answer, h.soa())
			return m
		}
	case 1:
		addrs, known = v.PeerAddrs(labels[0])
	case 2:
		addrs, known = v.ServiceAddrs(labels[0] + "." + labels[1])
	}
	if !known {
		m.Rcode = dns.RcodeNameError
		m.Ns = append(m.Ns, h.soa())
		return m
	}
	hdr := func(t uint16) dns.RR_Header {
		return dns.RR_Header{Name: q.Name, Rrtype: t, Class: dns.ClassINET, Ttl: h.ttl}
	}
	if q.Qtype == dns.TypeANY {
		// RFC 8482: one small record, not every address, so that ANY from
		// a spoofed source amplifies nothing.
		m.Answer = append(m.Answer, &dns.HINFO{Hdr: hdr(dns.TypeHINFO), Cpu: "RFC8482"})
		return m
	}
	for _, a := range addrs {
		switch {
		case a.Is4() && q.Qtype == dns.TypeA:
			m.Answer = append(m.Answer, &dns.A{Hdr: hdr(dns.TypeA), A: a.AsSlice()})
		case a.Is6() && q.Qtype == dns.TypeAAAA:
			m.Answer = append(m.Answer, &dns.AAAA{Hdr: hdr(dns.TypeAAAA), AAAA: a.AsSlice()})
		}
	}
	if len(m.Answer) == 0 {
		m.Ns = append(m.Ns, h.soa()) // NODATA
	}
	return m
}

// soa is the zone's SOA record; its minimum (the negative-caching TTL) is
// the answer TTL, so a name that appears is seen as soon as one that
// changes.
func (h *Handler) soa() dns.RR {
	return &dns.SOA{
		Hdr: dns.RR_Header{Name: h.zone, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: h.ttl},
		Ns:  "ns." + h.zone, Mbox: "hostmaster." + h.zone,
		Serial: 1, Refresh: 3600, Retry: 600, Expire: 86400, Minttl: h.ttl,
	}
}

// typeName is the metrics label of a query type: the common types by
// name, every other as "other", so that a scan cannot grow the series.
func typeName(t uint16) string {
	switch t {
	case dns.TypeA, dns.TypeAAAA, dns.TypeANY, dns.TypeSOA, dns.TypeNS, dns.TypeSRV,
		dns.TypeTXT, dns.TypePTR, dns.TypeCNAME, dns.TypeMX, dns.TypeHTTPS:
		return dns.TypeToString[t]
	}
	return "other"
}

func rcodeName(rc int) string {
	if s, ok := dns.RcodeToString[rc]; ok {
		return s
	}
	return "other"
}
