package podrunner

import (
	"fmt"
	"net"
	"path"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// defaultPath is the PATH of a container whose spec sets none, since the
// runner has no image configuration to take it from.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// masterNamespace and masterService name the Service whose variables
// (KUBERNETES_SERVICE_HOST, ...) every container gets, as in-cluster
// clients need them.
const (
	masterNamespace = "default"
	masterService   = "kubernetes"
)

// envList is an ordered environment in which a later Set replaces the
// value but keeps the first position.
type envList struct {
	names []string
	vals  map[string]string
}

func newEnvList() *envList { return &envList{vals: map[string]string{}} }

func (e *envList) Set(k, v string) {
	if _, ok := e.vals[k]; !ok {
		e.names = append(e.names, k)
	}
	e.vals[k] = v
}

func (e *envList) Get(k string) (string, bool) {
	v, ok := e.vals[k]
	return v, ok
}

func (e *envList) List() []string {
	out := make([]string, 0, len(e.names))
	for _, k := range e.names {
		out = append(out, k+"="+e.vals[k])
	}
	return out
}

// ContainerEnv builds container c's environment as NAME=value: defaults
// (PATH, HOME, HOSTNAME), envFrom, env (with $(VAR) expansion over what
// precedes and the service variables), then the service variables that
// nothing overrides. An error names the reference that failed; the kubelet
// reports it as CreateContainerConfigError and retries.
func ContainerEnv(pod *corev1.Pod, c *corev1.Container, info PodInfo, objs Objects) ([]string, error) {
	svc, err := serviceEnv(pod, objs)
	if err != nil {
		return nil, err
	}
	env := newEnvList()
	env.Set("PATH", defaultPath)
	env.Set("HOME", "/root")
	env.Set("HOSTNAME", info.Hostname)
	for i, ef := range c.EnvFrom {
		data, err := envFromData(pod.Namespace, ef, objs)
		if err != nil {
			return nil, fmt.Errorf("envFrom[%d]: %w", i, err)
		}
		keys := make([]string, 0, len(data))
		for k := range data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if k == "" || strings.Contains(k, "=") {
				continue // not a variable name; the kubelet skips it too
			}
			env.Set(ef.Prefix+k, data[k])
		}
	}
	lookup := func(name string) (string, bool) {
		if v, ok := env.Get(name); ok {
			return v, true
		}
		v, ok := svc.Get(name)
		return v, ok
	}
	for _, ev := range c.Env {
		if ev.ValueFrom == nil {
			env.Set(ev.Name, Expand(ev.Value, lookup))
			continue
		}
		v, ok, err := envValueFrom(pod, c, info, objs, ev.ValueFrom)
		if err != nil {
			return nil, fmt.Errorf("env %q: %w", ev.Name, err)
		}
		if ok {
			env.Set(ev.Name, v)
		}
	}
	for _, k := range svc.names {
		if _, ok := env.Get(k); !ok {
			env.Set(k, svc.vals[k])
		}
	}
	return env.List(), nil
}

// ContainerArgv returns command+args of c with $(VAR) expanded over env,
// or, when c has no command, the image's entrypoint from images followed
// by the expanded args. A mapped image stands for one program: its
// command's program runs as the image's binary, wherever it would be
// (images' manifests name the program inside the image, Liqo's command
// ["/usr/bin/liqo-controller-manager"]; a host program of the same path,
// such as Debian's /usr/bin/webhook, must not take its place). A shell (sh,
// bash) is the one exception: it runs from the host root, its script
// stands for what the image would run. found says whether a program is in
// the container's root and PATH, for the shell.
func ContainerArgv(c *corev1.Container, images Images, env []string, found func(program string) bool) ([]string, error) {
	lookup := envLookup(env)
	var argv []string
	bin, mapped := images.Entrypoint(c.Image)
	if len(c.Command) > 0 {
		for _, a := range c.Command {
			argv = append(argv, Expand(a, lookup))
		}
		if mapped && !(isShell(argv[0]) && found(argv[0])) {
			argv[0] = bin
		}
	} else {
		if !mapped {
			return nil, fmt.Errorf("image %q is not in the image map (--images) and the container has no command", c.Image)
		}
		argv = append(argv, bin)
	}
	for _, a := range c.Args {
		argv = append(argv, Expand(a, lookup))
	}
	return argv, nil
}

// isShell reports whether program names a shell.
func isShell(program string) bool {
	switch path.Base(program) {
	case "sh", "bash":
		return true
	}
	return false
}

func envFromData(ns string, ef corev1.EnvFromSource, objs Objects) (map[string]string, error) {
	switch {
	case ef.ConfigMapRef != nil:
		cm, err := objs.ConfigMap(ns, ef.ConfigMapRef.Name)
		if err != nil {
			if apierrors.IsNotFound(err) && isTrue(ef.ConfigMapRef.Optional) {
				return nil, nil
			}
			return nil, fmt.Errorf("configmap %q: %w", ef.ConfigMapRef.Name, err)
		}
		out := make(map[string]string, len(cm.Data)+len(cm.BinaryData))
		for k, v := range cm.BinaryData {
			out[k] = string(v)
		}
		for k, v := range cm.Data {
			out[k] = v
		}
		return out, nil
	case ef.SecretRef != nil:
		s, err := objs.Secret(ns, ef.SecretRef.Name)
		if err != nil {
			if apierrors.IsNotFound(err) && isTrue(ef.SecretRef.Optional) {
				return nil, nil
			}
			return nil, fmt.Errorf("secret %q: %w", ef.SecretRef.Name, err)
		}
		out := make(map[string]string, len(s.Data))
		for k, v := range s.Data {
			out[k] = string(v)
		}
		return out, nil
	}
	return nil, nil
}

// envValueFrom resolves one valueFrom. ok is false when an optional
// reference is missing and the variable is left out.
func envValueFrom(pod *corev1.Pod, c *corev1.Container, info PodInfo, objs Objects, src *corev1.EnvVarSource) (string, bool, error) {
	switch {
	case src.FieldRef != nil:
		v, err := FieldRef(pod, info, src.FieldRef.FieldPath, true)
		return v, err == nil, err
	case src.ResourceFieldRef != nil:
		target := c
		if n := src.ResourceFieldRef.ContainerName; n != "" && n != c.Name {
			if target = findContainer(pod, n); target == nil {
				return "", false, fmt.Errorf("resourceFieldRef: no container %q", n)
			}
		}
		v, err := ResourceFieldRef(target, info, src.ResourceFieldRef.Resource, src.ResourceFieldRef.Divisor)
		return v, err == nil, err
	case src.ConfigMapKeyRef != nil:
		ref := src.ConfigMapKeyRef
		cm, err := objs.ConfigMap(pod.Namespace, ref.Name)
		if err != nil {
			if apierrors.IsNotFound(err) && isTrue(ref.Optional) {
				return "", false, nil
			}
			return "", false, fmt.Errorf("configmap %q: %w", ref.Name, err)
		}
		if v, ok := cm.Data[ref.Key]; ok {
			return v, true, nil
		}
		if v, ok := cm.BinaryData[ref.Key]; ok {
			return string(v), true, nil
		}
		if isTrue(ref.Optional) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("configmap %q has no key %q", ref.Name, ref.Key)
	case src.SecretKeyRef != nil:
		ref := src.SecretKeyRef
		s, err := objs.Secret(pod.Namespace, ref.Name)
		if err != nil {
			if apierrors.IsNotFound(err) && isTrue(ref.Optional) {
				return "", false, nil
			}
			return "", false, fmt.Errorf("secret %q: %w", ref.Name, err)
		}
		if v, ok := s.Data[ref.Key]; ok {
			return string(v), true, nil
		}
		if isTrue(ref.Optional) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("secret %q has no key %q", ref.Name, ref.Key)
	}
	return "", false, fmt.Errorf("unsupported valueFrom")
}

func findContainer(pod *corev1.Pod, name string) *corev1.Container {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	return nil
}

func isTrue(b *bool) bool { return b != nil && *b }

// serviceEnv returns the Service variables the kubelet gives a container
// of pod: the master Service's always, those of the pod's namespace unless
// enableServiceLinks is false.
func serviceEnv(pod *corev1.Pod, objs Objects) (*envList, error) {
	byName := map[string]*corev1.Service{}
	if pod.Spec.EnableServiceLinks == nil || *pod.Spec.EnableServiceLinks {
		list, err := objs.Services(pod.Namespace)
		if err != nil {
			return nil, fmt.Errorf("listing the services of namespace %s: %w", pod.Namespace, err)
		}
		for _, s := range list {
			byName[s.Name] = s
		}
	}
	if _, ok := byName[masterService]; !ok {
		list, err := objs.Services(masterNamespace)
		if err != nil {
			return nil, fmt.Errorf("listing the services of namespace %s: %w", masterNamespace, err)
		}
		for _, s := range list {
			if s.Name == masterService {
				byName[masterService] = s
			}
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	env := newEnvList()
	for _, n := range names {
		addServiceVars(env, byName[n])
	}
	return env, nil
}

// addServiceVars adds NAME_SERVICE_HOST, NAME_SERVICE_PORT[_PORTNAME] and
// the Docker link variables of s, as the kubelet does.
func addServiceVars(env *envList, s *corev1.Service) {
	ip := s.Spec.ClusterIP
	if ip == "" || ip == corev1.ClusterIPNone || len(s.Spec.Ports) == 0 {
		return
	}
	prefix := envName(s.Name)
	env.Set(prefix+"_SERVICE_HOST", ip)
	env.Set(prefix+"_SERVICE_PORT", strconv.Itoa(int(s.Spec.Ports[0].Port)))
	for _, p := range s.Spec.Ports {
		if p.Name != "" {
			env.Set(prefix+"_SERVICE_PORT_"+envName(p.Name), strconv.Itoa(int(p.Port)))
		}
	}
	for i, p := range s.Spec.Ports {
		proto := string(p.Protocol)
		if proto == "" {
			proto = string(corev1.ProtocolTCP)
		}
		url := strings.ToLower(proto) + "://" + net.JoinHostPort(ip, strconv.Itoa(int(p.Port)))
		if i == 0 {
			env.Set(prefix+"_PORT", url)
		}
		pp := fmt.Sprintf("%s_PORT_%d_%s", prefix, p.Port, strings.ToUpper(proto))
		env.Set(pp, url)
		env.Set(pp+"_PROTO", strings.ToLower(proto))
		env.Set(pp+"_PORT", strconv.Itoa(int(p.Port)))
		env.Set(pp+"_ADDR", ip)
	}
}

func envName(s string) string { return strings.ToUpper(strings.ReplaceAll(s, "-", "_")) }
