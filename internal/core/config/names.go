package config

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// isDNSLabel reports whether s is a DNS-1123 label, as Kubernetes names
// are: 1..63 lowercase letters, digits and '-', starting and ending with a
// letter or digit.
func isDNSLabel(s string) bool {
	if len(s) == 0 || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' && i > 0 && i < len(s)-1:
		default:
			return false
		}
	}
	return true
}

const dnsLabelRule = "lowercase letters, digits and '-', at most 63, starting and ending with a letter or digit"

// isHostname reports whether s is an RFC 1123 host name (a trailing dot is
// allowed). A name made only of digits and dots is not: it is a mistyped
// IPv4 address.
func isHostname(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	numeric := true
	for _, label := range strings.Split(s, ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			switch {
			case c >= '0' && c <= '9':
			case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '-':
				numeric = false
			default:
				return false
			}
		}
	}
	return !numeric
}

// isIfName reports whether s is a valid Linux interface name: 1..15 bytes,
// not "." or "..", without '/', ':' or white space.
func isIfName(s string) bool {
	if len(s) == 0 || len(s) > 15 || s == "." || s == ".." {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '/', c == ':', c <= ' ', c == 0x7f:
			return false
		}
	}
	return true
}

// splitHostPort splits host:port (IPv6 as [addr]:port). The host must be an
// IP address or a host name; listen addresses may leave it empty (all
// addresses) and use port 0 (any port). It returns a problem description,
// empty when s is valid.
func splitHostPort(s string, listen bool) (host string, port uint16, problem string) {
	notHP := fmt.Sprintf("%q is not host:port", s)
	var portStr string
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]")
		if end < 0 || !strings.HasPrefix(s[end+1:], ":") {
			return "", 0, notHP
		}
		host, portStr = s[1:end], s[end+2:]
		if a, err := netip.ParseAddr(host); err != nil || !a.Is6() {
			return "", 0, fmt.Sprintf("%s: %q in brackets is not an IPv6 address", notHP, host)
		}
	} else {
		i := strings.LastIndex(s, ":")
		if i < 0 {
			return "", 0, notHP
		}
		host, portStr = s[:i], s[i+1:]
		if strings.Contains(host, ":") {
			return "", 0, notHP + " (write IPv6 addresses in brackets, like [2001:db8::1]:51900)"
		}
		if host == "" && !listen {
			return "", 0, notHP + ": the host is missing"
		}
		if _, err := netip.ParseAddr(host); host != "" && err != nil && !isHostname(host) {
			return "", 0, fmt.Sprintf("%s: %q is neither an IP address nor a host name", notHP, host)
		}
	}
	p, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil || strings.HasPrefix(portStr, "+") || (p == 0 && !listen) {
		r := "1..65535"
		if listen {
			r = "0..65535"
		}
		return "", 0, fmt.Sprintf("%s: %q is not a port (%s)", notHP, portStr, r)
	}
	return host, uint16(p), ""
}
