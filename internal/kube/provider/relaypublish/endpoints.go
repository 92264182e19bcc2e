package relaypublish

import (
	"fmt"
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/liqo-relay/relay/api/v1alpha1"
)

// endpoints computes the endpoints a Relay publishes from its spec and, with
// spec.serviceRef, its Service (nil when it does not exist). It returns the
// reason and message of the EndpointsKnown condition when there are none.
// It is pure.
func endpoints(spec v1alpha1.RelaySpec, svc *corev1.Service) (eps []string, reason, msg string) {
	if spec.ServiceRef == nil {
		if len(spec.Endpoints) == 0 {
			return nil, v1alpha1.ReasonNoEndpoints, "set spec.endpoints or spec.serviceRef so that other providers can reach this relay directly"
		}
		return append([]string(nil), spec.Endpoints...), "", ""
	}
	ref := spec.ServiceRef
	if svc == nil {
		return nil, v1alpha1.ReasonServiceNotFound, fmt.Sprintf("Service %s named by spec.serviceRef does not exist", ref.Name)
	}
	port, ok := udpPort(svc, ref.Port)
	if !ok {
		if ref.Port != 0 {
			return nil, v1alpha1.ReasonServiceNoPort, fmt.Sprintf("Service %s has no UDP port %d", ref.Name, ref.Port)
		}
		return nil, v1alpha1.ReasonServiceNoPort, fmt.Sprintf("Service %s has no UDP port", ref.Name)
	}
	for _, in := range svc.Status.LoadBalancer.Ingress {
		host := in.IP
		if host == "" {
			host = in.Hostname
		}
		if host != "" {
			eps = append(eps, net.JoinHostPort(host, strconv.Itoa(int(port))))
		}
	}
	if len(eps) == 0 {
		return nil, v1alpha1.ReasonServiceNoIngress, fmt.Sprintf("Service %s has no LoadBalancer ingress yet (is it of type LoadBalancer, and does the cluster have a load balancer controller?)", ref.Name)
	}
	return eps, "", ""
}

// udpPort returns the Service's UDP port numbered want, or its first UDP
// port when want is 0.
func udpPort(svc *corev1.Service, want int32) (int32, bool) {
	for _, p := range svc.Spec.Ports {
		if p.Protocol != corev1.ProtocolUDP {
			continue
		}
		if want == 0 || p.Port == want {
			return p.Port, true
		}
	}
	return 0, false
}
