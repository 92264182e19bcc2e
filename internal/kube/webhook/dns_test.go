package webhook

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	k8stesting "k8s.io/client-go/testing"

	"github.com/liqo-relay/relay/internal/core/config"
)

func dnsSidecar(t *testing.T) *Sidecar {
	t.Helper()
	s := testSidecar(t)
	s.DNS = DNSConfig{Enabled: true, TTL: "3s"}
	s.setDefaults()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseSidecarDNS(t *testing.T) {
	s, err := ParseSidecar([]byte("image: r:1\naddresses: [100.80.0.1/32]\ndns: {enabled: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.DNS.Port != DefaultDNSPort || s.DNS.ZoneSuffix != DefaultDNSZoneSuffix || s.DNS.Zone("Consumer-1") != "consumer-1.relay.local." {
		t.Errorf("dns defaults: %+v, zone %q", s.DNS, s.DNS.Zone("Consumer-1"))
	}
	off, err := ParseSidecar([]byte("image: r:1\naddresses: [100.80.0.1/32]\n"))
	if err != nil || off.DNS.Enabled {
		t.Errorf("dns must be off by default: %+v, %v", off.DNS, err)
	}
	for _, tc := range []struct{ in, want string }{
		{"dns: {enabled: true, port: 9587}", "dns.port: 9587 is metricsPort's port too"},
		{"dns: {enabled: true, port: 51900}", "dns.port: 51900 is port's port too"},
		{"dns: {enabled: true, port: 70000}", "dns.port: 70000 is not a port"},
		{"dns: {enabled: true, ttl: soon}", `dns.ttl: "soon" is not a duration`},
		{"dns: {enabled: true, ttl: 2h}", "dnsServer.ttl: 2h0m0s is out of range"},
		{"dns: {enabled: true, zoneSuffix: bad_zone}", "dnsServer.zone"},
		{"dns: {enabled: true, rateLimit: -1}", "dns.rateLimit: -1 is below 0"},
		{"dns: {enabled: true, listen: x}", `unknown field "listen"`},
	} {
		_, err := ParseSidecar([]byte("image: r:1\naddresses: [100.80.0.1/32]\n" + tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.in, err, tc.want)
		}
	}
}

// With dns on, the relay container answers on the pod's address (the
// kubelet expands $(POD_IP)), names its port, and its file has the
// consumer's zone.
func TestMutateDNS(t *testing.T) {
	s := dnsSidecar(t)
	pod := liqoGatewayPod(t)
	ops, err := s.Mutate(pod, testLocal)
	if err != nil {
		t.Fatal(err)
	}
	var c *corev1.Container
	var cfgText string
	for _, op := range ops {
		switch v := op.Value.(type) {
		case corev1.Container:
			c = &v
		case map[string]string:
			cfgText = v[ConfigAnnotation]
		case string:
			if strings.HasSuffix(op.Path, escape(ConfigAnnotation)) {
				cfgText = v
			}
		}
	}
	if c == nil || cfgText == "" {
		t.Fatalf("no container or configuration in %+v", ops)
	}
	if !contains(c.Args, "--dns-listen=$(POD_IP):5353") {
		t.Errorf("args %v lack --dns-listen=$(POD_IP):5353", c.Args)
	}
	var podIP bool
	for _, e := range c.Env {
		podIP = podIP || (e.Name == "POD_IP" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "status.podIP")
	}
	if !podIP {
		t.Errorf("env %+v lacks POD_IP from status.podIP", c.Env)
	}
	ports := map[string]corev1.ContainerPort{}
	for _, p := range c.Ports {
		ports[p.Name] = p
	}
	if p := ports[dnsPortName]; p.ContainerPort != 5353 || p.Protocol != corev1.ProtocolUDP {
		t.Errorf("port %s: %+v", dnsPortName, p)
	}
	if p := ports[dnsTCPPortName]; p.ContainerPort != 5353 || p.Protocol != corev1.ProtocolTCP {
		t.Errorf("port %s: %+v", dnsTCPPortName, p)
	}
	cfg, err := config.Parse([]byte(cfgText))
	if err != nil {
		t.Fatal(err)
	}
	if want := ConsumerID(pod) + ".relay.local."; cfg.DNSServer.Zone != want || cfg.DNSServer.TTL.String() != "3s" || cfg.DNSServer.Enabled() {
		t.Errorf("dnsServer %+v, want zone %s, ttl 3s, no listen in the file", cfg.DNSServer, want)
	}
	// What the relay gets after the kubelet's expansion parses.
	if _, err := netip.ParseAddrPort(strings.ReplaceAll(strings.TrimPrefix(s.DNS.dnsListenArg(), "--dns-listen="), "$(POD_IP)", "10.244.1.7")); err != nil {
		t.Error(err)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// corefileBlock is one parsed CoreDNS server block.
type corefileBlock struct {
	zone    string
	port    int
	plugins map[string][]string
}

// parseCorefileBlock parses one server block as CoreDNS's Corefile
// grammar has it: "ZONE:PORT {", one plugin with its arguments per line,
// "}". It refuses anything else.
func parseCorefileBlock(text string) (corefileBlock, error) {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) < 2 {
		return corefileBlock{}, fmt.Errorf("too short: %q", text)
	}
	head := strings.Fields(lines[0])
	if len(head) != 2 || head[1] != "{" {
		return corefileBlock{}, fmt.Errorf("first line %q is not ZONE:PORT {", lines[0])
	}
	zone, port, ok := strings.Cut(head[0], ":")
	p, err := strconv.Atoi(port)
	if !ok || err != nil || zone == "" || strings.HasSuffix(zone, ".") {
		return corefileBlock{}, fmt.Errorf("server key %q is not ZONE:PORT", head[0])
	}
	if strings.TrimSpace(lines[len(lines)-1]) != "}" {
		return corefileBlock{}, fmt.Errorf("last line %q is not }", lines[len(lines)-1])
	}
	b := corefileBlock{zone: zone, port: p, plugins: map[string][]string{}}
	for _, l := range lines[1 : len(lines)-1] {
		f := strings.Fields(l)
		if len(f) == 0 || strings.ContainsAny(l, "{}") {
			return corefileBlock{}, fmt.Errorf("line %q is not a plugin line", l)
		}
		if _, dup := b.plugins[f[0]]; dup {
			return corefileBlock{}, fmt.Errorf("plugin %s twice", f[0])
		}
		b.plugins[f[0]] = f[1:]
	}
	return b, nil
}

// checkCoreDNSBlock checks what ships on a DNS Service: its annotation is
// a server block for the Service's zone that forwards everything to the
// Service's ClusterIP on port 53 over DNS, caching at most 5 s.
func checkCoreDNSBlock(t *testing.T, svc *corev1.Service) {
	t.Helper()
	zone := svc.Annotations[DNSZoneAnnotation]
	b, err := parseCorefileBlock(svc.Annotations[CoreDNSAnnotation])
	if err != nil {
		t.Fatalf("%s's %s: %v\n%s", svc.Name, CoreDNSAnnotation, err, svc.Annotations[CoreDNSAnnotation])
	}
	if b.zone+"." != zone || b.port != 53 {
		t.Errorf("block serves %s:%d, want %s:53", b.zone, b.port, zone)
	}
	fwd := b.plugins["forward"]
	want := netip.AddrPortFrom(netip.MustParseAddr(svc.Spec.ClusterIP), 53)
	if len(fwd) != 2 || fwd[0] != "." || fwd[1] != want.String() {
		t.Errorf("forward %v, want . %s (the Service's ClusterIP and port)", fwd, want)
	}
	if c := b.plugins["cache"]; len(c) != 1 || c[0] > "5" || len(c[0]) != 1 {
		t.Errorf("cache %v, want at most 5 s", c)
	}
	found := false
	for _, p := range svc.Spec.Ports {
		found = found || (p.Port == 53 && p.Protocol == corev1.ProtocolUDP)
	}
	if !found {
		t.Errorf("Service %s has no UDP port 53: %+v", svc.Name, svc.Spec.Ports)
	}
}

func TestCoreDNSBlock(t *testing.T) {
	for _, tc := range []struct{ zone, ip, fwd string }{
		{"c1.relay.local.", "10.96.0.53", "10.96.0.53:53"},
		{"c1.relay.local", "fd00::35", "[fd00::35]:53"},
	} {
		b, err := parseCorefileBlock(CoreDNSBlock(tc.zone, tc.ip, 53))
		if err != nil {
			t.Fatal(err)
		}
		if b.zone != "c1.relay.local" || b.port != 53 || strings.Join(b.plugins["forward"], " ") != ". "+tc.fwd {
			t.Errorf("%+v", b)
		}
	}
}

// The controller gives a gateway its DNS Service and ClusterRoleBinding
// when dns is on, annotates the Service with the CoreDNS block once it
// has a ClusterIP, writes nothing more on a second sync, deletes the
// binding when the gateway's pods are gone, and removes both when dns is
// turned off.
func TestControllerDNSObjects(t *testing.T) {
	ctx := context.Background()
	pod := gatewayPodNamed(t, "gw-a", true)
	f := newCtlFixture(t, true, pod)
	f.ctl.sidecar = dnsSidecar(t)
	// The API server's ClusterIP allocation.
	f.client.PrependReactor("create", "services", func(a k8stesting.Action) (bool, runtime.Object, error) {
		svc := a.(k8stesting.CreateAction).GetObject().(*corev1.Service)
		if svc.Spec.ClusterIP == "" {
			svc.Spec.ClusterIP = "10.96.7.53"
		}
		return false, nil, nil
	})
	key := testNS + "/" + testGateway
	if err := f.ctl.sync(ctx, key); err != nil {
		t.Fatal(err)
	}
	want := []string{"create rolebindings", "create services", "update services", "create clusterrolebindings", "create services", "create networkpolicies", "create secrets"}
	if got := writes(f.client.Actions()); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("writes %v, want %v", got, want)
	}
	svc := checkDNSObjects(ctx, t, f, pod)
	crbName := dnsBindingName(testNS, testGateway)

	f.client.ClearActions()
	if err := f.ctl.sync(ctx, key); err != nil {
		t.Fatal(err)
	}
	if got := writes(f.client.Actions()); len(got) != 0 {
		t.Errorf("second sync writes %v, want none", got)
	}

	// Gateway gone: the owner references take the Service; the
	// cluster-scoped binding is deleted by the controller.
	if err := f.pods.Delete(pod); err != nil {
		t.Fatal(err)
	}
	if err := f.ctl.sync(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.RbacV1().ClusterRoleBindings().Get(ctx, crbName, metav1.GetOptions{}); err == nil {
		t.Error("the ClusterRoleBinding outlived the gateway's pods")
	}

	// dns turned off: both go.
	if err := f.pods.Add(pod); err != nil {
		t.Fatal(err)
	}
	if err := f.ctl.sync(ctx, key); err != nil {
		t.Fatal(err)
	}
	f.ctl.sidecar = testSidecar(t)
	if err := f.ctl.sync(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.RbacV1().ClusterRoleBindings().Get(ctx, crbName, metav1.GetOptions{}); err == nil {
		t.Error("the ClusterRoleBinding stayed with dns off")
	}
	if _, err := f.client.CoreV1().Services(testNS).Get(ctx, svc.Name, metav1.GetOptions{}); err == nil {
		t.Error("the DNS Service stayed with dns off")
	}
}

// checkDNSObjects checks the DNS Service a sync gives pod's gateway (its
// zone, selector, ports and CoreDNS block) and the ClusterRoleBinding of
// the gateway's ServiceAccount. It returns the Service.
func checkDNSObjects(ctx context.Context, t *testing.T, f *ctlFixture, pod *corev1.Pod) *corev1.Service {
	t.Helper()
	svc, err := f.client.CoreV1().Services(testNS).Get(ctx, "liqo-relay-"+testGateway+"-dns", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	zone := ConsumerID(pod) + ".relay.local."
	if svc.Spec.Type != corev1.ServiceTypeClusterIP || svc.Spec.Selector[ActiveLabel] != "true" || svc.Spec.Selector[GatewayNameLabel] != testGateway ||
		svc.Annotations[DNSZoneAnnotation] != zone || svc.Labels[DNSServiceLabel] != "true" || len(svc.OwnerReferences) != 1 {
		t.Errorf("DNS Service %+v", svc)
	}
	wantPorts := []corev1.ServicePort{
		{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53, TargetPort: intstr.FromString(dnsPortName)},
		{Name: "dns-tcp", Protocol: corev1.ProtocolTCP, Port: 53, TargetPort: intstr.FromString(dnsTCPPortName)},
	}
	if !samePorts(svc.Spec.Ports, wantPorts) {
		t.Errorf("DNS Service ports %+v", svc.Spec.Ports)
	}
	checkCoreDNSBlock(t, svc)
	crb, err := f.client.RbacV1().ClusterRoleBindings().Get(ctx, dnsBindingName(testNS, testGateway), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if crb.RoleRef.Kind != "ClusterRole" || crb.RoleRef.Name != DNSClusterRole || len(crb.Subjects) != 1 ||
		crb.Subjects[0].Kind != "ServiceAccount" || crb.Subjects[0].Namespace != testNS || crb.Subjects[0].Name != pod.Spec.ServiceAccountName {
		t.Errorf("ClusterRoleBinding %+v", crb)
	}
	return svc
}
