package podrunner

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestValidate(t *testing.T) {
	images := Images{"ghcr.io/liqotech/gateway": "/bin/gateway"}
	for _, tc := range []struct {
		name   string
		mutate func(*corev1.Pod)
		want   []string // substrings, one per error, in order
	}{
		{name: "supported", mutate: func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{
				{Name: "e", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
				{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "x"}}},
				{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/dev/net/tun"}}},
				{Name: "p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}},
			}
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "gw", Image: "ghcr.io/liqotech/gateway:v1.2.0",
				VolumeMounts:   []corev1.VolumeMount{{Name: "e", MountPath: "/e"}},
				LivenessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{}}},
				Lifecycle:      &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{}}}})
			p.Spec.HostNetwork = true
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 80}}
		}},
		{name: "pvc", mutate: func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}}}
		}, want: []string{`volume "data" (spec.volumes[0]): persistentVolumeClaim volumes are not supported by the pod runner`}},
		{name: "pod-level fields", mutate: func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{}}
			p.Spec.HostPID = true
			p.Spec.HostIPC = true
			p.Spec.RuntimeClassName = ptr("gvisor")
			p.Spec.ShareProcessNamespace = ptr(true)
		}, want: []string{
			"spec.ephemeralContainers: ephemeral containers are not supported by the pod runner",
			"spec.hostPID: true is not supported by the pod runner",
			"spec.hostIPC: true is not supported by the pod runner",
			"spec.shareProcessNamespace: true is not supported",
			`spec.runtimeClassName "gvisor": runtime classes are not supported`,
		}},
		{name: "unknown image", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Command = nil
			p.Spec.Containers[0].Image = "nginx:1.27"
		}, want: []string{`container "main" (spec.containers[0]): image "nginx:1.27" is not in the image map (--images) and the container has no command, which is not supported by the pod runner`}},
		{name: "container fields", mutate: func(p *corev1.Pod) {
			c := &p.Spec.Containers[0]
			c.Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
			c.Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{}}}
			c.Stdin = true
		}, want: []string{
			`container "main" (spec.containers[0]): stdin and tty (attach) are not supported`,
			`ports[0].hostPort 8080: host ports are not supported`,
			`lifecycle.postStart: postStart hooks are not supported`,
		}},
		{name: "sidecar init container", mutate: func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "side", Command: []string{"true"}, RestartPolicy: ptr(corev1.ContainerRestartPolicyAlways)}}
		}, want: []string{`init container "side" (spec.initContainers[0].restartPolicy): sidecar containers are not supported`}},
		{name: "projection and volume kinds", mutate: func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{
				{Name: "ctb", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{}}}}}},
				{Name: "nfs", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{}}},
				{Name: "huge", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumHugePages}}},
			}
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "nfs", MountPath: "/x", MountPropagation: ptr(corev1.MountPropagationBidirectional)}}
		}, want: []string{
			`volume "ctb" (spec.volumes[0]): projected.sources[0]: clusterTrustBundle projections are not supported`,
			`volume "nfs" (spec.volumes[1]): nfs volumes are not supported`,
			`volume "huge" (spec.volumes[2]): emptyDir medium "HugePages" is not supported`,
			`container "main" (spec.containers[0]): volumeMounts[0] ("nfs"): mountPropagation Bidirectional is not supported`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod()
			tc.mutate(pod)
			errs := Validate(pod, images)
			if len(errs) != len(tc.want) {
				t.Fatalf("got %d errors %v, want %d", len(errs), errs, len(tc.want))
			}
			for i, err := range errs {
				if !strings.Contains(err.Error(), tc.want[i]) {
					t.Errorf("error %d = %q, want it to contain %q", i, err, tc.want[i])
				}
				if !errors.Is(err, ErrUnsupported) {
					t.Errorf("error %d does not wrap ErrUnsupported", i)
				}
			}
		})
	}
}
