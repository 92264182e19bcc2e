package webhook

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Names the webhook gives and reads.
const (
	// ContainerName is the sidecar's container: a pod that has one is
	// injected already and left alone.
	ContainerName = "relay"
	// OptOutKey is the pod annotation ("false") and the namespace label
	// ("disabled") that keep the webhook away.
	OptOutKey = "relay.liqo-relay.io/inject"
	// InjectedAnnotation carries the relay's name on an injected pod.
	InjectedAnnotation = "relay.liqo-relay.io/relay"
	// ConfigAnnotation carries the relay's configuration file, which a
	// downward API volume projects into the relay container.
	ConfigAnnotation = "relay.liqo-relay.io/config"
	configVolume     = "relay-config"
	tunVolume        = "relay-tun"
	configDir        = "/etc/relay"
	configFile       = "relay.yaml"
	tunDevice        = "/dev/net/tun"
	// nonRootUser is the image's user (docs/image.md).
	nonRootUser = 65532
)

// PatchOp is one RFC 6902 JSON patch operation.
type PatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// Skip says why a pod gets no sidecar; "" means it gets one.
func Skip(pod *corev1.Pod, nsLabels map[string]string) string {
	switch {
	case pod.Labels[ComponentLabel] != ComponentGateway:
		return "not a Liqo gateway pod"
	case nsLabels[OptOutKey] == "disabled":
		return "namespace opted out (label " + OptOutKey + "=disabled)"
	case pod.Annotations[OptOutKey] == "false":
		return "pod opted out (annotation " + OptOutKey + "=false)"
	case hasContainer(pod, ContainerName):
		return "already injected (container " + ContainerName + ")"
	}
	return ""
}

func hasContainer(pod *corev1.Pod, name string) bool {
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			return true
		}
	}
	return false
}

// Mutate returns the patch that adds the sidecar of relay name to pod. It
// appends only: Liqo's containers and everything else stay as they are.
func (s *Sidecar) Mutate(pod *corev1.Pod, name string) ([]PatchOp, error) {
	for _, v := range pod.Spec.Volumes {
		if v.Name == configVolume || v.Name == tunVolume {
			return nil, fmt.Errorf("pod already has a volume named %s but no %s container", v.Name, ContainerName)
		}
	}
	cfg, err := s.RelayConfig(name, ConsumerID(pod))
	if err != nil {
		return nil, err
	}
	var ops []PatchOp
	ann := map[string]string{InjectedAnnotation: name, ConfigAnnotation: string(cfg)}
	if pod.Annotations == nil {
		ops = append(ops, PatchOp{"add", "/metadata/annotations", ann})
	} else {
		for _, k := range []string{InjectedAnnotation, ConfigAnnotation} {
			ops = append(ops, PatchOp{"add", "/metadata/annotations/" + escape(k), ann[k]})
		}
	}
	ha := LeaderElection(pod)
	ops = append(ops, PatchOp{"add", "/spec/containers/-", s.container(ha)})
	vols := s.volumes(ha)
	if pod.Spec.Volumes == nil {
		ops = append(ops, PatchOp{"add", "/spec/volumes", vols})
	} else {
		for _, v := range vols {
			ops = append(ops, PatchOp{"add", "/spec/volumes/-", v})
		}
	}
	return ops, nil
}

// escape escapes a JSON pointer token (RFC 6901).
func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// container is the relay container; with ha, it follows the pod's
// active label (ha.go).
func (s *Sidecar) container(ha bool) corev1.Container {
	probe := func(path string) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("relay-metrics")}},
			PeriodSeconds:    s.Probes.PeriodSeconds,
			FailureThreshold: s.Probes.FailureThreshold,
		}
	}
	fieldEnv := func(name, path string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
	}
	c := corev1.Container{
		Name:            ContainerName,
		Image:           s.Image,
		ImagePullPolicy: s.ImagePullPolicy,
		Args:            []string{"run", "--kubernetes", "-c", configDir + "/" + configFile},
		Env:             []corev1.EnvVar{fieldEnv("POD_NAMESPACE", "metadata.namespace"), fieldEnv("POD_NAME", "metadata.name")},
		Ports: []corev1.ContainerPort{
			{Name: "relay-wg", ContainerPort: s.Port, Protocol: corev1.ProtocolUDP},
			{Name: "relay-metrics", ContainerPort: s.MetricsPort, Protocol: corev1.ProtocolTCP},
		},
		Resources:      s.Resources,
		LivenessProbe:  probe("/healthz"),
		ReadinessProbe: probe("/readyz"),
		VolumeMounts:   []corev1.VolumeMount{{Name: configVolume, MountPath: configDir, ReadOnly: true}},
	}
	if ha {
		c.Args = append(c.Args, "--standby-labels", configDir+"/"+labelsFile)
	}
	if s.DNS.Enabled {
		// The responder answers on the pod's address, which only the pod
		// knows: the kubelet expands $(POD_IP) in the arguments.
		c.Env = append(c.Env, fieldEnv("POD_IP", "status.podIP"))
		c.Args = append(c.Args, s.DNS.dnsListenArg())
		c.Ports = append(c.Ports,
			corev1.ContainerPort{Name: dnsPortName, ContainerPort: s.DNS.Port, Protocol: corev1.ProtocolUDP},
			corev1.ContainerPort{Name: dnsTCPPortName, ContainerPort: s.DNS.Port, Protocol: corev1.ProtocolTCP})
	}
	no, yes := false, true
	if s.Mode == ModeTUN {
		// TUN needs CAP_NET_ADMIN in the effective set, which Kubernetes
		// gives only to root (no ambient capabilities, docs/image.md), and
		// the device, which NET_ADMIN alone does not bring.
		root := int64(0)
		c.SecurityContext = &corev1.SecurityContext{
			RunAsUser:                &root,
			RunAsNonRoot:             &no,
			AllowPrivilegeEscalation: &no,
			ReadOnlyRootFilesystem:   &yes,
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"NET_ADMIN"}},
		}
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: tunVolume, MountPath: tunDevice})
	} else {
		user := int64(nonRootUser)
		c.SecurityContext = &corev1.SecurityContext{
			RunAsUser:                &user,
			RunAsGroup:               &user,
			RunAsNonRoot:             &yes,
			AllowPrivilegeEscalation: &no,
			ReadOnlyRootFilesystem:   &yes,
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		}
	}
	return c
}

func (s *Sidecar) volumes(ha bool) []corev1.Volume {
	items := []corev1.DownwardAPIVolumeFile{{
		Path:     configFile,
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['" + ConfigAnnotation + "']"},
	}}
	if ha {
		items = append(items, corev1.DownwardAPIVolumeFile{Path: labelsFile, FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}})
	}
	vols := []corev1.Volume{{
		Name:         configVolume,
		VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: items}},
	}}
	if s.Mode == ModeTUN {
		t := corev1.HostPathCharDev
		vols = append(vols, corev1.Volume{
			Name:         tunVolume,
			VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: tunDevice, Type: &t}},
		})
	}
	return vols
}
