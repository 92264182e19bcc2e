package podrunner

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestResolvConf(t *testing.T) {
	host := []byte("# host\nnameserver 1.1.1.1\nnameserver 8.8.8.8\nsearch lan\noptions edns0 ndots:1\n")
	for _, tc := range []struct {
		name   string
		mutate func(*corev1.Pod)
		want   string
	}{
		{name: "ClusterFirst", mutate: func(*corev1.Pod) {},
			want: "nameserver 10.96.0.10\nsearch app.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n"},
		{name: "hostNetwork falls back to Default", mutate: func(p *corev1.Pod) { p.Spec.HostNetwork = true },
			want: "nameserver 1.1.1.1\nnameserver 8.8.8.8\nsearch lan\noptions edns0 ndots:1\n"},
		{name: "ClusterFirstWithHostNet", mutate: func(p *corev1.Pod) {
			p.Spec.HostNetwork = true
			p.Spec.DNSPolicy = corev1.DNSClusterFirstWithHostNet
		}, want: "nameserver 10.96.0.10\nsearch app.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n"},
		{name: "None with dnsConfig", mutate: func(p *corev1.Pod) {
			p.Spec.DNSPolicy = corev1.DNSNone
			p.Spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"9.9.9.9"}, Searches: []string{"x.y"},
				Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr("2")}, {Name: "rotate"}}}
		}, want: "nameserver 9.9.9.9\nsearch x.y\noptions ndots:2 rotate\n"},
		{name: "ClusterFirst merged", mutate: func(p *corev1.Pod) {
			p.Spec.DNSConfig = &corev1.PodDNSConfig{Searches: []string{"svc.cluster.local", "extra"}, Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr("1")}}}
		}, want: "nameserver 10.96.0.10\nsearch app.svc.cluster.local svc.cluster.local cluster.local extra\noptions ndots:1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod()
			tc.mutate(pod)
			if got := ResolvConf(pod, "10.96.0.10", "cluster.local", host); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestHostsFileAndHostname(t *testing.T) {
	pod := testPod()
	pod.Spec.Subdomain = "sub"
	pod.Spec.HostAliases = []corev1.HostAlias{{IP: "1.2.3.4", Hostnames: []string{"a", "b"}}}
	h, fqdn := PodHostname(pod, "cluster.local")
	if h != "web" || fqdn != "web.sub.app.svc.cluster.local" {
		t.Errorf("hostname %q fqdn %q", h, fqdn)
	}
	got := HostsFile(pod, []string{"10.244.1.5"}, h, fqdn, nil)
	for _, line := range []string{"127.0.0.1\tlocalhost\n", "10.244.1.5\tweb.sub.app.svc.cluster.local\tweb\n", "1.2.3.4\ta\tb\n"} {
		if !strings.Contains(got, line) {
			t.Errorf("hosts file lacks %q:\n%s", line, got)
		}
	}
	pod.Spec.HostNetwork = true
	if got := HostsFile(pod, nil, h, fqdn, []byte("127.0.0.1 host")); !strings.HasPrefix(got, "127.0.0.1 host\n") || !strings.Contains(got, "1.2.3.4\ta\tb") {
		t.Errorf("hostNetwork hosts file:\n%s", got)
	}
	long := testPod()
	long.Name = strings.Repeat("a", 62) + "-b"
	if h, _ := PodHostname(long, "cluster.local"); h != strings.Repeat("a", 62) {
		t.Errorf("long name cut to %q", h)
	}
}

func TestFieldRef(t *testing.T) {
	pod := testPod()
	info := testInfo()
	if v, err := FieldRef(pod, info, "metadata.annotations", false); err != nil || v != "note=\"a \\\"b\\\"\"\n" {
		t.Errorf("annotations = %q, %v", v, err)
	}
	if v, _ := FieldRef(pod, info, "metadata.labels['missing']", true); v != "" {
		t.Errorf("a missing label reads %q", v)
	}
	if _, err := FieldRef(pod, info, "spec.bogus", true); err == nil {
		t.Error("an unknown path is accepted")
	}
	info.PodIPs = []string{"10.0.0.1", "fd00::1"}
	if v, _ := FieldRef(pod, info, "status.podIPs", true); v != "10.0.0.1,fd00::1" {
		t.Errorf("podIPs = %q", v)
	}
}
