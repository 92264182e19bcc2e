package webhook

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ManagedBy is the app.kubernetes.io/managed-by value of the objects the
// controller writes.
const ManagedBy = "liqo-relay-inject"

// gateway is what the controller knows of one Liqo gateway.
type gateway struct {
	namespace, name string
	// serviceAccount is the gateway pods' ServiceAccount (Liqo names it
	// after the gateway).
	serviceAccount string
	owner          metav1.OwnerReference
}

func (g gateway) meta() metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:      objectName(g.name),
		Namespace: g.namespace,
		Labels: map[string]string{
			"app.kubernetes.io/name":       "liqo-relay",
			"app.kubernetes.io/managed-by": ManagedBy,
			GatewayNameLabel:               g.name,
		},
		OwnerReferences: []metav1.OwnerReference{g.owner},
	}
}

// podSelector selects the gateway's pods.
func (g gateway) podSelector() map[string]string {
	return map[string]string{ComponentLabel: ComponentGateway, GatewayNameLabel: g.name}
}

// roleBinding binds the relay's ClusterRole, in the gateway's namespace
// only, to the gateway's ServiceAccount, which the sidecar shares.
func (s *Sidecar) roleBinding(g gateway) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: g.meta(),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: s.RelayClusterRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: g.serviceAccount, Namespace: g.namespace}},
	}
}

// service is the relay's UDP Service. Its selector includes
// networking.liqo.io/active=true, so only the active replica of an HA
// gateway receives the direct path's traffic.
func (s *Sidecar) service(g gateway) *corev1.Service {
	sel := g.podSelector()
	sel[ActiveLabel] = "true"
	m := g.meta()
	m.Annotations = s.Service.Annotations
	return &corev1.Service{
		ObjectMeta: m,
		Spec: corev1.ServiceSpec{
			Type:                  s.Service.Type,
			ExternalTrafficPolicy: s.Service.ExternalTrafficPolicy,
			Selector:              sel,
			Ports: []corev1.ServicePort{{
				Name: "relay-wg", Protocol: corev1.ProtocolUDP, Port: s.Port, TargetPort: intstr.FromString("relay-wg"),
			}},
		},
	}
}

// networkPolicy limits the relay's metrics port (admin.metricsListen) to
// metricsFrom and lets everything else in. A NetworkPolicy is an allow
// list: once it selects the pod, what it does not allow is dropped, so it
// must allow Liqo's ports (WireGuard, geneve, health) explicitly: every
// UDP and SCTP port, and every TCP port but the metrics port.
func (s *Sidecar) networkPolicy(g gateway) *networkingv1.NetworkPolicy {
	tcp, udp, sctp := corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP
	portRange := func(proto *corev1.Protocol, from, to int32) networkingv1.NetworkPolicyPort {
		p := intstr.FromInt32(from)
		return networkingv1.NetworkPolicyPort{Protocol: proto, Port: &p, EndPort: &to}
	}
	var open []networkingv1.NetworkPolicyPort
	if s.MetricsPort > 1 {
		open = append(open, portRange(&tcp, 1, s.MetricsPort-1))
	}
	if s.MetricsPort < 65535 {
		open = append(open, portRange(&tcp, s.MetricsPort+1, 65535))
	}
	open = append(open, portRange(&udp, 1, 65535), portRange(&sctp, 1, 65535))
	metrics := intstr.FromInt32(s.MetricsPort)
	rules := []networkingv1.NetworkPolicyIngressRule{{Ports: open}}
	if len(s.NetworkPolicy.MetricsFrom) > 0 {
		rules = append(rules, networkingv1.NetworkPolicyIngressRule{
			From:  s.NetworkPolicy.MetricsFrom,
			Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &metrics}},
		})
	}
	m := g.meta()
	m.Name = shorten(objectName(g.name)+"-metrics", 63)
	return &networkingv1.NetworkPolicy{
		ObjectMeta: m,
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: g.podSelector()},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress:     rules,
		},
	}
}
