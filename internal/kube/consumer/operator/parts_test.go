package operator

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/liqo-relay/relay/internal/kube/liqo"
	"github.com/liqo-relay/relay/test/k8s/fakeapi"
)

func TestConnectConsumer(t *testing.T) {
	cfg, core, err := connectConsumer(fakeapi.Kubeconfig(t, "https://192.0.2.1:6443"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://192.0.2.1:6443" || cfg.UserAgent != "liqo-relay-operator" || core == nil {
		t.Errorf("host %q, user agent %q, client %v", cfg.Host, cfg.UserAgent, core)
	}
	if _, _, err := connectConsumer(filepath.Join(t.TempDir(), "none")); err == nil || !strings.Contains(err.Error(), "kubernetes: ") {
		t.Errorf("a missing kubeconfig: err %v, want a kubernetes: error", err)
	}
}

func TestConsumerID(t *testing.T) {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "liqo", Name: "clusterid", Labels: map[string]string{"app.kubernetes.io/name": "clusterid-configmap"}},
		Data:       map[string]string{liqo.ClusterIDKey: "from-liqo"},
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		o       Options
		want    string
		wantErr string
	}{
		{"given", Options{ClusterID: "given", LiqoNamespace: "liqo"}, "given", ""},
		{"read from Liqo's ConfigMap", Options{LiqoNamespace: "liqo"}, "from-liqo", ""},
		{"no ConfigMap", Options{LiqoNamespace: "elsewhere"}, "", "finding the consumer's cluster ID: 0 ConfigMaps labelled"},
	} {
		got, err := consumerID(ctx, fake.NewClientset(cm), tc.o)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.wantErr)
		case tc.wantErr == "" && (err != nil || got != tc.want):
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

func TestHealthHandler(t *testing.T) {
	var ready bool
	h := healthHandler(func() bool { return ready })
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, rec.Body.String()
	}
	if code, body := get("/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	if code, body := get("/readyz"); code != http.StatusServiceUnavailable || body != "not ready\n\n" {
		t.Errorf("/readyz before ready: %d %q", code, body)
	}
	ready = true
	if code, body := get("/readyz"); code != 200 || body != "ok\n" {
		t.Errorf("/readyz when ready: %d %q", code, body)
	}
}

func TestMetricsHandler(t *testing.T) {
	reg, leader := newRegistry()
	leader.Set(1)
	rec := httptest.NewRecorder()
	metricsHandler(reg).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{"relay_operator_leader 1", "go_goroutines"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics has no %q", want)
		}
	}
}

func TestServe(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	if err := serve(ctx, &wg, "", http.NotFoundHandler(), errs); err != nil {
		t.Errorf("an empty address: %v, want nothing served", err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := busy.Addr().String()
	if err := serve(ctx, &wg, addr, http.NotFoundHandler(), errs); err == nil || !strings.HasPrefix(err.Error(), "listening on "+addr+": ") {
		t.Errorf("a busy address: err %v, want listening on %s: ...", err, addr)
	}
	busy.Close()
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "served") })
	if err := serve(ctx, &wg, addr, ok, errs); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "served" {
		t.Errorf("body %q", body)
	}
	cancel()
	wg.Wait() // both goroutines end with ctx
	select {
	case err := <-errs:
		t.Errorf("a clean shutdown reported %v", err)
	default:
	}
}

func TestRunOnce(t *testing.T) {
	t.Run("stop before run", func(t *testing.T) {
		var r runOnce
		r.stop(func() {})
		r.run(func() { t.Error("fn ran after stop") })
	})
	t.Run("stop waits for a running fn", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var r runOnce
			ctx, cancel := context.WithCancel(context.Background())
			started, ended := make(chan struct{}), false
			go r.run(func() {
				close(started)
				<-ctx.Done()
				ended = true
			})
			<-started
			r.run(func() { t.Error("fn ran twice") })
			r.stop(cancel)
			if !ended {
				t.Error("stop returned before fn")
			}
		})
	})
}

// fakeController is a controller whose caches sync when synced is closed
// and whose Run returns err once its context ends.
type fakeController struct {
	synced chan struct{}
	err    error
}

func (f *fakeController) Synced() <-chan struct{} { return f.synced }

func (f *fakeController) Run(ctx context.Context) error {
	<-ctx.Done()
	return f.err
}

func TestLead(t *testing.T) {
	for _, tc := range []struct {
		name       string
		sync       bool
		err        error
		wantSynced bool
	}{
		{"caches sync", true, nil, true},
		{"stops before the caches sync", false, nil, false},
		{"Run fails", true, errors.New("events: boom"), true},
	} {
		synctest.Test(t, func(t *testing.T) {
			ctl := &fakeController{synced: make(chan struct{}), err: tc.err}
			ctx, cancel := context.WithCancel(context.Background())
			errs := make(chan error, 1)
			synced := false
			done := make(chan struct{})
			go func() {
				defer close(done)
				lead(ctx, ctl, func() { synced = true }, errs)
			}()
			if tc.sync {
				close(ctl.synced)
			}
			synctest.Wait()
			cancel()
			<-done // lead waits for its own goroutine too: the bubble checks it ended
			if synced != tc.wantSynced {
				t.Errorf("%s: onSynced called %v, want %v", tc.name, synced, tc.wantSynced)
			}
			select {
			case err := <-errs:
				if !errors.Is(err, tc.err) || tc.err == nil {
					t.Errorf("%s: reported %v, want %v", tc.name, err, tc.err)
				}
			default:
				if tc.err != nil {
					t.Errorf("%s: Run's error not reported", tc.name)
				}
			}
		})
	}
}

func TestLeaseConfig(t *testing.T) {
	core := fake.NewClientset()
	o := Options{Namespace: "ops", LeaseName: "lease"}
	c := leaseConfig(o, core, "me", leaderelection.LeaderCallbacks{})
	lock, ok := c.Lock.(*resourcelock.LeaseLock)
	if !ok || lock.LeaseMeta.Namespace != "ops" || lock.LeaseMeta.Name != "lease" || lock.Identity() != "me" {
		t.Errorf("lock %#v", c.Lock)
	}
	if c.LeaseDuration != 15*time.Second || c.RenewDeadline != 10*time.Second || c.RetryPeriod != 2*time.Second {
		t.Errorf("default timing %v %v %v, want 15s 10s 2s", c.LeaseDuration, c.RenewDeadline, c.RetryPeriod)
	}
	if !c.ReleaseOnCancel || c.Name != "lease" {
		t.Errorf("ReleaseOnCancel %v, name %q", c.ReleaseOnCancel, c.Name)
	}
	o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 4*time.Second, 3*time.Second, time.Second/2
	c = leaseConfig(o, core, "me", leaderelection.LeaderCallbacks{})
	if c.LeaseDuration != 4*time.Second || c.RenewDeadline != 3*time.Second || c.RetryPeriod != time.Second/2 {
		t.Errorf("given timing %v %v %v, want 4s 3s 500ms", c.LeaseDuration, c.RenewDeadline, c.RetryPeriod)
	}
	// The timing client-go checks is valid.
	c.Callbacks = leaderelection.LeaderCallbacks{OnStartedLeading: func(context.Context) {}, OnStoppedLeading: func() {}}
	if _, err := leaderelection.NewLeaderElector(c); err != nil {
		t.Errorf("client-go refuses the configuration: %v", err)
	}
}

func TestIdentity(t *testing.T) {
	host := func() (string, error) { return "node-1", nil }
	now := time.Unix(0, 42)
	if got := identity("given", host, now); got != "given" {
		t.Errorf("given identity: %q", got)
	}
	if got := identity("", host, now); got != "node-1_42" {
		t.Errorf("default identity: %q, want node-1_42", got)
	}
}
