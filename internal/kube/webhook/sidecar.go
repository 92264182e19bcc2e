package webhook

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// Sidecar is the sidecar file (--sidecar, the chart's .Values.sidecar):
// what the webhook adds to every gateway pod and the settings of the
// relay it runs. docs/inject.md documents each field.
type Sidecar struct {
	Image           string            `json:"image"`
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`
	// Mode is the relay's mode: tun (pod traffic) or netstack.
	Mode string `json:"mode,omitempty"`
	// Port is the relay's UDP port (WireGuard and probes).
	Port int32 `json:"port,omitempty"`
	// AdminPort is admin.listen's port, on 127.0.0.1.
	AdminPort int32 `json:"adminPort,omitempty"`
	// MetricsPort is admin.metricsListen's port, on all addresses.
	MetricsPort int32                       `json:"metricsPort,omitempty"`
	Resources   corev1.ResourceRequirements `json:"resources,omitempty"`
	// Health is the relay configuration's health mapping, passed verbatim.
	Health map[string]any `json:"health,omitempty"`
	// Probes are the kubelet's probes of the relay container.
	Probes Probes `json:"probes,omitempty"`
	// Addresses and Exports are the relay configuration's fields of the
	// same names; MTU too.
	Addresses           []string `json:"addresses"`
	Exports             []string `json:"exports,omitempty"`
	MTU                 int      `json:"mtu,omitempty"`
	AllowedPeerPrefixes []string `json:"allowedPeerPrefixes,omitempty"`
	Log                 Log      `json:"log,omitempty"`
	// LocalClusterID is this provider's Liqo cluster ID. Empty: read from
	// Liqo's cluster-ID ConfigMap in LiqoNamespace.
	LocalClusterID string `json:"localClusterID,omitempty"`
	LiqoNamespace  string `json:"liqoNamespace,omitempty"`
	// NameIncludesConsumer names each relay <local>-<consumer> instead of
	// <local>, for providers with several consumers.
	NameIncludesConsumer bool `json:"nameIncludesConsumer,omitempty"`
	// KeySecret is the name of the key Secret in each tenant namespace.
	KeySecret string `json:"keySecret,omitempty"`
	// RelayClusterRole is the ClusterRole each gateway's RoleBinding binds.
	RelayClusterRole string        `json:"relayClusterRole,omitempty"`
	Service          ServiceConfig `json:"service,omitempty"`
	NetworkPolicy    NetPolConfig  `json:"networkPolicy,omitempty"`
	// DNS turns on the relay's DNS responder (dns.go).
	DNS DNSConfig `json:"dns,omitempty"`
}

// Probes are the relay container's liveness and readiness probe settings.
type Probes struct {
	PeriodSeconds    int32 `json:"periodSeconds,omitempty"`
	FailureThreshold int32 `json:"failureThreshold,omitempty"`
}

// Log is the relay configuration's log mapping.
type Log struct {
	Level  string `json:"level,omitempty"`
	Format string `json:"format,omitempty"`
}

// ServiceConfig shapes each gateway's relay Service.
type ServiceConfig struct {
	Type                  corev1.ServiceType                  `json:"type,omitempty"`
	ExternalTrafficPolicy corev1.ServiceExternalTrafficPolicy `json:"externalTrafficPolicy,omitempty"`
	Annotations           map[string]string                   `json:"annotations,omitempty"`
}

// NetPolConfig shapes each gateway's NetworkPolicy for the metrics port.
type NetPolConfig struct {
	// Enabled defaults to true.
	Enabled *bool `json:"enabled,omitempty"`
	// MetricsFrom may reach the metrics port (Prometheus); nobody else in
	// the cluster network can.
	MetricsFrom []networkingv1.NetworkPolicyPeer `json:"metricsFrom,omitempty"`
}

// Defaults.
const (
	ModeTUN          = "tun"
	ModeNetstack     = "netstack"
	DefaultPort      = 51900
	DefaultAdmin     = 9586
	DefaultMetrics   = 9587
	DefaultKeySecret = "relay-key"
	DefaultRole      = "liqo-relay"
	DefaultLiqoNS    = "liqo"
)

// ParseSidecar decodes a sidecar file strictly (unknown fields are
// errors), fills the defaults and validates it.
func ParseSidecar(data []byte) (*Sidecar, error) {
	var s Sidecar
	if err := yaml.UnmarshalStrict(data, &s); err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	s.setDefaults()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

func (s *Sidecar) setDefaults() {
	def := func(p *int32, v int32) {
		if *p == 0 {
			*p = v
		}
	}
	if s.ImagePullPolicy == "" {
		s.ImagePullPolicy = corev1.PullIfNotPresent
	}
	if s.Mode == "" {
		s.Mode = ModeTUN
	}
	def(&s.Port, DefaultPort)
	def(&s.AdminPort, DefaultAdmin)
	def(&s.MetricsPort, DefaultMetrics)
	def(&s.Probes.PeriodSeconds, 5)
	def(&s.Probes.FailureThreshold, 3)
	if s.LiqoNamespace == "" {
		s.LiqoNamespace = DefaultLiqoNS
	}
	if s.KeySecret == "" {
		s.KeySecret = DefaultKeySecret
	}
	if s.RelayClusterRole == "" {
		s.RelayClusterRole = DefaultRole
	}
	if s.Service.Type == "" {
		s.Service.Type = corev1.ServiceTypeLoadBalancer
	}
	if s.Service.ExternalTrafficPolicy == "" && s.Service.Type != corev1.ServiceTypeClusterIP {
		s.Service.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	}
	if s.NetworkPolicy.Enabled == nil {
		t := true
		s.NetworkPolicy.Enabled = &t
	}
	s.DNS.setDefaults()
}

// NetworkPolicyEnabled reports whether the controller writes the NetworkPolicy.
func (s *Sidecar) NetworkPolicyEnabled() bool {
	return s.NetworkPolicy.Enabled == nil || *s.NetworkPolicy.Enabled
}

// Validate returns every problem, each naming its field. The relay
// configuration the sidecar renders is validated too (by internal/core/config),
// with a sample relay name.
func (s *Sidecar) Validate() error {
	var errs []error
	bad := func(field, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, a...)))
	}
	if s.Image == "" {
		bad("image", "required")
	} else if strings.ContainsAny(s.Image, " \t\n") {
		bad("image", "%q contains white space", s.Image)
	}
	switch s.ImagePullPolicy {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
	default:
		bad("imagePullPolicy", "%q is not Always, IfNotPresent or Never", s.ImagePullPolicy)
	}
	if s.Mode != ModeTUN && s.Mode != ModeNetstack {
		bad("mode", "%q is not tun or netstack", s.Mode)
	}
	s.validatePorts(bad)
	if s.Probes.PeriodSeconds < 1 {
		bad("probes.periodSeconds", "%d is below 1", s.Probes.PeriodSeconds)
	}
	if s.Probes.FailureThreshold < 1 {
		bad("probes.failureThreshold", "%d is below 1", s.Probes.FailureThreshold)
	}
	if len(s.Addresses) == 0 {
		bad("addresses", "required: the relay's overlay address(es)")
	}
	for i, p := range s.AllowedPeerPrefixes {
		if _, err := netip.ParsePrefix(p); err != nil {
			bad(fmt.Sprintf("allowedPeerPrefixes[%d]", i), "%q is not a prefix", p)
		}
	}
	if s.LocalClusterID != "" {
		for _, m := range validation.IsDNS1123Label(s.LocalClusterID) {
			bad("localClusterID", "%q: %s", s.LocalClusterID, m)
		}
	}
	for _, m := range validation.IsDNS1123Label(s.LiqoNamespace) {
		bad("liqoNamespace", "%q: %s", s.LiqoNamespace, m)
	}
	for _, m := range validation.IsDNS1123Subdomain(s.KeySecret) {
		bad("keySecret", "%q: %s", s.KeySecret, m)
	}
	for _, m := range validation.IsDNS1123Subdomain(s.RelayClusterRole) {
		bad("relayClusterRole", "%q: %s", s.RelayClusterRole, m)
	}
	switch s.Service.Type {
	case corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort, corev1.ServiceTypeClusterIP:
	default:
		bad("service.type", "%q is not LoadBalancer, NodePort or ClusterIP", s.Service.Type)
	}
	switch s.Service.ExternalTrafficPolicy {
	case "", corev1.ServiceExternalTrafficPolicyLocal, corev1.ServiceExternalTrafficPolicyCluster:
		if s.Service.ExternalTrafficPolicy != "" && s.Service.Type == corev1.ServiceTypeClusterIP {
			bad("service.externalTrafficPolicy", "needs type LoadBalancer or NodePort")
		}
	default:
		bad("service.externalTrafficPolicy", "%q is not Local or Cluster", s.Service.ExternalTrafficPolicy)
	}
	s.DNS.validate(s, bad)
	if len(errs) == 0 {
		// The rendered relay configuration must be valid: a bad health
		// setting or prefix is found here, at start, not in every pod.
		if _, err := s.RelayConfig("sample", "sample-consumer"); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// validatePorts checks that each port is one and that the TCP ports (admin,
// metrics) differ; the UDP port may share a number with either.
func (s *Sidecar) validatePorts(bad func(field, format string, a ...any)) {
	ports := map[int32]string{}
	for _, p := range []struct {
		field string
		v     int32
	}{{"port", s.Port}, {"adminPort", s.AdminPort}, {"metricsPort", s.MetricsPort}} {
		if p.v < 1 || p.v > 65535 {
			bad(p.field, "%d is not a port (1..65535)", p.v)
			continue
		}
		if other, ok := ports[p.v]; ok && p.field != "port" {
			bad(p.field, "%d is %s's port too", p.v, other)
		}
		if p.field != "port" { // UDP and TCP ports do not clash
			ports[p.v] = p.field
		}
	}
}
