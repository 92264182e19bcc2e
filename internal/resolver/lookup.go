package resolver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"time"

	"github.com/miekg/dns"

	"github.com/liqo-relay/relay/internal/core/config"
)

// DefaultResolvConf is where a pod's resolvers, search list and ndots are.
const DefaultResolvConf = "/etc/resolv.conf"

// Answer is a successful lookup: the addresses in order of preference and
// the TTL of the records they came from (0 from the hosts file).
type Answer struct {
	Addrs []netip.Addr
	TTL   time.Duration
}

// Lookuper looks a host name up once.
type Lookuper interface {
	Lookup(ctx context.Context, host string) (Answer, error)
}

// Lookup failures, for errors.Is and the relay_dns_lookups_total result.
var (
	ErrNXDomain = errors.New("no such name (NXDOMAIN)")
	ErrNoData   = errors.New("no address records")
	ErrServer   = errors.New("server failure")
	ErrTimeout  = errors.New("timed out")
)

// Result labels of relay_dns_lookups_total.
const (
	ResultOK       = "ok"
	ResultNXDomain = "nxdomain"
	ResultNoData   = "nodata"
	ResultServer   = "servfail"
	ResultTimeout  = "timeout"
	ResultError    = "error"
)

// ResultOf is the relay_dns_lookups_total result of a lookup's error.
func ResultOf(err error) string {
	switch {
	case err == nil:
		return ResultOK
	case errors.Is(err, ErrNXDomain):
		return ResultNXDomain
	case errors.Is(err, ErrNoData):
		return ResultNoData
	case errors.Is(err, ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return ResultTimeout
	case errors.Is(err, ErrServer):
		return ResultServer
	}
	return ResultError
}

// Client looks names up: the hosts file first, then DNS. Build it with
// NewClient.
type Client struct {
	s          config.DNS
	resolvConf string
	hostsPath  string
}

// ClientOption changes where a Client reads its system files (tests).
type ClientOption func(*Client)

// WithResolvConf reads the resolvers, search list and ndots from path.
func WithResolvConf(path string) ClientOption { return func(c *Client) { c.resolvConf = path } }

// WithHosts reads static names from path.
func WithHosts(path string) ClientOption { return func(c *Client) { c.hostsPath = path } }

// NewClient returns a client for the dns settings s.
func NewClient(s config.DNS, opts ...ClientOption) *Client {
	c := &Client{s: s, resolvConf: DefaultResolvConf, hostsPath: DefaultHostsPath}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Lookup resolves host. The hosts file wins; otherwise every name of the
// search list (resolv.conf's search and ndots rules) is asked of each
// server in turn until one answers with addresses. NXDOMAIN and NODATA move
// on to the next name; a server failure or timeout to the next server.
func (c *Client) Lookup(ctx context.Context, host string) (Answer, error) {
	if addrs, err := lookupHosts(c.hostsPath, host); err != nil {
		return Answer{}, err
	} else if addrs = c.order(addrs); len(addrs) > 0 {
		return Answer{Addrs: addrs}, nil
	}
	servers, names, err := c.plan(host)
	if err != nil {
		return Answer{}, err
	}
	var last error
	for _, name := range names {
		a, err := c.lookupName(ctx, servers, name)
		if err == nil {
			return a, nil
		}
		last = err
		if ctx.Err() != nil || !(errors.Is(err, ErrNXDomain) || errors.Is(err, ErrNoData)) {
			break
		}
	}
	return Answer{}, fmt.Errorf("looking up %q: %w", host, last)
}

// plan returns the servers to ask and the names to ask for.
func (c *Client) plan(host string) ([]string, []string, error) {
	cc, err := dns.ClientConfigFromFile(c.resolvConf)
	if err != nil && len(c.s.Servers) == 0 {
		return nil, nil, fmt.Errorf("no resolvers: dns.servers is empty and %w", err)
	}
	var servers, names []string
	for _, ap := range c.s.Servers {
		servers = append(servers, ap.String())
	}
	if cc == nil {
		return servers, []string{dns.Fqdn(host)}, nil
	}
	if len(servers) == 0 {
		for _, s := range cc.Servers {
			servers = append(servers, net.JoinHostPort(s, cc.Port))
		}
	}
	if len(servers) == 0 {
		return nil, nil, fmt.Errorf("no resolvers: dns.servers is empty and %s lists no nameserver", c.resolvConf)
	}
	names = cc.NameList(host)
	return servers, names, nil
}

// lookupName asks the servers for name's addresses, trying the next
// server when one fails or times out.
func (c *Client) lookupName(ctx context.Context, servers []string, name string) (Answer, error) {
	var last error
	for _, srv := range servers {
		a, err := c.ask(ctx, srv, name)
		if err == nil || errors.Is(err, ErrNXDomain) || errors.Is(err, ErrNoData) || ctx.Err() != nil {
			return a, err
		}
		last = err
	}
	return Answer{}, last
}

// ask queries one server for the address types of the family setting.
func (c *Client) ask(ctx context.Context, srv, name string) (Answer, error) {
	var types []uint16
	switch c.s.Family {
	case config.FamilyIPv4:
		types = []uint16{dns.TypeA}
	case config.FamilyIPv6:
		types = []uint16{dns.TypeAAAA}
	case config.FamilyPreferIPv6:
		types = []uint16{dns.TypeAAAA, dns.TypeA}
	default:
		types = []uint16{dns.TypeA, dns.TypeAAAA}
	}
	var out Answer
	var errs []error
	for _, t := range types {
		addrs, ttl, err := c.query(ctx, srv, name, t)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(out.Addrs) == 0 || ttl < out.TTL {
			out.TTL = ttl
		}
		out.Addrs = append(out.Addrs, addrs...)
	}
	if len(out.Addrs) > 0 {
		return out, nil // one family answering is enough
	}
	// Report the most telling failure: a server problem over NODATA over
	// NXDOMAIN.
	slices.SortFunc(errs, func(x, y error) int { return rank(y) - rank(x) })
	return Answer{}, errs[0]
}

func rank(err error) int {
	switch {
	case errors.Is(err, ErrNXDomain):
		return 0
	case errors.Is(err, ErrNoData):
		return 1
	}
	return 2
}

// query is one question to one server: UDP, then TCP when the answer was
// truncated. It returns the addresses and the smallest TTL among them.
func (c *Client) query(ctx context.Context, srv, name string, qtype uint16) ([]netip.Addr, time.Duration, error) {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.RecursionDesired = true
	qname := dns.TypeToString[qtype] + " " + name + " @" + srv
	resp, err := c.exchange(ctx, "udp", srv, m)
	if err == nil && resp.Truncated {
		resp, err = c.exchange(ctx, "tcp", srv, m)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", qname, err)
	}
	switch resp.Rcode {
	case dns.RcodeSuccess:
	case dns.RcodeNameError:
		return nil, 0, fmt.Errorf("%s: %w", qname, ErrNXDomain)
	default:
		return nil, 0, fmt.Errorf("%s: %w: %s", qname, ErrServer, rcodeName(resp.Rcode))
	}
	var addrs []netip.Addr
	var ttl uint32
	for _, rr := range resp.Answer {
		var ip net.IP
		switch r := rr.(type) {
		case *dns.A:
			if qtype == dns.TypeA {
				ip = r.A
			}
		case *dns.AAAA:
			if qtype == dns.TypeAAAA {
				ip = r.AAAA
			}
		}
		a, ok := netip.AddrFromSlice(ip)
		if !ok {
			continue
		}
		if len(addrs) == 0 || rr.Header().Ttl < ttl {
			ttl = rr.Header().Ttl
		}
		addrs = append(addrs, a.Unmap())
	}
	if len(addrs) == 0 {
		return nil, 0, fmt.Errorf("%s: %w", qname, ErrNoData)
	}
	return addrs, time.Duration(ttl) * time.Second, nil
}

func (c *Client) exchange(ctx context.Context, network, srv string, m *dns.Msg) (*dns.Msg, error) {
	cl := &dns.Client{Net: network, Timeout: c.s.Timeout}
	ctx, cancel := context.WithTimeout(ctx, c.s.Timeout)
	defer cancel()
	resp, _, err := cl.ExchangeContext(ctx, m, srv)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("%s: %w", network, ErrTimeout)
		}
		return nil, fmt.Errorf("%s: %w", network, err)
	}
	if resp.Id != m.Id {
		return nil, fmt.Errorf("%s: answer to another query", network)
	}
	return resp, nil
}

func rcodeName(rc int) string {
	if s, ok := dns.RcodeToString[rc]; ok {
		return s
	}
	return "rcode " + strconv.Itoa(rc)
}

// order keeps the addresses of the family setting, preferred family first.
func (c *Client) order(addrs []netip.Addr) []netip.Addr {
	var v4, v6 []netip.Addr
	for _, a := range addrs {
		if a.Is4() {
			v4 = append(v4, a)
		} else {
			v6 = append(v6, a)
		}
	}
	switch c.s.Family {
	case config.FamilyIPv4:
		return v4
	case config.FamilyIPv6:
		return v6
	case config.FamilyPreferIPv6:
		return append(v6, v4...)
	}
	return append(v4, v6...)
}
