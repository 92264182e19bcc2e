package webhook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// DNSConfig turns on the relay's topology-aware DNS responder in every
// gateway (docs/dns.md, "Deployment"). Off by default.
type DNSConfig struct {
	Enabled bool `json:"enabled,omitempty"`
	// Port is the responder's port on the pod's address (UDP and TCP);
	// the per-gateway ClusterIP Service maps port 53 to it.
	Port int32 `json:"port,omitempty"`
	// ZoneSuffix follows the consumer's cluster ID in each relay's zone:
	// <consumer>.<zoneSuffix>.
	ZoneSuffix string `json:"zoneSuffix,omitempty"`
	// TTL, RateLimit and Burst are the relay configuration's
	// dnsServer.ttl, rateLimit and burst; empty or 0: the relay's defaults.
	TTL       string `json:"ttl,omitempty"`
	RateLimit int    `json:"rateLimit,omitempty"`
	Burst     int    `json:"burst,omitempty"`
}

// Defaults and names of the DNS wiring.
const (
	DefaultDNSPort       = 5353
	DefaultDNSZoneSuffix = "relay.local."
	// DNSClusterRole is the ClusterRole of manifests/rbac/relay-dns-role.yaml,
	// bound to each gateway's ServiceAccount by a ClusterRoleBinding.
	DNSClusterRole = "liqo-relay-dns"
	// CoreDNSAnnotation on each DNS Service holds the CoreDNS server
	// block that forwards its zone to it; DNSZoneAnnotation the zone.
	CoreDNSAnnotation = "relay.liqo-relay.io/coredns"
	DNSZoneAnnotation = "relay.liqo-relay.io/dns-zone"
	// DNSServiceLabel marks the DNS Services, for kubectl -l.
	DNSServiceLabel = "relay.liqo-relay.io/dns"
	// dnsNamespaceLabel names the gateway's namespace on its
	// ClusterRoleBinding, which is cluster-scoped.
	dnsNamespaceLabel = "relay.liqo-relay.io/namespace"
	dnsPortName       = "relay-dns"
	dnsTCPPortName    = "relay-dns-tcp"
	// dnsServicePort is the port CoreDNS forwards to.
	dnsServicePort = 53
)

func (d *DNSConfig) setDefaults() {
	if !d.Enabled {
		return
	}
	if d.Port == 0 {
		d.Port = DefaultDNSPort
	}
	if d.ZoneSuffix == "" {
		d.ZoneSuffix = DefaultDNSZoneSuffix
	}
	d.ZoneSuffix = strings.ToLower(d.ZoneSuffix)
	if !strings.HasSuffix(d.ZoneSuffix, ".") {
		d.ZoneSuffix += "."
	}
}

// validate reports the DNS fields' problems; s's other ports are set.
func (d *DNSConfig) validate(s *Sidecar, bad func(field, format string, a ...any)) {
	if !d.Enabled {
		return
	}
	if d.Port < 1 || d.Port > 65535 {
		bad("dns.port", "%d is not a port (1..65535)", d.Port)
	}
	for _, p := range []struct {
		field string
		v     int32
	}{{"port", s.Port}, {"adminPort", s.AdminPort}, {"metricsPort", s.MetricsPort}} {
		if d.Port == p.v { // UDP clashes with port, TCP with the others
			bad("dns.port", "%d is %s's port too", d.Port, p.field)
		}
	}
	if d.TTL != "" {
		if _, err := time.ParseDuration(d.TTL); err != nil {
			bad("dns.ttl", "%q is not a duration", d.TTL)
		}
	}
	if d.RateLimit < 0 {
		bad("dns.rateLimit", "%d is below 0", d.RateLimit)
	}
	if d.Burst < 0 {
		bad("dns.burst", "%d is below 0", d.Burst)
	}
}

// Zone is the zone of the relay that serves consumer: one zone per
// consumer, so that a provider's CoreDNS can forward each consumer's
// names to that consumer's relay.
func (d *DNSConfig) Zone(consumer string) string {
	return strings.ToLower(consumer) + "." + d.ZoneSuffix
}

// dnsServerConfig is the relay configuration's dnsServer mapping: no
// listen (the pod's address is known only in the pod: --dns-listen).
func (d *DNSConfig) dnsServerConfig(consumer string) map[string]any {
	m := map[string]any{"zone": d.Zone(consumer)}
	if d.TTL != "" {
		m["ttl"] = d.TTL
	}
	if d.RateLimit > 0 {
		m["rateLimit"] = d.RateLimit
	}
	if d.Burst > 0 {
		m["burst"] = d.Burst
	}
	return m
}

// dnsListenArg makes the relay answer on the pod's address; the kubelet
// expands $(POD_IP) from the container's environment.
func (d *DNSConfig) dnsListenArg() string {
	return "--dns-listen=$(POD_IP):" + strconv.Itoa(int(d.Port))
}

// CoreDNSBlock is the CoreDNS server block that forwards zone to the
// responder at ip:port. cache stays within the responder's TTL (5 s by
// default) so that a failover is not hidden.
func CoreDNSBlock(zone, ip string, port int32) string {
	zone = strings.TrimSuffix(zone, ".")
	return fmt.Sprintf("%s:53 {\n    errors\n    cache 5\n    forward . %s\n}\n",
		zone, hostPort(ip, port))
}

func hostPort(ip string, port int32) string {
	if strings.Contains(ip, ":") {
		return "[" + ip + "]:" + strconv.Itoa(int(port))
	}
	return ip + ":" + strconv.Itoa(int(port))
}

// dnsServiceName is the gateway's DNS Service.
func dnsServiceName(gateway string) string { return shorten(objectName(gateway)+"-dns", 63) }

// dnsBindingName is the gateway's ClusterRoleBinding, cluster-scoped and
// so named after its namespace too. Joining the two with "-" alone would
// be ambiguous (namespace a-b with gateway c, namespace a with gateway
// b-c), and the controller updates and deletes by name, so a hash of
// namespace/gateway ends every name.
func dnsBindingName(ns, gateway string) string {
	sum := sha256.Sum256([]byte(ns + "/" + gateway))
	suffix := "-" + hex.EncodeToString(sum[:4])
	prefix := "liqo-relay-dns-" + ns + "-" + gateway
	if len(prefix)+len(suffix) > 63 {
		prefix = strings.TrimRight(prefix[:63-len(suffix)], "-")
	}
	return prefix + suffix
}

// dnsService is the ClusterIP Service in front of the active replica's
// responder, UDP and TCP 53, annotated with its zone and, once it has a
// ClusterIP, the CoreDNS block that forwards the zone to it.
func (s *Sidecar) dnsService(g gateway, zone, clusterIP string) *corev1.Service {
	sel := g.podSelector()
	sel[ActiveLabel] = "true"
	m := g.meta()
	m.Name = dnsServiceName(g.name)
	m.Labels[DNSServiceLabel] = "true"
	m.Annotations = map[string]string{DNSZoneAnnotation: zone}
	if clusterIP != "" && clusterIP != corev1.ClusterIPNone {
		m.Annotations[CoreDNSAnnotation] = CoreDNSBlock(zone, clusterIP, dnsServicePort)
	}
	return &corev1.Service{
		ObjectMeta: m,
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: sel,
			Ports: []corev1.ServicePort{
				{Name: "dns", Protocol: corev1.ProtocolUDP, Port: dnsServicePort, TargetPort: intstr.FromString(dnsPortName)},
				{Name: "dns-tcp", Protocol: corev1.ProtocolTCP, Port: dnsServicePort, TargetPort: intstr.FromString(dnsTCPPortName)},
			},
		},
	}
}

// dnsBinding binds DNSClusterRole (EndpointSlices of every namespace, get
// namespaces) to the gateway's ServiceAccount. It gives rights
// cluster-wide, so the controller deletes it as soon as the gateway has no
// pods left; like the gateway's other objects it is owned by the anchor.
func (s *Sidecar) dnsBinding(g gateway) *rbacv1.ClusterRoleBinding {
	m := g.meta()
	m.Name, m.Namespace = dnsBindingName(g.namespace, g.name), ""
	m.Labels[dnsNamespaceLabel] = g.namespace
	return &rbacv1.ClusterRoleBinding{
		ObjectMeta: m,
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: DNSClusterRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: g.serviceAccount, Namespace: g.namespace}},
	}
}

// ensureDNS gives the gateway its DNS Service and ClusterRoleBinding when
// dns is enabled, and removes the ones it made when it is not.
func (c *Controller) ensureDNS(ctx context.Context, g gateway, consumer string) error {
	if !c.sidecar.DNS.Enabled {
		return c.removeDNS(ctx, g.namespace, g.name)
	}
	return errors.Join(c.ensureDNSService(ctx, g, c.sidecar.DNS.Zone(consumer)), c.ensureDNSBinding(ctx, g))
}

func (c *Controller) ensureDNSService(ctx context.Context, g gateway, zone string) error {
	api := c.client.CoreV1().Services(g.namespace)
	want := c.sidecar.dnsService(g, zone, "")
	have, err := api.Get(ctx, want.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if have, err = api.Create(ctx, want, metav1.CreateOptions{}); err != nil {
			return wrap(err, "creating Service", want.ObjectMeta)
		}
	case err != nil:
		return wrap(err, "reading Service", want.ObjectMeta)
	case notOurs("Service", have.ObjectMeta) != nil:
		return notOurs("Service", have.ObjectMeta)
	}
	// The CoreDNS block needs the ClusterIP the API server gave it.
	want = c.sidecar.dnsService(g, zone, have.Spec.ClusterIP)
	same := have.Spec.Type == corev1.ServiceTypeClusterIP && reflect.DeepEqual(have.Spec.Selector, want.Spec.Selector) &&
		samePorts(have.Spec.Ports, want.Spec.Ports) && sameMeta(have.ObjectMeta, want.ObjectMeta)
	if same {
		return nil
	}
	have.Spec.Type, have.Spec.Selector, have.Spec.Ports = corev1.ServiceTypeClusterIP, want.Spec.Selector, want.Spec.Ports
	have.Spec.ExternalTrafficPolicy = ""
	mergeMeta(&have.ObjectMeta, want.ObjectMeta)
	_, err = api.Update(ctx, have, metav1.UpdateOptions{})
	return wrap(err, "updating Service", want.ObjectMeta)
}

func samePorts(have, want []corev1.ServicePort) bool {
	if len(have) != len(want) {
		return false
	}
	for i := range want {
		h, w := have[i], want[i]
		if h.Name != w.Name || h.Protocol != w.Protocol || h.Port != w.Port || h.TargetPort != w.TargetPort {
			return false
		}
	}
	return true
}

func (c *Controller) ensureDNSBinding(ctx context.Context, g gateway) error {
	want := c.sidecar.dnsBinding(g)
	api := c.client.RbacV1().ClusterRoleBindings()
	have, err := api.Get(ctx, want.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = api.Create(ctx, want, metav1.CreateOptions{})
		return wrap(err, "creating ClusterRoleBinding", want.ObjectMeta)
	case err != nil:
		return wrap(err, "reading ClusterRoleBinding", want.ObjectMeta)
	case notOurs("ClusterRoleBinding", have.ObjectMeta) != nil:
		return notOurs("ClusterRoleBinding", have.ObjectMeta)
	case have.RoleRef != want.RoleRef:
		if err := api.Delete(ctx, want.Name, metav1.DeleteOptions{}); err != nil {
			return wrap(err, "replacing ClusterRoleBinding", want.ObjectMeta)
		}
		_, err = api.Create(ctx, want, metav1.CreateOptions{})
		return wrap(err, "creating ClusterRoleBinding", want.ObjectMeta)
	case !reflect.DeepEqual(have.Subjects, want.Subjects) || !sameMeta(have.ObjectMeta, want.ObjectMeta):
		have.Subjects = want.Subjects
		mergeMeta(&have.ObjectMeta, want.ObjectMeta)
		_, err = api.Update(ctx, have, metav1.UpdateOptions{})
		return wrap(err, "updating ClusterRoleBinding", want.ObjectMeta)
	}
	return nil
}

// removeDNS deletes the gateway's DNS Service and ClusterRoleBinding if
// the controller made them (its managed-by label).
func (c *Controller) removeDNS(ctx context.Context, ns, gateway string) error {
	var errs []error
	svc := c.client.CoreV1().Services(ns)
	have, err := svc.Get(ctx, dnsServiceName(gateway), metav1.GetOptions{})
	switch {
	case err == nil && have.Labels["app.kubernetes.io/managed-by"] == ManagedBy:
		errs = append(errs, wrap(ignoreGone(svc.Delete(ctx, have.Name, deleteThis(have.ObjectMeta))), "deleting Service", have.ObjectMeta))
	case err != nil && !apierrors.IsNotFound(err):
		errs = append(errs, wrap(err, "reading Service", metav1.ObjectMeta{Namespace: ns, Name: dnsServiceName(gateway)}))
	}
	errs = append(errs, c.removeDNSBinding(ctx, ns, gateway))
	return errors.Join(errs...)
}

// removeDNSBinding deletes the gateway's ClusterRoleBinding if the
// controller made it.
func (c *Controller) removeDNSBinding(ctx context.Context, ns, gateway string) error {
	api := c.client.RbacV1().ClusterRoleBindings()
	have, err := api.Get(ctx, dnsBindingName(ns, gateway), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return wrap(err, "reading ClusterRoleBinding", metav1.ObjectMeta{Name: dnsBindingName(ns, gateway)})
	case have.Labels["app.kubernetes.io/managed-by"] != ManagedBy:
		return nil
	}
	return wrap(ignoreGone(api.Delete(ctx, have.Name, deleteThis(have.ObjectMeta))), "deleting ClusterRoleBinding", have.ObjectMeta)
}
