package podrunner

import (
	"fmt"
	"os"
	"path"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// defaultFileMode is the mode of projected files without one, the API's
// default (0644).
const defaultFileMode = 0o644

// File is one file of a secret, configMap, downwardAPI or projected
// volume.
type File struct {
	Data []byte
	Mode os.FileMode
}

// TokenFunc returns a service account token of pod for audience (the API
// server's when empty) that expires after expirationSeconds.
type TokenFunc func(audience string, expirationSeconds int64) (string, error)

// Projection computes the files of volume v of pod, by path relative to
// the volume's root. Secret, configMap and downward API objects come from
// objs, tokens from tokens. It returns nil, nil for a volume it does not
// project (emptyDir, hostPath).
func Projection(pod *corev1.Pod, v *corev1.Volume, info PodInfo, objs Objects, tokens TokenFunc) (map[string]File, error) {
	files := map[string]File{}
	switch {
	case v.Secret != nil:
		s := v.Secret
		err := projectSecret(files, pod.Namespace, s.SecretName, s.Items, s.Optional, fileMode(s.DefaultMode), objs)
		return files, err
	case v.ConfigMap != nil:
		c := v.ConfigMap
		err := projectConfigMap(files, pod.Namespace, c.Name, c.Items, c.Optional, fileMode(c.DefaultMode), objs)
		return files, err
	case v.DownwardAPI != nil:
		err := projectDownward(files, pod, info, v.DownwardAPI.Items, fileMode(v.DownwardAPI.DefaultMode))
		return files, err
	case v.Projected != nil:
		mode := fileMode(v.Projected.DefaultMode)
		for i, src := range v.Projected.Sources {
			var err error
			switch {
			case src.Secret != nil:
				err = projectSecret(files, pod.Namespace, src.Secret.Name, src.Secret.Items, src.Secret.Optional, mode, objs)
			case src.ConfigMap != nil:
				err = projectConfigMap(files, pod.Namespace, src.ConfigMap.Name, src.ConfigMap.Items, src.ConfigMap.Optional, mode, objs)
			case src.DownwardAPI != nil:
				err = projectDownward(files, pod, info, src.DownwardAPI.Items, mode)
			case src.ServiceAccountToken != nil:
				t := src.ServiceAccountToken
				exp := int64(3600)
				if t.ExpirationSeconds != nil {
					exp = *t.ExpirationSeconds
				}
				var tok string
				if tok, err = tokens(t.Audience, exp); err == nil {
					err = put(files, t.Path, File{Data: []byte(tok), Mode: mode})
				}
			}
			if err != nil {
				return nil, fmt.Errorf("projected.sources[%d]: %w", i, err)
			}
		}
		return files, nil
	}
	return nil, nil
}

func fileMode(m *int32) os.FileMode {
	if m == nil {
		return defaultFileMode
	}
	return os.FileMode(*m) & os.ModePerm
}

func itemMode(m *int32, def os.FileMode) os.FileMode {
	if m == nil {
		return def
	}
	return os.FileMode(*m) & os.ModePerm
}

// put adds a file at p, refusing paths that leave the volume.
func put(files map[string]File, p string, f File) error {
	clean := path.Clean(p)
	if p == "" || path.IsAbs(p) || strings.HasPrefix(clean, "..") {
		return fmt.Errorf("path %q: must be relative and inside the volume (no leading ..)", p)
	}
	files[clean] = f
	return nil
}

func projectItems(files map[string]File, kind, name string, data map[string][]byte, items []corev1.KeyToPath, optional *bool, mode os.FileMode) error {
	if len(items) == 0 {
		for _, k := range sortedKeys(data) {
			if err := put(files, k, File{Data: data[k], Mode: mode}); err != nil {
				return fmt.Errorf("%s %q: %w", kind, name, err)
			}
		}
		return nil
	}
	for _, it := range items {
		d, ok := data[it.Key]
		if !ok {
			if isTrue(optional) {
				continue
			}
			return fmt.Errorf("%s %q has no key %q", kind, name, it.Key)
		}
		if err := put(files, it.Path, File{Data: d, Mode: itemMode(it.Mode, mode)}); err != nil {
			return fmt.Errorf("%s %q: %w", kind, name, err)
		}
	}
	return nil
}

func projectSecret(files map[string]File, ns, name string, items []corev1.KeyToPath, optional *bool, mode os.FileMode, objs Objects) error {
	s, err := objs.Secret(ns, name)
	if err != nil {
		if apierrors.IsNotFound(err) && isTrue(optional) {
			return nil
		}
		return fmt.Errorf("secret %q: %w", name, err)
	}
	return projectItems(files, "secret", name, s.Data, items, optional, mode)
}

func projectConfigMap(files map[string]File, ns, name string, items []corev1.KeyToPath, optional *bool, mode os.FileMode, objs Objects) error {
	cm, err := objs.ConfigMap(ns, name)
	if err != nil {
		if apierrors.IsNotFound(err) && isTrue(optional) {
			return nil
		}
		return fmt.Errorf("configmap %q: %w", name, err)
	}
	data := make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	return projectItems(files, "configmap", name, data, items, optional, mode)
}

func projectDownward(files map[string]File, pod *corev1.Pod, info PodInfo, items []corev1.DownwardAPIVolumeFile, mode os.FileMode) error {
	for _, it := range items {
		var v string
		var err error
		switch {
		case it.FieldRef != nil:
			v, err = FieldRef(pod, info, it.FieldRef.FieldPath, false)
		case it.ResourceFieldRef != nil:
			c := findContainer(pod, it.ResourceFieldRef.ContainerName)
			if c == nil {
				return fmt.Errorf("downwardAPI %q: no container %q", it.Path, it.ResourceFieldRef.ContainerName)
			}
			v, err = ResourceFieldRef(c, info, it.ResourceFieldRef.Resource, it.ResourceFieldRef.Divisor)
		default:
			err = fmt.Errorf("neither fieldRef nor resourceFieldRef")
		}
		if err != nil {
			return fmt.Errorf("downwardAPI %q: %w", it.Path, err)
		}
		if err := put(files, it.Path, File{Data: []byte(v), Mode: itemMode(it.Mode, mode)}); err != nil {
			return fmt.Errorf("downwardAPI: %w", err)
		}
	}
	return nil
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
