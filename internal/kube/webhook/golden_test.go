package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/liqo-relay/relay/test/k8s/k8stest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// Names of the test peering: provider "provider-a" serves consumer
// "consumer-1", whose gateway lives in liqo-tenant-consumer-1.
const (
	testLocal   = "provider-a"
	testGateway = "consumer-1"
	testNS      = "liqo-tenant-consumer-1"
)

// testSidecar is testdata/sidecar.yaml.
func testSidecar(t *testing.T) *Sidecar {
	t.Helper()
	data, err := os.ReadFile("testdata/sidecar.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseSidecar(data)
	if err != nil {
		t.Fatalf("testdata/sidecar.yaml: %v", err)
	}
	return s
}

// liqoGatewayPod renders the pod template of Liqo's default WireGuard
// gateway server template (test/fixtures/liqo-v1.2.0/examples), with the
// labels Liqo's chart adds (liqo.selectorTemplate, liqo.labelsTemplate
// with one replica), as Liqo's controller would create it.
func liqoGatewayPod(t testing.TB) *corev1.Pod {
	t.Helper()
	pod := k8stest.LiqoGatewayPod(t, testGateway, testNS)
	pod.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	pod.Name = ""
	pod.GenerateName = "gw-" + testGateway + "-6d9f7c9b8-"
	pod.Labels[GatewayNameLabel] = testGateway
	pod.Labels["networking.liqo.io/gateway-namespace"] = testNS
	pod.Labels[ActiveLabel] = "true"
	return pod
}

func plainPod() *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: testNS, Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
	}
}

func review(t testing.TB, pod *corev1.Pod, uid string) *admissionv1.AdmissionReview {
	raw, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	return &admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:       types.UID(uid),
			Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
			Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
			Namespace: testNS,
			Operation: admissionv1.Create,
			Object:    runtime.RawExtension{Raw: raw},
		},
	}
}

// goldenCases are the recorded requests: name → (request, namespace labels).
func goldenCases(t testing.TB) map[string]func() (*corev1.Pod, map[string]string) {
	return map[string]func() (*corev1.Pod, map[string]string){
		"gateway":     func() (*corev1.Pod, map[string]string) { return liqoGatewayPod(t), nil },
		"non-gateway": func() (*corev1.Pod, map[string]string) { return plainPod(), nil },
		"opted-out-namespace": func() (*corev1.Pod, map[string]string) {
			return liqoGatewayPod(t), map[string]string{OptOutKey: "disabled"}
		},
		"opted-out-pod": func() (*corev1.Pod, map[string]string) {
			p := liqoGatewayPod(t)
			p.Annotations = map[string]string{OptOutKey: "false"}
			return p, nil
		},
		"netstack-annotated": func() (*corev1.Pod, map[string]string) {
			p := liqoGatewayPod(t)
			p.Annotations = map[string]string{"example.com/keep": "yes"}
			return p, nil
		},
	}
}

// TestGolden posts each recorded AdmissionReview (testdata/NAME.request.json)
// to the handler and compares its JSON patch with testdata/NAME.patch.json
// ("null" for no patch). The already-injected case feeds the gateway
// pod with the golden patch applied back in. -update rewrites both.
func TestGolden(t *testing.T) {
	cases := goldenCases(t)
	names := []string{"gateway", "non-gateway", "opted-out-namespace", "opted-out-pod", "netstack-annotated", "already-injected"}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			s := testSidecar(t)
			var nsLabels map[string]string
			reqFile := filepath.Join("testdata", name+".request.json")
			if *update {
				var pod *corev1.Pod
				if name == "already-injected" {
					pod = injectedPod(t, liqoGatewayPod(t), s, testLocal)
				} else {
					pod, nsLabels = cases[name]()
				}
				writeJSON(t, reqFile, review(t, pod, "uid-"+name))
				writeJSON(t, filepath.Join("testdata", name+".nslabels.json"), nsLabels)
			}
			if name == "netstack-annotated" {
				s.Mode = ModeNetstack
			}
			reqBody, err := os.ReadFile(reqFile)
			if err != nil {
				t.Fatal(err)
			}
			readJSON(t, filepath.Join("testdata", name+".nslabels.json"), &nsLabels)
			h := testHandler(s, nsLabels)
			got := postReview(t, h, reqBody)
			if got.Response == nil || string(got.Response.UID) != "uid-"+name || !got.Response.Allowed {
				t.Fatalf("response %+v: want allowed, uid-%s", got.Response, name)
			}
			var patch any
			if got.Response.Patch != nil {
				if err := json.Unmarshal(got.Response.Patch, &patch); err != nil {
					t.Fatal(err)
				}
			}
			patchFile := filepath.Join("testdata", name+".patch.json")
			if *update {
				writeJSON(t, patchFile, patch)
			}
			want, err := os.ReadFile(patchFile)
			if err != nil {
				t.Fatal(err)
			}
			gotJSON, _ := json.MarshalIndent(patch, "", "  ")
			if !bytes.Equal(bytes.TrimSpace(want), gotJSON) {
				t.Errorf("patch differs from %s (go test -run TestGolden -update rewrites it):\n%s", patchFile, gotJSON)
			}
		})
	}
}

func testHandler(s *Sidecar, nsLabels map[string]string) *Handler {
	return &Handler{
		Sidecar:         s,
		ClusterID:       func(context.Context) (string, error) { return testLocal, nil },
		NamespaceLabels: func(string) (map[string]string, error) { return nsLabels, nil },
		Log:             slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

func postReview(t *testing.T, h http.Handler, body []byte) admissionv1.AdmissionReview {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mutate", bytes.NewReader(body)))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// injectedPod applies the sidecar's patch to pod, as the API server would.
func injectedPod(t testing.TB, pod *corev1.Pod, s *Sidecar, local string) *corev1.Pod {
	t.Helper()
	ops, err := s.Mutate(pod, RelayName(local, ConsumerID(pod), s.NameIncludesConsumer))
	if err != nil {
		t.Fatal(err)
	}
	out, err := applyPatch(pod, ops)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestInjectKeepsLiqoContainers applies the patch and checks that Liqo's
// gateway, wireguard and geneve containers are exactly as before, and that
// the relay's configuration annotation is what the relay will accept.
func TestInjectKeepsLiqoContainers(t *testing.T) {
	s := testSidecar(t)
	before := liqoGatewayPod(t)
	after := injectedPod(t, before, s, testLocal)
	if len(after.Spec.Containers) != 4 {
		t.Fatalf("%d containers, want Liqo's 3 and the relay", len(after.Spec.Containers))
	}
	for i, name := range []string{"gateway", "wireguard", "geneve"} {
		b, _ := json.Marshal(before.Spec.Containers[i])
		a, _ := json.Marshal(after.Spec.Containers[i])
		if before.Spec.Containers[i].Name != name || !bytes.Equal(a, b) {
			t.Errorf("container %d (%s) changed:\n%s\n%s", i, name, b, a)
		}
	}
	if why := Skip(after, nil); !strings.Contains(why, "already injected") {
		t.Errorf("Skip(injected pod) = %q", why)
	}
	if after.Annotations[InjectedAnnotation] != testLocal {
		t.Errorf("relay name annotation %q", after.Annotations[InjectedAnnotation])
	}
	want, _ := s.RelayConfig(testLocal, "")
	if after.Annotations[ConfigAnnotation] != string(want) {
		t.Errorf("config annotation %q", after.Annotations[ConfigAnnotation])
	}
}
