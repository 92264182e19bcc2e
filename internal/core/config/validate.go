package config

import (
	"fmt"
	"net/netip"
	"time"
)

// MTU limits.
const (
	MinMTU   = 576  // the IPv4 minimum datagram every host must accept
	MinMTUv6 = 1280 // the IPv6 minimum link MTU
	MaxMTU   = 9000 // jumbo frames
	// MaxPersistentKeepalive is the largest interval WireGuard accepts
	// (a 16-bit number of seconds).
	MaxPersistentKeepalive = 65535 * time.Second
	maxRulePriority        = 32765 // 32766 and 32767 are the main and default rules
)

// Validate checks a Config, for example one built in code, and returns an
// Errors value with every problem, or nil. Parse already calls it. It does
// not apply defaults: a zero field is checked as zero.
func (c *Config) Validate() error {
	var errs errList
	c.validate(&errs)
	return errs.err()
}

func (c *Config) validate(e *errList) {
	if c.Name == "" {
		e.checkf("name", "required")
	} else if !isDNSLabel(c.Name) {
		e.checkf("name", fmt.Sprintf("%q is not a DNS-1123 label (%s)", c.Name, dnsLabelRule))
	}
	switch {
	case c.keySources() == 0:
		e.checkf("privateKey", "required (or privateKeyFile, or privateKeySecret in Kubernetes mode)")
	case !c.PrivateKeySecret.IsZero():
		if c.PrivateKeyFile != "" || (!c.PrivateKey.IsZero() && !c.keyFromSecret) {
			e.checkf("privateKeySecret", "privateKeySecret excludes privateKey and privateKeyFile")
		}
	case c.keySources() > 1:
		e.checkf("privateKey", "privateKey and privateKeyFile are mutually exclusive")
	}
	c.validateKubernetes(e)
	c.validateRotation(e)
	if c.ListenPort == 0 {
		e.checkf("listenPort", "0 is not a port (1..65535)")
	}
	if c.Mode != ModeTUN && c.Mode != ModeNetstack {
		e.checkf("mode", fmt.Sprintf("%q is not a mode (%s or %s)", c.Mode, ModeTUN, ModeNetstack))
	}
	if len(c.Addresses) == 0 {
		e.checkf("addresses", "required: at least one overlay address")
	}
	checkPrefixList(e, "addresses", c.Addresses, true)
	checkPrefixList(e, "exports", c.Exports, false)
	c.validateMTU(e)
	switch c.Mode {
	case ModeTUN:
		c.validateTun(e)
	case ModeNetstack:
		c.Netstack.validate(e)
	}
	c.validateLiqo(e)
	c.validateAdmin(e)
	c.DNS.validate(e)
	c.DNSServer.validate(e)
	switch c.Log.Level {
	case LogLevelDebug, LogLevelInfo, LogLevelWarn, LogLevelError:
	default:
		e.checkf("log.level", fmt.Sprintf("%q is not a level (debug, info, warn or error)", c.Log.Level))
	}
	switch c.Log.Format {
	case LogFormatText, LogFormatJSON:
	default:
		e.checkf("log.format", fmt.Sprintf("%q is not a format (text or json)", c.Log.Format))
	}
	global := make(map[healthProblem]bool)
	for _, p := range healthProblems(c.Health) {
		global[p] = true
		e.checkf(field("health", p.field), p.msg)
	}
	c.validatePeers(e, global)
}

// checkPrefixList reports invalid prefixes, prefixes with host bits set
// (unless hostBits allows them, as for interface addresses) and duplicates.
func checkPrefixList(e *errList, path string, ps []netip.Prefix, hostBits bool) {
	seen := make(map[netip.Prefix]int, len(ps))
	for i, p := range ps {
		ip := index(path, i)
		if !p.IsValid() {
			e.checkf(ip, "not a valid prefix")
			continue
		}
		if !hostBits && p != p.Masked() {
			e.checkf(ip, fmt.Sprintf("%s has host bits set (did you mean %s?)", p, p.Masked()))
			continue
		}
		if j, dup := seen[p]; dup {
			e.checkf(ip, fmt.Sprintf("%s is a duplicate of %s", p, index(path, j)))
			continue
		}
		seen[p] = i
	}
}

func (c *Config) hasIPv6() bool {
	for _, list := range [][]netip.Prefix{c.Addresses, c.Exports} {
		for _, p := range list {
			if p.IsValid() && p.Addr().Is6() {
				return true
			}
		}
	}
	for _, peer := range c.Peers {
		for _, p := range peer.Prefixes {
			if p.IsValid() && p.Addr().Is6() {
				return true
			}
		}
	}
	return false
}

func (c *Config) validateMTU(e *errList) {
	switch {
	case c.MTU < MinMTU || c.MTU > MaxMTU:
		e.checkf("mtu", fmt.Sprintf("%d is out of range %d..%d", c.MTU, MinMTU, MaxMTU))
	case c.MTU < MinMTUv6 && c.hasIPv6():
		e.checkf("mtu", fmt.Sprintf("%d is below %d, the IPv6 minimum, and an IPv6 address or prefix is configured", c.MTU, MinMTUv6))
	}
}

func (c *Config) validateTun(e *errList) {
	t := c.Tun
	if !isIfName(t.Name) {
		e.checkf("tun.name", fmt.Sprintf("%q is not a Linux interface name (1..15 bytes, no '/', ':' or spaces)", t.Name))
	}
	switch {
	case t.Table <= 0 || int64(t.Table) > 1<<32-1:
		e.checkf("tun.table", fmt.Sprintf("%d is not a routing table (1..4294967295)", t.Table))
	case t.Table >= 253 && t.Table <= 255:
		e.checkf("tun.table", fmt.Sprintf("%d is reserved (253 default, 254 main, 255 local)", t.Table))
	}
	if t.RulePriority < 1 || t.RulePriority > maxRulePriority {
		e.checkf("tun.rulePriority", fmt.Sprintf("%d is out of range 1..%d", t.RulePriority, maxRulePriority))
	}
	if t.FwMark == 0 {
		e.checkf("tun.fwMark", "must not be 0 (0 means unmarked)")
	}
}
