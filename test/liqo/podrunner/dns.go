package podrunner

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// maxNameservers is the resolver's limit (glibc reads three).
const maxNameservers = 3

// PodHostname returns the pod's host name (spec.hostname, else the pod's
// name cut to 63 characters) and, when spec.subdomain is set, its fully
// qualified name hostname.subdomain.namespace.svc.domain.
func PodHostname(pod *corev1.Pod, domain string) (hostname, fqdn string) {
	hostname = pod.Spec.Hostname
	if hostname == "" {
		hostname = pod.Name
		if len(hostname) > 63 {
			hostname = strings.TrimRight(hostname[:63], "-.")
		}
	}
	if pod.Spec.Subdomain != "" {
		fqdn = fmt.Sprintf("%s.%s.%s.svc.%s", hostname, pod.Spec.Subdomain, pod.Namespace, domain)
	}
	return hostname, fqdn
}

// ResolvConf renders the pod's /etc/resolv.conf for its dnsPolicy:
// ClusterFirst (the default; Default for a hostNetwork pod) and
// ClusterFirstWithHostNet point at clusterDNS with the cluster's search
// path and ndots:5, Default copies host (the node's resolv.conf), None
// starts empty; spec.dnsConfig then adds nameservers and searches and sets
// options.
func ResolvConf(pod *corev1.Pod, clusterDNS, domain string, host []byte) string {
	policy := pod.Spec.DNSPolicy
	if policy == "" {
		policy = corev1.DNSClusterFirst
	}
	if policy == corev1.DNSClusterFirst && pod.Spec.HostNetwork {
		policy = corev1.DNSDefault
	}
	var servers, searches []string
	var options []string // name or name:value, in order
	switch policy {
	case corev1.DNSClusterFirst, corev1.DNSClusterFirstWithHostNet:
		servers = []string{clusterDNS}
		searches = []string{pod.Namespace + ".svc." + domain, "svc." + domain, domain}
		options = []string{"ndots:5"}
	case corev1.DNSDefault:
		servers, searches, options = parseResolvConf(host)
	}
	if c := pod.Spec.DNSConfig; c != nil {
		servers = appendNew(servers, c.Nameservers...)
		searches = appendNew(searches, c.Searches...)
		for _, o := range c.Options {
			opt := o.Name
			if o.Value != nil {
				opt += ":" + *o.Value
			}
			options = setOption(options, opt)
		}
	}
	if len(servers) > maxNameservers {
		servers = servers[:maxNameservers]
	}
	var b strings.Builder
	for _, s := range servers {
		fmt.Fprintf(&b, "nameserver %s\n", s)
	}
	if len(searches) > 0 {
		fmt.Fprintf(&b, "search %s\n", strings.Join(searches, " "))
	}
	if len(options) > 0 {
		fmt.Fprintf(&b, "options %s\n", strings.Join(options, " "))
	}
	return b.String()
}

func parseResolvConf(b []byte) (servers, searches, options []string) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || strings.HasPrefix(f[0], "#") || strings.HasPrefix(f[0], ";") {
			continue
		}
		switch f[0] {
		case "nameserver":
			servers = append(servers, f[1])
		case "search", "domain":
			searches = f[1:]
		case "options":
			for _, o := range f[1:] {
				options = setOption(options, o)
			}
		}
	}
	return servers, searches, options
}

func appendNew(list []string, more ...string) []string {
	for _, m := range more {
		found := false
		for _, l := range list {
			found = found || l == m
		}
		if !found {
			list = append(list, m)
		}
	}
	return list
}

// setOption sets resolver option opt (name or name:value), replacing one
// of the same name.
func setOption(options []string, opt string) []string {
	name, _, _ := strings.Cut(opt, ":")
	for i, o := range options {
		if n, _, _ := strings.Cut(o, ":"); n == name {
			options[i] = opt
			return options
		}
	}
	return append(options, opt)
}

// HostsFile renders the pod's /etc/hosts as the kubelet does: localhost
// entries, the pod's addresses with its names, then spec.hostAliases. A
// hostNetwork pod gets host (the node's hosts file) and its aliases.
func HostsFile(pod *corev1.Pod, podIPs []string, hostname, fqdn string, host []byte) string {
	var b strings.Builder
	if pod.Spec.HostNetwork {
		b.Write(host)
		if len(host) > 0 && host[len(host)-1] != '\n' {
			b.WriteByte('\n')
		}
	} else {
		b.WriteString("# Kubernetes-managed hosts file.\n")
		b.WriteString("127.0.0.1\tlocalhost\n")
		b.WriteString("::1\tlocalhost ip6-localhost ip6-loopback\n")
		b.WriteString("fe00::0\tip6-localnet\n")
		b.WriteString("fe00::0\tip6-mcastprefix\n")
		b.WriteString("fe00::1\tip6-allnodes\n")
		b.WriteString("fe00::2\tip6-allrouters\n")
		names := hostname
		if fqdn != "" {
			names = fqdn + "\t" + hostname
		}
		for _, ip := range podIPs {
			fmt.Fprintf(&b, "%s\t%s\n", ip, names)
		}
	}
	if len(pod.Spec.HostAliases) > 0 {
		b.WriteString("\n# Entries added by HostAliases.\n")
		for _, a := range pod.Spec.HostAliases {
			fmt.Fprintf(&b, "%s\t%s\n", a.IP, strings.Join(a.Hostnames, "\t"))
		}
	}
	return b.String()
}
