package podrunner

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func ptr[T any](v T) *T { return &v }

func testPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "app", UID: "0a1b2c3d-4e5f-6789-abcd-ef0123456789",
			Labels: map[string]string{"app": "web", "tier": "front"}, Annotations: map[string]string{"note": "a \"b\""}},
		Spec: corev1.PodSpec{NodeName: "node1", ServiceAccountName: "sa", RestartPolicy: corev1.RestartPolicyAlways,
			Containers: []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"/bin/sh"},
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}}}},
	}
}

func testObjects() mapObjects {
	return mapObjects{
		cms: map[string]*corev1.ConfigMap{
			"app/cfg": {Data: map[string]string{"mode": "fast", "bad=key": "x"}, BinaryData: map[string][]byte{"bin": []byte("b")}},
		},
		secrets: map[string]*corev1.Secret{"app/creds": {Data: map[string][]byte{"user": []byte("alice"), "pass": []byte("s3cret")}}},
		services: map[string][]*corev1.Service{
			"default": {{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: "default"},
				Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.1", Ports: []corev1.ServicePort{{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP}}}}},
			"app": {
				{ObjectMeta: metav1.ObjectMeta{Name: "my-db", Namespace: "app"},
					Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.9", Ports: []corev1.ServicePort{{Port: 5432}, {Name: "metrics", Port: 9187, Protocol: corev1.ProtocolUDP}}}},
				{ObjectMeta: metav1.ObjectMeta{Name: "headless", Namespace: "app"}, Spec: corev1.ServiceSpec{ClusterIP: "None", Ports: []corev1.ServicePort{{Port: 1}}}},
			},
		},
	}
}

func testInfo() PodInfo {
	return PodInfo{Hostname: "web", PodIPs: []string{"10.244.1.5"}, HostIPs: []string{"192.168.0.10"},
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")}}
}

func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

func TestContainerEnv(t *testing.T) {
	pod := testPod()
	c := &pod.Spec.Containers[0]
	c.EnvFrom = []corev1.EnvFromSource{
		{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}, Prefix: "CFG_"},
		{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}, Optional: ptr(true)}},
	}
	c.Env = []corev1.EnvVar{
		{Name: "GREETING", Value: "hello $(POD_NAME)"}, // POD_NAME is not defined yet: kept
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "WHO", Value: "$(POD_NAME).$(CFG_mode) $$(POD_NAME)"},
		{Name: "NS", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
		{Name: "UID", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.uid"}}},
		{Name: "TIER", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['tier']"}}},
		{Name: "NOTE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['note']"}}},
		{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
		{Name: "SA", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.serviceAccountName"}}},
		{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
		{Name: "POD_IPS", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIPs"}}},
		{Name: "HOST_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.hostIP"}}},
		{Name: "USER", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: "user"}}},
		{Name: "MODE", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Key: "mode"}}},
		{Name: "OPT", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Key: "nope", Optional: ptr(true)}}},
		{Name: "MEM_MI", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}}},
		{Name: "CPU_LIMIT", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"}}},
		{Name: "CPU_REQ_M", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "requests.cpu", Divisor: resource.MustParse("1m")}}},
		{Name: "MEM_REQ", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "requests.memory"}}},
		{Name: "MY_DB_SERVICE_HOST", Value: "overridden"},
	}
	env, err := ContainerEnv(pod, c, testInfo(), testObjects())
	if err != nil {
		t.Fatal(err)
	}
	got := envMap(env)
	want := map[string]string{
		"PATH": defaultPath, "HOME": "/root", "HOSTNAME": "web",
		"CFG_mode": "fast", "CFG_bin": "b",
		"GREETING": "hello $(POD_NAME)", "POD_NAME": "web", "WHO": "web.fast $(POD_NAME)",
		"NS": "app", "UID": string(pod.UID), "TIER": "front", "NOTE": `a "b"`, "NODE": "node1", "SA": "sa",
		"POD_IP": "10.244.1.5", "POD_IPS": "10.244.1.5", "HOST_IP": "192.168.0.10",
		"USER": "alice", "MODE": "fast",
		"MEM_MI": "64", "CPU_LIMIT": "2", "CPU_REQ_M": "250", "MEM_REQ": "0",
		"MY_DB_SERVICE_HOST":            "overridden",
		"MY_DB_SERVICE_PORT":            "5432",
		"MY_DB_SERVICE_PORT_METRICS":    "9187",
		"MY_DB_PORT":                    "tcp://10.96.0.9:5432",
		"MY_DB_PORT_5432_TCP":           "tcp://10.96.0.9:5432",
		"MY_DB_PORT_5432_TCP_PROTO":     "tcp",
		"MY_DB_PORT_5432_TCP_PORT":      "5432",
		"MY_DB_PORT_5432_TCP_ADDR":      "10.96.0.9",
		"MY_DB_PORT_9187_UDP":           "udp://10.96.0.9:9187",
		"MY_DB_PORT_9187_UDP_PROTO":     "udp",
		"MY_DB_PORT_9187_UDP_PORT":      "9187",
		"MY_DB_PORT_9187_UDP_ADDR":      "10.96.0.9",
		"KUBERNETES_SERVICE_HOST":       "10.96.0.1",
		"KUBERNETES_SERVICE_PORT":       "443",
		"KUBERNETES_SERVICE_PORT_HTTPS": "443",
		"KUBERNETES_PORT":               "tcp://10.96.0.1:443",
		"KUBERNETES_PORT_443_TCP":       "tcp://10.96.0.1:443",
		"KUBERNETES_PORT_443_TCP_PROTO": "tcp",
		"KUBERNETES_PORT_443_TCP_PORT":  "443",
		"KUBERNETES_PORT_443_TCP_ADDR":  "10.96.0.1",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected variable %s=%q", k, got[k])
		}
	}
	if len(env) != len(got) {
		t.Errorf("duplicate variables in %q", env)
	}
	// Order: defaults first, then envFrom, then env in spec order.
	if i, j := slices.Index(env, "PATH="+defaultPath), slices.Index(env, "POD_NAME=web"); i != 0 || j < 0 {
		t.Errorf("order: PATH at %d, POD_NAME at %d in %q", i, j, env)
	}
}

func TestContainerEnvServiceLinksOff(t *testing.T) {
	pod := testPod()
	pod.Spec.EnableServiceLinks = ptr(false)
	env, err := ContainerEnv(pod, &pod.Spec.Containers[0], testInfo(), testObjects())
	if err != nil {
		t.Fatal(err)
	}
	got := envMap(env)
	if got["KUBERNETES_SERVICE_HOST"] != "10.96.0.1" || got["KUBERNETES_SERVICE_PORT"] != "443" {
		t.Errorf("the master service's variables are missing: %q", env)
	}
	if _, ok := got["MY_DB_SERVICE_HOST"]; ok {
		t.Errorf("service links are off but MY_DB_SERVICE_HOST is set")
	}
}

func TestContainerEnvErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  corev1.EnvVar
		from *corev1.EnvFromSource
		want string
	}{
		{name: "missing secret", env: corev1.EnvVar{Name: "X", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "nope"}, Key: "k"}}},
			want: `env "X": secret "nope"`},
		{name: "missing key", env: corev1.EnvVar{Name: "X", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: "k"}}},
			want: `env "X": secret "creds" has no key "k"`},
		{name: "missing configmap", env: corev1.EnvVar{Name: "Y", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "nope"}, Key: "k"}}},
			want: `env "Y": configmap "nope"`},
		{name: "missing envFrom", from: &corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "nope"}}},
			want: `envFrom[0]: configmap "nope"`},
		{name: "volume-only field", env: corev1.EnvVar{Name: "L", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}},
			want: `env "L": field path "metadata.labels" is for downwardAPI volumes only`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod()
			c := &pod.Spec.Containers[0]
			if tc.from != nil {
				c.EnvFrom = []corev1.EnvFromSource{*tc.from}
			} else {
				c.Env = []corev1.EnvVar{tc.env}
			}
			_, err := ContainerEnv(pod, c, testInfo(), testObjects())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestContainerArgv(t *testing.T) {
	images := Images{"ghcr.io/liqotech/gateway/wireguard": "/opt/bin/wireguard"}
	env := []string{"NAME=wg0", "PORT=51820"}
	for _, tc := range []struct {
		name    string
		c       corev1.Container
		want    []string
		wantErr string
	}{
		{name: "command and args", c: corev1.Container{Command: []string{"/bin/sh", "-c"}, Args: []string{"echo $(NAME) $$(NAME) $(UNSET)"}},
			want: []string{"/bin/sh", "-c", "echo wg0 $(NAME) $(UNSET)"}},
		{name: "image entrypoint", c: corev1.Container{Image: "ghcr.io/liqotech/gateway/wireguard:v1.2.0", Args: []string{"--port=$(PORT)"}},
			want: []string{"/opt/bin/wireguard", "--port=51820"}},
		{name: "digest", c: corev1.Container{Image: "ghcr.io/liqotech/gateway/wireguard@sha256:abcd"}, want: []string{"/opt/bin/wireguard"}},
		{name: "unknown image", c: corev1.Container{Image: "nginx:1.27"}, wantErr: `image "nginx:1.27" is not in the image map`},
		{name: "image program not on the host", c: corev1.Container{Image: "ghcr.io/liqotech/gateway/wireguard:v1.2.0",
			Command: []string{"/usr/bin/wireguard"}, Args: []string{"--mtu=1340"}},
			want: []string{"/opt/bin/wireguard", "--mtu=1340"}},
		{name: "host program of a mapped image", c: corev1.Container{Image: "ghcr.io/liqotech/gateway/wireguard:v1.2.0",
			Command: []string{"/usr/bin/webhook"}},
			want: []string{"/opt/bin/wireguard"}},
		{name: "host shell of a mapped image", c: corev1.Container{Image: "ghcr.io/liqotech/gateway/wireguard:v1.2.0",
			Command: []string{"/bin/sh", "-c", "true"}},
			want: []string{"/bin/sh", "-c", "true"}},
		{name: "unknown program of an unmapped image", c: corev1.Container{Image: "busybox", Command: []string{"/usr/bin/nope"}},
			want: []string{"/usr/bin/nope"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			found := func(p string) bool { return p == "/bin/sh" || p == "/usr/bin/webhook" }
			got, err := ContainerArgv(&tc.c, images, env, found)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("argv = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestImageName(t *testing.T) {
	for in, want := range map[string]string{
		"busybox":                                "busybox",
		"busybox:1.36":                           "busybox",
		"ghcr.io/liqotech/gateway:v1.2.0":        "ghcr.io/liqotech/gateway",
		"localhost:5000/x/y":                     "localhost:5000/x/y",
		"localhost:5000/x/y:tag":                 "localhost:5000/x/y",
		"ghcr.io/a/b:v1@sha256:0123456789abcdef": "ghcr.io/a/b",
		"ghcr.io/a/b@sha256:0123456789abcdef":    "ghcr.io/a/b",
	} {
		if got := ImageName(in); got != want {
			t.Errorf("ImageName(%q) = %q, want %q", in, got, want)
		}
	}
}
