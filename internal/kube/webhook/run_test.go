package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/liqo-relay/relay/test/k8s/fakeapi"
)

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestNewClients(t *testing.T) {
	cs, dyn, err := newClients(fakeapi.Kubeconfig(t, "https://192.0.2.1:6443"))
	if err != nil || cs == nil || dyn == nil {
		t.Fatalf("%v %v %v", cs, dyn, err)
	}
	if _, _, err := newClients(filepath.Join(t.TempDir(), "none")); err == nil || !strings.HasPrefix(err.Error(), "API server configuration: ") {
		t.Errorf("a missing kubeconfig: err %v, want API server configuration: ...", err)
	}
}

func TestStartCerts(t *testing.T) {
	ctx := context.Background()
	o := Options{Namespace: "liqo-relay", Service: "inject", CertDir: t.TempDir(), ExtraHosts: []string{"127.0.0.1"}}
	certs, err := startCerts(ctx, o, fake.NewClientset(), discard(), NewMetrics(prometheus.NewRegistry()))
	if err != nil || !certs.Ready() {
		t.Fatalf("self-managed: %v, ready %v", err, certs != nil && certs.Ready())
	}
	leaf, _ := certs.GetCertificate(nil)
	if want := []string{"inject", "inject.liqo-relay", "inject.liqo-relay.svc", "inject.liqo-relay.svc.cluster.local"}; strings.Join(leaf.Leaf.DNSNames, ",") != strings.Join(want, ",") {
		t.Errorf("DNS names %v, want %v", leaf.Leaf.DNSNames, want)
	}

	// The caBundle cannot be written (no such configuration): the
	// certificate serves and the write is retried.
	var logs bytes.Buffer
	o.CertDir, o.WebhookConfig = t.TempDir(), "missing"
	if certs, err := startCerts(ctx, o, fake.NewClientset(), slog.New(slog.NewTextHandler(&logs, nil)), NewMetrics(prometheus.NewRegistry())); err != nil || !certs.Ready() {
		t.Errorf("caBundle not written: %v, want a certificate and no error", err)
	}
	if !strings.Contains(logs.String(), "certificates: will retry") {
		t.Errorf("caBundle not written: logs %q, want a retry", logs.String())
	}

	// Nothing mounted for --cert-manager: nothing to serve with.
	o.CertManager, o.CertDir = true, t.TempDir()
	if _, err := startCerts(ctx, o, fake.NewClientset(), discard(), NewMetrics(prometheus.NewRegistry())); err == nil || !strings.HasPrefix(err.Error(), "--cert-manager: ") {
		t.Errorf("cert-manager without a certificate: err %v", err)
	}
}

func TestNamespaceLabels(t *testing.T) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	_ = idx.Add(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant", Labels: map[string]string{OptOutKey: "disabled"}}})
	labels := namespaceLabels(corev1listers.NewNamespaceLister(idx))
	if got, err := labels("tenant"); err != nil || got[OptOutKey] != "disabled" {
		t.Errorf("tenant: %v %v", got, err)
	}
	if _, err := labels("gone"); err == nil {
		t.Error("an unknown namespace: no error")
	}
}

func TestHealthServer(t *testing.T) {
	var ready bool
	s := healthServer("", func() bool { return ready })
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		s.srv.Handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, rec.Body.String()
	}
	if code, body := get("/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	if code, body := get("/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "informers syncing or no certificate") {
		t.Errorf("/readyz before ready: %d %q", code, body)
	}
	ready = true
	if code, _ := get("/readyz"); code != 200 {
		t.Errorf("/readyz when ready: %d", code)
	}
}

func TestListenClosesWhatItOpenedOnFailure(t *testing.T) {
	first := freeAddr(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	_, err = listen([]server{{addr: first, srv: &http.Server{}}, {addr: busy.Addr().String(), srv: &http.Server{}}})
	if err == nil || !strings.HasPrefix(err.Error(), "listening on "+busy.Addr().String()+": ") {
		t.Fatalf("err %v, want listening on %s: ...", err, busy.Addr())
	}
	ln, err := net.Listen("tcp", first)
	if err != nil {
		t.Fatalf("the first listener was left open: %v", err)
	}
	ln.Close()
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func TestReconcileCerts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		tick, errc := make(chan time.Time), make(chan error, 1)
		var mu sync.Mutex
		var calls []time.Time
		reconcile := func(_ context.Context, now time.Time) error {
			mu.Lock()
			defer mu.Unlock()
			calls = append(calls, now)
			return errors.New("renewal failed") // logged, retried at the next tick
		}
		done := make(chan error)
		go func() { done <- reconcileCerts(ctx, reconcile, errc, tick, discard()) }()
		t0 := time.Unix(1000, 0)
		tick <- t0
		tick <- t0.Add(time.Minute)
		errc <- errors.New("serving on 127.0.0.1:9443: broken")
		if err := <-done; err == nil || err.Error() != "serving on 127.0.0.1:9443: broken" {
			t.Errorf("a failed server: %v, want its error", err)
		}
		if len(calls) != 2 || !calls[0].Equal(t0) || !calls[1].Equal(t0.Add(time.Minute)) {
			t.Errorf("reconciled at %v, want each tick's time", calls)
		}
		go func() { done <- reconcileCerts(ctx, reconcile, errc, tick, discard()) }()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ctx ended: %v, want nil", err)
		}
	})
}

// TestRunWiresItsParts runs relay inject against an API server with no
// pods or namespaces: it serves the webhook over TLS with its own
// certificate, the probes and /metrics, and Run returns nil once ctx ends.
func TestRunWiresItsParts(t *testing.T) {
	api := fakeapi.Empty(t, map[string]string{"pods": "Pod", "namespaces": "Namespace"})
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan [3]net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{
			Listen: "127.0.0.1:0", MetricsListen: "127.0.0.1:0", HealthListen: "127.0.0.1:0",
			Namespace: "liqo-relay", Service: "liqo-relay-inject", CertDir: t.TempDir(), ExtraHosts: []string{"127.0.0.1"},
			SidecarFile: "testdata/sidecar.yaml", Kubeconfig: fakeapi.Kubeconfig(t, api.URL),
			Ready: func(w, m, h net.Addr) { addrs <- [3]net.Addr{w, m, h} }, Log: discard(),
		})
	}()
	var a [3]net.Addr
	select {
	case a = <-addrs:
	case err := <-done:
		t.Fatalf("Run: %v", err)
	}
	// A pod that is not a gateway is admitted unchanged.
	body, _ := json.Marshal(review(t, plainPod(), "uid-1"))
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // the certificate is Run's own
	resp, err := hc.Post("https://"+a[0].String()+WebhookPath, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var out admissionv1.AdmissionReview
	err = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if err != nil || out.Response == nil || !out.Response.Allowed || out.Response.UID != "uid-1" || out.Response.Patch != nil {
		t.Errorf("review: %+v %v, want uid-1 allowed unchanged", out.Response, err)
	}
	for url, want := range map[string]string{"http://" + a[1].String() + "/metrics": `relay_inject_reviews_total{result="skipped"} 1`,
		"http://" + a[2].String() + "/healthz": "ok"} {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), want) {
			t.Errorf("%s has no %q", url, want)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after ctx ended: %v, want nil", err)
	}
}
