package labservices

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
)

// DNS answers the cluster's Service names from the informers' caches.
type DNS struct {
	domain   string // "cluster.local." form: lower case, fully qualified
	services corelisters.ServiceLister
	slices   discoverylisters.EndpointSliceLister
	synced   []cache.InformerSynced
	log      *slog.Logger
}

// NewDNS builds the server for domain on the factory's Service and
// EndpointSlice informers; start the factory, then Serve.
func NewDNS(domain string, f informers.SharedInformerFactory, log *slog.Logger) *DNS {
	svc := f.Core().V1().Services()
	eps := f.Discovery().V1().EndpointSlices()
	return &DNS{
		domain:   dns.Fqdn(strings.ToLower(domain)),
		services: svc.Lister(), slices: eps.Lister(),
		synced: []cache.InformerSynced{svc.Informer().HasSynced, eps.Informer().HasSynced},
		log:    log.With("component", "dns"),
	}
}

// Serve answers on addr, UDP and TCP, until ctx is done.
func (d *DNS) Serve(ctx context.Context, addr string) error {
	if !cache.WaitForCacheSync(ctx.Done(), d.synced...) {
		return fmt.Errorf("dns informers: %w", ctx.Err())
	}
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return fmt.Errorf("dns: %w", err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		pc.Close()
		return fmt.Errorf("dns: %w", err)
	}
	servers := []*dns.Server{
		{PacketConn: pc, Handler: d},
		{Listener: l, Handler: d},
	}
	errs := make(chan error, len(servers))
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Go(func() { errs <- s.ActivateAndServe() })
	}
	d.log.Info("serving", "address", addr, "domain", d.domain)
	var first error
	select {
	case <-ctx.Done():
	case first = <-errs:
	}
	for _, s := range servers {
		_ = s.ShutdownContext(context.WithoutCancel(ctx))
	}
	// A server that had not started yet ignores the shutdown: closing its
	// socket ends it either way.
	pc.Close()
	l.Close()
	wg.Wait()
	if first != nil && !errors.Is(first, net.ErrClosed) {
		return fmt.Errorf("dns: %w", first)
	}
	return nil
}

// ServeDNS implements dns.Handler.
func (d *DNS) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	if len(req.Question) != 1 {
		m.Rcode = dns.RcodeFormatError
		_ = w.WriteMsg(m)
		return
	}
	q := req.Question[0]
	addrs, found := d.Lookup(q.Name)
	if !found {
		m.Rcode = dns.RcodeNameError
		_ = w.WriteMsg(m)
		return
	}
	for _, a := range addrs {
		hdr := dns.RR_Header{Name: q.Name, Class: dns.ClassINET, Ttl: 5}
		switch {
		case q.Qtype == dns.TypeA && a.Is4():
			hdr.Rrtype = dns.TypeA
			m.Answer = append(m.Answer, &dns.A{Hdr: hdr, A: a.AsSlice()})
		case q.Qtype == dns.TypeAAAA && a.Is6():
			hdr.Rrtype = dns.TypeAAAA
			m.Answer = append(m.Answer, &dns.AAAA{Hdr: hdr, AAAA: a.AsSlice()})
		}
	}
	_ = w.WriteMsg(m)
}

// Lookup returns the addresses of a name of the form <svc>.<ns>.svc.<domain>:
// the ClusterIPs of a Service, or the ready endpoint addresses of a
// headless one. found is false for every other name.
func (d *DNS) Lookup(name string) (addrs []netip.Addr, found bool) {
	name = dns.Fqdn(strings.ToLower(name))
	rest, ok := strings.CutSuffix(name, "."+d.domain)
	if !ok {
		return nil, false
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 3 || parts[2] != "svc" {
		return nil, false
	}
	s, err := d.services.Services(parts[1]).Get(parts[0])
	if err != nil {
		return nil, false
	}
	if s.Spec.ClusterIP != corev1.ClusterIPNone {
		for _, ip := range s.Spec.ClusterIPs {
			if a, err := netip.ParseAddr(ip); err == nil {
				addrs = append(addrs, a)
			}
		}
		return addrs, true
	}
	sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: s.Name})
	slices, err := d.slices.EndpointSlices(s.Namespace).List(sel)
	if err != nil {
		return nil, true
	}
	for _, sl := range slices {
		for _, ep := range sl.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			for _, ip := range ep.Addresses {
				if a, err := netip.ParseAddr(ip); err == nil {
					addrs = append(addrs, a)
				}
			}
		}
	}
	return addrs, true
}
