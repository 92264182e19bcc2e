package podrunner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestProjection(t *testing.T) {
	pod := testPod()
	tokens := func(aud string, exp int64) (string, error) { return "token-for-" + aud, nil }
	for _, tc := range []struct {
		name    string
		v       corev1.VolumeSource
		want    map[string]File
		wantErr string
	}{
		{name: "secret all keys", v: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}},
			want: map[string]File{"user": {[]byte("alice"), 0o644}, "pass": {[]byte("s3cret"), 0o644}}},
		{name: "secret items and modes", v: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds", DefaultMode: ptr(int32(0o400)),
			Items: []corev1.KeyToPath{{Key: "user", Path: "a/u"}, {Key: "pass", Path: "p", Mode: ptr(int32(0o600))}}}},
			want: map[string]File{"a/u": {[]byte("alice"), 0o400}, "p": {[]byte("s3cret"), 0o600}}},
		{name: "optional secret missing", v: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "nope", Optional: ptr(true)}},
			want: map[string]File{}},
		{name: "secret missing", v: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "nope"}}, wantErr: `secret "nope"`},
		{name: "configmap item missing", v: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Items: []corev1.KeyToPath{{Key: "x", Path: "x"}}}},
			wantErr: `configmap "cfg" has no key "x"`},
		{name: "configmap escaping path", v: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Items: []corev1.KeyToPath{{Key: "mode", Path: "../x"}}}},
			wantErr: `must be relative`},
		{name: "downward", v: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
			{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}},
			{Path: "mem", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "main", Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}},
		}}},
			want: map[string]File{"labels": {[]byte("app=\"web\"\ntier=\"front\"\n"), 0o644}, "name": {[]byte("web"), 0o644}, "mem": {[]byte("64"), 0o644}}},
		{name: "kube-api-access", v: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: ptr(int32(0o644)), Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr(int64(3607))}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Items: []corev1.KeyToPath{{Key: "mode", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}},
		}}},
			want: map[string]File{"token": {[]byte("token-for-"), 0o644}, "ca.crt": {[]byte("fast"), 0o644}, "namespace": {[]byte("app"), 0o644}}},
		{name: "emptyDir is not projected", v: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := &corev1.Volume{Name: "v", VolumeSource: tc.v}
			got, err := Projection(pod, v, testInfo(), testObjects(), tokens)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) || (tc.want == nil) != (got == nil) {
				t.Fatalf("files = %v, want %v", got, tc.want)
			}
			for p, f := range tc.want {
				g, ok := got[p]
				if !ok || string(g.Data) != string(f.Data) || g.Mode != f.Mode {
					t.Errorf("%s = %q %o, want %q %o", p, g.Data, g.Mode, f.Data, f.Mode)
				}
			}
		})
	}
}

func TestWriteAtomic(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vol")
	read := func(p string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	wrote, err := WriteAtomic(dir, map[string]File{"a": {[]byte("1"), 0o644}, "sub/b": {[]byte("2"), 0o600}})
	if err != nil || !wrote {
		t.Fatalf("first write: %v, %v", wrote, err)
	}
	if read("a") != "1" || read("sub/b") != "2" {
		t.Fatal("contents differ")
	}
	if target, _ := os.Readlink(filepath.Join(dir, "a")); target != "..data/a" {
		t.Errorf("a links to %q, want ..data/a", target)
	}
	fi, _ := os.Stat(filepath.Join(dir, "sub/b"))
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("sub/b mode %o, want 600", fi.Mode().Perm())
	}
	if wrote, err := WriteAtomic(dir, map[string]File{"a": {[]byte("1"), 0o644}, "sub/b": {[]byte("2"), 0o600}}); err != nil || wrote {
		t.Fatalf("unchanged write: wrote %v, %v", wrote, err)
	}
	old, _ := os.Readlink(filepath.Join(dir, dataLink))
	if wrote, err := WriteAtomic(dir, map[string]File{"a": {[]byte("3"), 0o644}}); err != nil || !wrote {
		t.Fatalf("update: %v, %v", wrote, err)
	}
	if read("a") != "3" {
		t.Error("a not updated")
	}
	if _, err := os.Lstat(filepath.Join(dir, "sub")); !os.IsNotExist(err) {
		t.Errorf("sub still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, old)); !os.IsNotExist(err) {
		t.Errorf("old data dir %s still there: %v", old, err)
	}
}
