package relaypublish

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-relay/relay/api/v1alpha1"
)

func service(ports []corev1.ServicePort, ingress ...corev1.LoadBalancerIngress) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "relay"},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: ports},
		Status:     corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: ingress}},
	}
}

func TestEndpoints(t *testing.T) {
	udp := []corev1.ServicePort{{Name: "tcp", Port: 80, Protocol: corev1.ProtocolTCP}, {Name: "wg", Port: 51900, Protocol: corev1.ProtocolUDP}, {Name: "wg2", Port: 51901, Protocol: corev1.ProtocolUDP}}
	ref := func(port int32) v1alpha1.RelaySpec {
		return v1alpha1.RelaySpec{ServiceRef: &v1alpha1.ServiceRef{Name: "relay", Port: port}}
	}
	for _, tc := range []struct {
		name   string
		spec   v1alpha1.RelaySpec
		svc    *corev1.Service
		want   []string
		reason string
	}{
		{"spec endpoints", v1alpha1.RelaySpec{Endpoints: []string{"203.0.113.1:51900"}}, nil, []string{"203.0.113.1:51900"}, ""},
		{"nothing", v1alpha1.RelaySpec{}, nil, nil, v1alpha1.ReasonNoEndpoints},
		{"service missing", ref(0), nil, nil, v1alpha1.ReasonServiceNotFound},
		{"first UDP port, ip and hostname", ref(0), service(udp, corev1.LoadBalancerIngress{IP: "203.0.113.7"}, corev1.LoadBalancerIngress{Hostname: "lb.example.com"}),
			[]string{"203.0.113.7:51900", "lb.example.com:51900"}, ""},
		{"named port, v6", ref(51901), service(udp, corev1.LoadBalancerIngress{IP: "2001:db8::7"}), []string{"[2001:db8::7]:51901"}, ""},
		{"no such port", ref(4000), service(udp, corev1.LoadBalancerIngress{IP: "203.0.113.7"}), nil, v1alpha1.ReasonServiceNoPort},
		{"tcp only", ref(0), service(udp[:1], corev1.LoadBalancerIngress{IP: "203.0.113.7"}), nil, v1alpha1.ReasonServiceNoPort},
		{"no ingress yet", ref(0), service(udp), nil, v1alpha1.ReasonServiceNoIngress},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, reason, msg := endpoints(tc.spec, tc.svc)
			if !slices.Equal(got, tc.want) || reason != tc.reason {
				t.Errorf("endpoints = %v, %q (%s); want %v, %q", got, reason, msg, tc.want, tc.reason)
			}
			if reason != "" && !strings.Contains(msg, "relay") && !strings.Contains(msg, "Service") {
				t.Errorf("reason %s without a message", reason)
			}
		})
	}
}
