package e2e

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/liqo-relay/relay/test/k8s/k8stest"
)

// Bounds of TestE2EKubernetesDNS: generous, only a broken relay misses
// them. The feed debounces 200 ms and the responder's view follows the
// relay's state every 100 ms; a stopped peer is down after the health
// thresholds (about a second).
const (
	dnsAnswerWithin = 30 * time.Second
	dnsChangeWithin = 15 * time.Second
	dnsPort         = 5353
	dnsConsumer     = "consumer-c"
)

// TestE2EKubernetesDNS: provider A's relay runs `relay
// run --kubeconfig` with its DNS responder on, as a ServiceAccount with
// the relay Role and the liqo-relay-dns ClusterRole only, in a namespace
// labelled as Liqo labels a tenant namespace: no --consumer-cluster-id,
// the relay reads its consumer from the label. --dns-listen puts the
// responder on the provider's address on pod A's link. In A's API server,
// namespace shop holds the Service web: a slice reflected from the
// consumer with pod B's address (as A sees it, in B's RelayPeer prefixes)
// and an address no route holds, and a native slice with pod A. Pod A asks
// with miekg/dns over UDP:
//
//  1. web.shop.<zone> answers pod A (local cluster first), then pod B
//     (the peer, reachable); the unrouted address is left out;
//  2. an EndpointSlice change (a second local endpoint) shows in the
//     answer;
//  3. with B's relay stopped, its paths go down and pod B leaves the
//     answer (healthy clusters only);
//  4. a name outside the zone is REFUSED.
//
// Order among several peers by measured cost needs a third provider,
// which this topology does not have; internal/control/dnsserver's tests cover it.
func TestE2EKubernetesDNS(t *testing.T) {
	requireK8sTools(t)
	top := NewTopology(t, Options{})
	a, b := StartProvider(t, top.A), StartProvider(t, top.B)
	c := a.Cluster
	c.Kubectl(t, "apply", "-f", filepath.Join(k8stest.Root(), "manifests", "rbac", "relay-dns-role.yaml"))
	c.Kubectl(t, "create", "clusterrolebinding", "liqo-relay-dns-test", "--clusterrole=liqo-relay-dns", "--serviceaccount="+kubeNamespace+":relay")
	// Liqo's tenant namespace labels (v1.2.0 ForgeNamespace).
	c.Kubectl(t, "label", "namespace", kubeNamespace, "liqo.io/tenant-namespace=true", "liqo.io/remote-cluster-id="+dnsConsumer)
	c.Kubectl(t, "create", "namespace", "shop")
	podB := top.A.SeesPeerPodIP
	c.KubectlIn(t, sliceYAML("web-reflected", true, podB, "192.0.2.7"), "apply", "-f", "-")
	c.KubectlIn(t, sliceYAML("web-native", false, top.A.PodIP), "apply", "-f", "-")

	gw := netip.MustParsePrefix(top.A.PodCIDR).Addr().Next() // provider A on pod A's link
	server := netip.AddrPortFrom(gw, dnsPort).String()
	zone := dnsConsumer + ".relay.local."
	ra := a.startRelayWith(t, top.B, kubeRelayYAML(top.A)+"dnsServer: {zone: "+zone+", ttl: 1s}\n", "--dns-listen="+server)
	b.StartRelay(t, top.A)
	pubA, pubB := a.PublishedKey(t), b.PublishedKey(t)
	a.ApplyPeer(t, top.B, a.PeerSpec(top.B, pubB))
	b.ApplyPeer(t, top.A, b.PeerSpec(top.A, pubA))
	a.WaitPeer(t, top.B, kubeStatusWithin, "active on direct", activeOn("direct", false))

	name := "web.shop." + zone
	ask := func(qname string) (*dns.Msg, error) {
		var r *dns.Msg
		err := top.A.Pod.Do(func() error {
			m := new(dns.Msg)
			m.SetQuestion(qname, dns.TypeA)
			cl := &dns.Client{Net: "udp", Timeout: 2 * time.Second}
			var err error
			r, _, err = cl.Exchange(m, server)
			return err
		})
		return r, err
	}
	answer := func() ([]string, string) {
		r, err := ask(name)
		if err != nil {
			return nil, err.Error()
		}
		var out []string
		for _, rr := range r.Answer {
			if a, ok := rr.(*dns.A); ok {
				out = append(out, a.A.String())
			}
		}
		return out, fmt.Sprintf("rcode %s, A %v", dns.RcodeToString[r.Rcode], out)
	}
	expect := func(within time.Duration, what string, want ...string) {
		t.Helper()
		start := time.Now()
		waitFor(t, within, what, func() (bool, string) {
			got, msg := answer()
			return slices.Equal(got, want), msg + fmt.Sprintf(", want %v", want)
		})
		t.Logf("%s: %v after %v", what, want, time.Since(start).Round(time.Millisecond))
	}

	expect(dnsAnswerWithin, "local pod first, then the reachable peer's; the unrouted address left out", top.A.PodIP, podB)
	if !strings.Contains(ra.Proc.Output(), dnsConsumer) {
		t.Errorf("relay A's log does not say it read consumer %s from its namespace:\n%s", dnsConsumer, ra.Proc.Output())
	}

	const second = "10.244.1.11"
	changed := time.Now()
	c.KubectlIn(t, sliceYAML("web-native", false, top.A.PodIP, second), "apply", "-f", "-")
	expect(dnsChangeWithin, "EndpointSlice change", top.A.PodIP, second, podB)
	t.Logf("EndpointSlice applied -> answer changed: %v", time.Since(changed).Round(time.Millisecond))

	stopped := time.Now()
	b.StopRelay(t)
	expect(dnsChangeWithin, "peer B's relay stopped: B left out", top.A.PodIP, second)
	t.Logf("relay B stopped -> B out of the answer: %v", time.Since(stopped).Round(time.Millisecond))

	r, err := ask("web.shop.svc.cluster.local.")
	if err != nil || r.Rcode != dns.RcodeRefused {
		t.Errorf("a name outside the zone: %v, %v; want REFUSED", r, err)
	}
	a.StopRelay(t)
}

// sliceYAML is an EndpointSlice of Service web in namespace shop:
// reflected from the consumer (Liqo's labels) or native.
func sliceYAML(name string, reflected bool, addrs ...string) string {
	labels := "endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io"
	if reflected {
		labels = "endpointslice.kubernetes.io/managed-by: endpointslice.reflection.liqo.io\n    offloading.liqo.io/origin: " + dnsConsumer
	}
	var eps strings.Builder
	for _, a := range addrs {
		fmt.Fprintf(&eps, "  - addresses: [%s]\n    conditions: {ready: true}\n", a)
	}
	return fmt.Sprintf(`apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: %s
  namespace: shop
  labels:
    kubernetes.io/service-name: web
    %s
addressType: IPv4
endpoints:
%s`, name, labels, eps.String())
}
