package podrunner

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ErrUnsupported marks a pod spec the runner cannot honour. The errors
// Validate returns wrap it.
var ErrUnsupported = errors.New("not supported by the pod runner")

// unsupported formats "<what> are not supported by the pod runner": the
// format ends with the verb ("volumes are", "true is").
func unsupported(format string, args ...any) error {
	return fmt.Errorf("%s %w", fmt.Sprintf(format, args...), ErrUnsupported)
}

// Validate returns every reason why the runner cannot run pod, each naming
// the field (and the volume or container) it is about, in spec order. A
// pod with none runs.
func Validate(pod *corev1.Pod, images Images) []error {
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	s := &pod.Spec
	if len(s.EphemeralContainers) > 0 {
		add(unsupported("spec.ephemeralContainers: ephemeral containers are"))
	}
	if s.HostPID {
		add(unsupported("spec.hostPID: true is"))
	}
	if s.HostIPC {
		add(unsupported("spec.hostIPC: true is"))
	}
	if s.HostUsers != nil && !*s.HostUsers {
		add(unsupported("spec.hostUsers: false (user namespaces) is"))
	}
	if isTrue(s.ShareProcessNamespace) {
		add(unsupported("spec.shareProcessNamespace: true is"))
	}
	if s.RuntimeClassName != nil && *s.RuntimeClassName != "" {
		add(unsupported("spec.runtimeClassName %q: runtime classes are", *s.RuntimeClassName))
	}
	if s.OS != nil && s.OS.Name != "" && s.OS.Name != corev1.Linux {
		add(unsupported("spec.os.name %q: operating systems other than linux are", s.OS.Name))
	}
	if len(s.ResourceClaims) > 0 {
		add(unsupported("spec.resourceClaims: dynamic resource allocation is"))
	}
	if s.HostnameOverride != nil && *s.HostnameOverride != "" {
		add(unsupported("spec.hostnameOverride is"))
	}
	if s.DNSPolicy == corev1.DNSNone && s.DNSConfig == nil {
		add(unsupported("spec.dnsPolicy None without spec.dnsConfig is"))
	}
	volumes := map[string]*corev1.Volume{}
	for i := range s.Volumes {
		v := &s.Volumes[i]
		volumes[v.Name] = v
		if err := validateVolume(v); err != nil {
			add(fmt.Errorf("volume %q (spec.volumes[%d]): %w", v.Name, i, err))
		}
	}
	for i := range s.InitContainers {
		c := &s.InitContainers[i]
		path := fmt.Sprintf("spec.initContainers[%d]", i)
		if c.RestartPolicy != nil {
			add(fmt.Errorf("init container %q (%s.restartPolicy): sidecar containers are %w", c.Name, path, ErrUnsupported))
		}
		for _, err := range validateContainer(pod, c, images, volumes) {
			add(fmt.Errorf("init container %q (%s): %w", c.Name, path, err))
		}
	}
	for i := range s.Containers {
		c := &s.Containers[i]
		path := fmt.Sprintf("spec.containers[%d]", i)
		if c.RestartPolicy != nil || len(c.RestartPolicyRules) > 0 {
			add(fmt.Errorf("container %q (%s.restartPolicy): per-container restart policies are %w", c.Name, path, ErrUnsupported))
		}
		for _, err := range validateContainer(pod, c, images, volumes) {
			add(fmt.Errorf("container %q (%s): %w", c.Name, path, err))
		}
	}
	return errs
}

// validateVolume accepts the volume types the runner materialises.
func validateVolume(v *corev1.Volume) error {
	switch {
	case v.EmptyDir != nil:
		if m := v.EmptyDir.Medium; m != corev1.StorageMediumDefault && m != corev1.StorageMediumMemory {
			return unsupported("emptyDir medium %q is", m)
		}
	case v.Secret != nil, v.ConfigMap != nil, v.DownwardAPI != nil:
		if v.DownwardAPI != nil {
			for j, it := range v.DownwardAPI.Items {
				if err := validateDownwardItem(it); err != nil {
					return fmt.Errorf("downwardAPI.items[%d]: %w", j, err)
				}
			}
		}
	case v.HostPath != nil:
	case v.Projected != nil:
		for j, src := range v.Projected.Sources {
			switch {
			case src.ServiceAccountToken != nil, src.ConfigMap != nil, src.Secret != nil:
			case src.DownwardAPI != nil:
				for k, it := range src.DownwardAPI.Items {
					if err := validateDownwardItem(it); err != nil {
						return fmt.Errorf("projected.sources[%d].downwardAPI.items[%d]: %w", j, k, err)
					}
				}
			case src.ClusterTrustBundle != nil:
				return unsupported("projected.sources[%d]: clusterTrustBundle projections are", j)
			case src.PodCertificate != nil:
				return unsupported("projected.sources[%d]: podCertificate projections are", j)
			default:
				return unsupported("projected.sources[%d]: this projection is", j)
			}
		}
	default:
		return unsupported("%s volumes are", volumeType(&v.VolumeSource))
	}
	return nil
}

func validateDownwardItem(it corev1.DownwardAPIVolumeFile) error {
	if it.FieldRef != nil {
		p := it.FieldRef.FieldPath
		if _, ok := subscript(p, "metadata.labels"); ok {
			return nil
		}
		if _, ok := subscript(p, "metadata.annotations"); ok {
			return nil
		}
		switch p {
		case "metadata.name", "metadata.namespace", "metadata.uid", "metadata.labels", "metadata.annotations",
			"spec.nodeName", "spec.serviceAccountName", "status.podIP", "status.podIPs", "status.hostIP", "status.hostIPs":
			return nil
		}
		return unsupported("fieldRef %q is", p)
	}
	return nil
}

// volumeType names the volume source that is set, by its JSON name
// ("persistentVolumeClaim"), or "unknown".
func volumeType(vs *corev1.VolumeSource) string {
	v := reflect.ValueOf(vs).Elem()
	for i := 0; i < v.NumField(); i++ {
		if f := v.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
			return name
		}
	}
	return "unknown"
}

func validateContainer(pod *corev1.Pod, c *corev1.Container, images Images, volumes map[string]*corev1.Volume) []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, unsupported(format, args...)) }
	if len(c.Command) == 0 {
		if _, ok := images.Entrypoint(c.Image); !ok {
			errs = append(errs, fmt.Errorf("image %q is not in the image map (--images) and the container has no command, which is %w", c.Image, ErrUnsupported))
		}
	}
	if c.Stdin || c.TTY {
		add("stdin and tty (attach) are")
	}
	if len(c.VolumeDevices) > 0 {
		add("volumeDevices are")
	}
	for j, p := range c.Ports {
		if p.HostPort != 0 && !pod.Spec.HostNetwork {
			add("ports[%d].hostPort %d: host ports are", j, p.HostPort)
		}
	}
	for j, m := range c.VolumeMounts {
		if m.MountPropagation != nil && *m.MountPropagation == corev1.MountPropagationBidirectional {
			add("volumeMounts[%d] (%q): mountPropagation Bidirectional is", j, m.Name)
		}
		if m.RecursiveReadOnly != nil && *m.RecursiveReadOnly == corev1.RecursiveReadOnlyEnabled {
			add("volumeMounts[%d] (%q): recursiveReadOnly Enabled is", j, m.Name)
		}
		if len(m.BindMountOptions) > 0 {
			add("volumeMounts[%d] (%q): bindMountOptions are", j, m.Name)
		}
		if _, ok := volumes[m.Name]; !ok {
			errs = append(errs, fmt.Errorf("volumeMounts[%d]: no volume %q in the pod", j, m.Name))
		}
	}
	for j, ev := range c.Env {
		if ev.ValueFrom == nil {
			continue
		}
		switch src := ev.ValueFrom; {
		case src.FileKeyRef != nil:
			add("env[%d] (%q): fileKeyRef is", j, ev.Name)
		case src.FieldRef != nil:
			p := src.FieldRef.FieldPath
			if p == "metadata.labels" || p == "metadata.annotations" || validateDownwardItem(corev1.DownwardAPIVolumeFile{FieldRef: src.FieldRef}) != nil {
				add("env[%d] (%q): fieldRef %q is", j, ev.Name, p)
			}
		}
	}
	if l := c.Lifecycle; l != nil {
		if l.PostStart != nil {
			add("lifecycle.postStart: postStart hooks are")
		}
		if l.PreStop != nil && (l.PreStop.HTTPGet != nil || l.PreStop.TCPSocket != nil) {
			add("lifecycle.preStop: only exec and sleep preStop hooks are supported; httpGet and tcpSocket are")
		}
		if l.StopSignal != nil {
			if _, err := parseSignal(string(*l.StopSignal)); err != nil {
				add("lifecycle.stopSignal %q is", *l.StopSignal)
			}
		}
	}
	return errs
}
