package config

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Admin configures the HTTP admin servers. The endpoints fall in two
// classes: health and metrics (/healthz, /readyz, /metrics) are cheap and
// reveal little, so they may be exposed to the kubelet and Prometheus;
// /status (IPC reads of the device) and /ping (sends probes) are for the
// operator on the host and are served on Listen only, behind TokenFile's
// token when one is set.
type Admin struct {
	// Listen is the host:port of the full admin server: every endpoint.
	// It must be a loopback address unless TokenFile is set.
	Listen string
	// MetricsListen, when not empty, is the host:port of a second server
	// with /healthz, /readyz and /metrics only. It may be any address.
	MetricsListen string
	// TokenFile, when not empty, is the path of a file holding a bearer
	// token that /status and /ping on Listen require. The caller reads it
	// (see TokenFile rules in docs/config.md).
	TokenFile string
}

// admin decodes the admin field: either the scalar host:port of earlier
// versions (Listen only) or a mapping with listen, metricsListen and
// tokenFile.
func (d *decoder) admin(m map[string]*yaml.Node, a *Admin) {
	n := m["admin"]
	if n == nil {
		return
	}
	if n.Kind == yaml.ScalarNode {
		a.Listen = n.Value
		return
	}
	t := d.fields(n, "admin", "listen", "metricsListen", "tokenFile")
	if t == nil {
		return
	}
	d.setString(t, "admin", "listen", &a.Listen)
	d.setString(t, "admin", "metricsListen", &a.MetricsListen)
	d.setString(t, "admin", "tokenFile", &a.TokenFile)
}

// validateAdmin checks the admin addresses, and refuses a Listen that other
// hosts (or pods) could reach while /status and /ping there need no token.
func (c *Config) validateAdmin(e *errList) {
	a := c.Admin
	host, _, msg := splitHostPort(a.Listen, true)
	if msg != "" {
		e.checkf("admin.listen", msg)
	} else if a.TokenFile == "" && !IsLoopbackHost(host) {
		e.checkf("admin.listen", fmt.Sprintf("%q is not a loopback address, and it would serve /status and /ping, which sends probes, "+
			"to anyone who reaches it: keep it on 127.0.0.1, set admin.tokenFile, "+
			"or serve only /healthz, /readyz and /metrics there with admin.metricsListen", a.Listen))
	}
	if a.MetricsListen != "" {
		if _, _, msg := splitHostPort(a.MetricsListen, true); msg != "" {
			e.checkf("admin.metricsListen", msg)
		} else if clash := listenClash(a.MetricsListen, a.Listen); clash != "" {
			e.checkf("admin.metricsListen", clash+": use another port")
		}
	}
}

// listenClash says why the admin servers could not listen on metrics and
// listen both (two valid listen addresses), or returns "". They clash on
// the same port (but 0, which picks a free one) when one listens on every
// address the other is among, or when both name the same address under
// different spellings: "localhost" is 127.0.0.1 and ::1 (it may resolve to
// either), an IPv4-mapped IPv6 address is its IPv4 address. Host names
// other than localhost are compared by name: resolving them is the
// caller's business.
func listenClash(metrics, listen string) string {
	mh, mp, _ := splitHostPort(metrics, true)
	lh, lp, _ := splitHostPort(listen, true)
	if mp != lp || mp == 0 {
		return ""
	}
	if metrics == listen {
		return fmt.Sprintf("%q is also admin.listen", metrics)
	}
	m, l := listenHost(mh), listenHost(lh)
	switch {
	case m.covers(l):
		return fmt.Sprintf("%q listens on every address, admin.listen %q among them, on the same port", metrics, listen)
	case l.covers(m):
		return fmt.Sprintf("admin.listen %q listens on every address, %q among them, on the same port", listen, metrics)
	case m.overlaps(l):
		return fmt.Sprintf("%q and admin.listen %q are the same address", metrics, listen)
	}
	return ""
}

// listenAddrs is what a listen address's host binds.
type listenAddrs struct {
	// all: every address (an empty host or ::, which Go listens on for
	// IPv4 and IPv6 both); all4: every IPv4 address (0.0.0.0).
	all, all4 bool
	ips       []netip.Addr // the addresses named, unmapped
	name      string       // a host name other than localhost, lower case
}

func listenHost(host string) listenAddrs {
	if strings.EqualFold(host, "localhost") {
		return listenAddrs{ips: []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()}}
	}
	a, err := netip.ParseAddr(host)
	switch {
	case host == "":
		return listenAddrs{all: true}
	case err != nil:
		return listenAddrs{name: strings.ToLower(host)}
	case a.Unmap() == netip.IPv4Unspecified():
		return listenAddrs{all4: true}
	case a.IsUnspecified():
		return listenAddrs{all: true}
	}
	return listenAddrs{ips: []netip.Addr{a.Unmap()}}
}

// covers reports whether x listens on every address y binds (and is not
// the same wildcard, which overlaps handles).
func (x listenAddrs) covers(y listenAddrs) bool {
	switch {
	case x.all:
		return true
	case x.all4:
		// IPv4 addresses, and names, which Go resolves preferring IPv4.
		return y.all || y.name != "" || slices.ContainsFunc(y.ips, netip.Addr.Is4)
	}
	return false
}

// overlaps reports whether x and y name a common address.
func (x listenAddrs) overlaps(y listenAddrs) bool {
	if x.name != "" || y.name != "" {
		return x.name == y.name
	}
	for _, a := range x.ips {
		if slices.Contains(y.ips, a) {
			return true
		}
	}
	return false
}

// IsLoopbackHost reports whether host, as written in a listen address, is
// only reachable from this host: "localhost" or a loopback IP address. An
// empty host means every address and is not loopback.
func IsLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}
