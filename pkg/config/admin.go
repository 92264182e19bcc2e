package config

import (
	"fmt"
	"net/netip"

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
		if _, port, msg := splitHostPort(a.MetricsListen, true); msg != "" {
			e.checkf("admin.metricsListen", msg)
		} else if a.MetricsListen == a.Listen && port != 0 {
			e.checkf("admin.metricsListen", fmt.Sprintf("%q is also admin.listen: use another port", a.MetricsListen))
		}
	}
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
