package dnsfeed

import (
	"net/netip"
	"reflect"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func slice(ns, name, svc string, reflectedFrom string, eps ...discoveryv1.Endpoint) discoveryv1.EndpointSlice {
	labels := map[string]string{}
	if svc != "" {
		labels[discoveryv1.LabelServiceName] = svc
	}
	if reflectedFrom != "" {
		labels[discoveryv1.LabelManagedBy] = reflectionManager
		labels[originLabel] = reflectedFrom
	} else {
		labels[discoveryv1.LabelManagedBy] = "endpointslice-controller.k8s.io"
	}
	return discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, Endpoints: eps}
}

func ep(ready *bool, addrs ...string) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: addrs, Conditions: discoveryv1.EndpointConditions{Ready: ready}}
}

func TestServices(t *testing.T) {
	yes, no := true, false
	in := []discoveryv1.EndpointSlice{
		// web.shop: reflected from our consumer (pods in B at ext
		// addresses, a pod of the consumer), plus a native slice (a pod
		// offloaded here).
		slice("shop", "web-refl", "web", "consumer-c", ep(&yes, "10.92.0.12"), ep(nil, "10.91.0.9"), ep(&no, "10.92.0.13")),
		slice("shop", "web-abc", "web", "", ep(&yes, "10.244.1.5", "10.92.0.12")),
		// db.shop: reflected from another consumer: not ours.
		slice("shop", "db-refl", "db", "consumer-d", ep(&yes, "10.92.0.30")),
		// local.shop: native only: not offloaded by anyone.
		slice("shop", "local-x", "local", "", ep(&yes, "10.244.1.6")),
		// A reflected slice without a service name.
		slice("shop", "orphan", "", "consumer-c", ep(&yes, "10.92.0.40")),
		// Not an address.
		slice("other", "api-refl", "api", "consumer-c", ep(&yes, "not-an-ip", "::ffff:10.92.0.50")),
	}
	got := Services(in, "consumer-c")
	want := map[string][]netip.Addr{
		"web.shop":  {netip.MustParseAddr("10.244.1.5"), netip.MustParseAddr("10.92.0.12"), netip.MustParseAddr("10.91.0.9")},
		"api.other": {netip.MustParseAddr("10.92.0.50")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Services = %v\nwant %v", got, want)
	}
}
