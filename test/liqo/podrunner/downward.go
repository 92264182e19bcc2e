package podrunner

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// PodInfo is what the downward API reads beside the pod object: the
// addresses the runner gave it, which its status may not show yet, and the
// node's allocatable resources, which stand for limits a container does not
// set.
type PodInfo struct {
	// Hostname is the pod's host name (HOSTNAME, /etc/hostname).
	Hostname    string
	PodIPs      []string
	HostIPs     []string
	Allocatable corev1.ResourceList
}

// FieldRef resolves a downward API field path (metadata.name,
// metadata.labels['k'], status.podIP, ...) of pod. forEnv selects the
// environment form: metadata.labels and metadata.annotations as a whole
// are volume-only, status.podIPs and status.hostIPs are comma-joined.
func FieldRef(pod *corev1.Pod, info PodInfo, path string, forEnv bool) (string, error) {
	if k, ok := subscript(path, "metadata.labels"); ok {
		return pod.Labels[k], nil
	}
	if k, ok := subscript(path, "metadata.annotations"); ok {
		return pod.Annotations[k], nil
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels", "metadata.annotations":
		if forEnv {
			return "", fmt.Errorf("field path %q is for downwardAPI volumes only", path)
		}
		m := pod.Labels
		if path == "metadata.annotations" {
			m = pod.Annotations
		}
		return formatMap(m), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP":
		return first(info.PodIPs), nil
	case "status.podIPs":
		return strings.Join(info.PodIPs, ","), nil
	case "status.hostIP":
		return first(info.HostIPs), nil
	case "status.hostIPs":
		return strings.Join(info.HostIPs, ","), nil
	}
	return "", fmt.Errorf("unsupported field path %q", path)
}

// subscript parses prefix['key'] and returns key.
func subscript(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix+"['")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, "']")
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// formatMap renders labels or annotations as the kubelet writes them into
// a downwardAPI volume: key="value" lines, sorted by key, values quoted
// with Go escapes.
func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, strconv.Quote(m[k]))
	}
	return b.String()
}

// ResourceFieldRef resolves limits.cpu, requests.memory, ... of container c
// in units of divisor (1 when zero), rounding up as the kubelet does. An
// unset limit reads the node's allocatable amount; an unset request reads 0.
func ResourceFieldRef(c *corev1.Container, info PodInfo, resourceName string, divisor resource.Quantity) (string, error) {
	kind, name, ok := strings.Cut(resourceName, ".")
	if !ok || (kind != "limits" && kind != "requests") {
		return "", fmt.Errorf("unsupported resource %q", resourceName)
	}
	rn := corev1.ResourceName(name)
	switch rn {
	case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
	default:
		if !strings.HasPrefix(name, "hugepages-") {
			return "", fmt.Errorf("unsupported resource %q", resourceName)
		}
	}
	var q resource.Quantity
	var set bool
	if kind == "limits" {
		q, set = c.Resources.Limits[rn]
		if !set {
			q, set = info.Allocatable[rn]
		}
	} else {
		q, set = c.Resources.Requests[rn]
	}
	if !set {
		return "0", nil
	}
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	if rn == corev1.ResourceCPU {
		return strconv.FormatInt(ceilDiv(q.MilliValue(), divisor.MilliValue()), 10), nil
	}
	return strconv.FormatInt(int64(math.Ceil(float64(q.Value())/float64(divisor.Value()))), 10), nil
}

func ceilDiv(a, b int64) int64 {
	if b <= 0 {
		return 0
	}
	return (a + b - 1) / b
}
