package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
)

// maxReview bounds an AdmissionReview body (the API server sends at most
// a few MiB; a pod is far smaller).
const maxReview = 8 << 20

// Handler serves the mutating webhook at /mutate.
type Handler struct {
	Sidecar *Sidecar
	// ClusterID returns the local Liqo cluster ID.
	ClusterID func(ctx context.Context) (string, error)
	// NamespaceLabels returns a namespace's labels (from an informer), a
	// second check behind the webhook configuration's namespaceSelector.
	NamespaceLabels func(ns string) (map[string]string, error)
	Log             *slog.Logger
	Metrics         *Metrics
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST an AdmissionReview", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxReview+1))
	if err != nil || len(body) > maxReview {
		http.Error(w, "reading the AdmissionReview failed or it is too large", http.StatusBadRequest)
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
		http.Error(w, fmt.Sprintf("not an AdmissionReview with a request: %v", err), http.StatusBadRequest)
		return
	}
	resp := h.Review(r.Context(), review.Request)
	out := admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp}
	if out.APIVersion == "" {
		out.APIVersion, out.Kind = "admission.k8s.io/v1", "AdmissionReview"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// Review decides one request. It always allows the pod: a pod it cannot
// inject is admitted unchanged, with a warning, like failurePolicy Ignore
// would, and the controller reports it.
func (h *Handler) Review(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	result := "skipped"
	defer func() {
		if h.Metrics != nil {
			h.Metrics.reviews.WithLabelValues(result).Inc()
		}
	}()
	if req.Kind.Kind != "Pod" || req.Operation != admissionv1.Create {
		return resp
	}
	var pod corev1.Pod
	if err := json.Unmarshal(req.Object.Raw, &pod); err != nil {
		result = "error"
		resp.Warnings = []string{"liqo-relay: not injected: decoding the pod: " + err.Error()}
		return resp
	}
	ns := req.Namespace
	var nsLabels map[string]string
	if h.NamespaceLabels != nil {
		l, err := h.NamespaceLabels(ns)
		if err != nil {
			h.Log.Warn("reading the namespace's labels", "namespace", ns, "err", err)
		}
		nsLabels = l
	}
	if why := Skip(&pod, nsLabels); why != "" {
		h.Log.Debug("not injecting", "namespace", ns, "pod", podName(&pod), "reason", why)
		return resp
	}
	patch, name, err := h.patch(ctx, &pod)
	if err != nil {
		result = "error"
		h.Log.Error("not injecting the relay sidecar", "namespace", ns, "pod", podName(&pod), "err", err)
		resp.Warnings = []string{"liqo-relay: relay sidecar not injected: " + err.Error()}
		return resp
	}
	raw, err := json.Marshal(patch)
	if err != nil {
		result = "error"
		resp.Warnings = []string{"liqo-relay: encoding the patch: " + err.Error()}
		return resp
	}
	pt := admissionv1.PatchTypeJSONPatch
	resp.Patch, resp.PatchType = raw, &pt
	result = "injected"
	h.Log.Info("injected the relay sidecar", "namespace", ns, "pod", podName(&pod), "relay", name, "mode", h.Sidecar.Mode)
	return resp
}

func (h *Handler) patch(ctx context.Context, pod *corev1.Pod) ([]PatchOp, string, error) {
	local, err := h.ClusterID(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("local Liqo cluster ID: %w", err)
	}
	name := RelayName(local, ConsumerID(pod), h.Sidecar.NameIncludesConsumer)
	ops, err := h.Sidecar.Mutate(pod, name)
	return ops, name, err
}

func podName(p *corev1.Pod) string {
	if p.Name != "" {
		return p.Name
	}
	return p.GenerateName + "*"
}
