package admin_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/liqo-relay/relay/internal/control/admin"
	"github.com/liqo-relay/relay/internal/control/admin/admintest"
	"github.com/liqo-relay/relay/internal/control/metrics"
	"github.com/liqo-relay/relay/internal/core/status"
)

const testToken = "s3cr3t-t0ken-0123456789"

func request(t *testing.T, h http.Handler, path, auth string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

// TestTokenGuardsStatusAndPing: with a token configured, /status and /ping
// answer 401 unless the exact bearer token comes with the request, while
// /healthz, /readyz and /metrics stay open (the kubelet and Prometheus
// send none).
func TestTokenGuardsStatusAndPing(t *testing.T) {
	src := &admintest.Source{}
	src.SetReady(true, "")
	src.SetPing("b", []status.PingResult{{Path: "direct", OK: true, RTTMs: 1}})
	h := admin.NewServerWith("127.0.0.1:0", src, metrics.New().Registry(), nil, admin.Options{Token: testToken}).Handler()

	for _, path := range []string{"/status", "/ping?peer=b"} {
		for _, auth := range []string{"", "Bearer", "Bearer ", "Bearer wrong", "Bearer " + testToken + "x",
			"Bearer " + testToken[:len(testToken)-1], "Basic " + testToken, "bearer " + testToken, testToken} {
			res := request(t, h, path, auth)
			if res.StatusCode != http.StatusUnauthorized {
				t.Errorf("GET %s with Authorization %q: %d, want 401", path, auth, res.StatusCode)
			}
			if !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("GET %s: no WWW-Authenticate: Bearer", path)
			}
		}
		if res := request(t, h, path, "Bearer "+testToken); res.StatusCode != http.StatusOK {
			t.Errorf("GET %s with the token: %d, want 200", path, res.StatusCode)
		}
	}
	if got := len(src.Pinged()); got != 1 {
		t.Errorf("%d pings reached the source, want only the authorized one", got)
	}
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		if res := request(t, h, path, ""); res.StatusCode != http.StatusOK {
			t.Errorf("GET %s without a token: %d, want 200", path, res.StatusCode)
		}
	}
}

// TestHealthAndMetricsOnly: the server for admin.metricsListen has no
// /status and no /ping, with or without a token.
func TestHealthAndMetricsOnly(t *testing.T) {
	src := &admintest.Source{}
	src.SetReady(true, "")
	src.SetPing("b", []status.PingResult{{Path: "direct", OK: true}})
	h := admin.NewServerWith("127.0.0.1:0", src, metrics.New().Registry(), nil, admin.Options{HealthAndMetricsOnly: true}).Handler()
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/metrics": 200, "/status": 404, "/ping?peer=b": 404} {
		if res := request(t, h, path, ""); res.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, res.StatusCode, want)
		}
	}
	if len(src.Pinged()) != 0 {
		t.Error("the metrics server pinged")
	}
}

// TestClientToken: the client sends its token, and without one reports
// ErrUnauthorized.
func TestClientToken(t *testing.T) {
	src := &admintest.Source{}
	src.SetStatus(status.Status{Name: "provider-a"})
	src.SetPing("b", []status.PingResult{{Path: "direct", OK: true}})
	ts := httptest.NewServer(admin.NewServerWith("", src, nil, nil, admin.Options{Token: testToken}).Handler())
	defer ts.Close()
	ctx := context.Background()

	if _, err := admin.FetchStatus(ctx, ts.URL); !errors.Is(err, admin.ErrUnauthorized) {
		t.Errorf("FetchStatus without token: %v, want ErrUnauthorized", err)
	}
	if _, err := (admin.Client{Addr: ts.URL, Token: "wrong-token-0123456789"}).Ping(ctx, "b"); !errors.Is(err, admin.ErrUnauthorized) {
		t.Errorf("Ping with a wrong token: %v, want ErrUnauthorized", err)
	}
	c := admin.Client{Addr: ts.URL, Token: testToken}
	if st, err := c.Status(ctx); err != nil || st.Name != "provider-a" {
		t.Errorf("Status with the token = %+v, %v", st, err)
	}
	if res, err := c.Ping(ctx, "b"); err != nil || len(res) != 1 || !res[0].OK {
		t.Errorf("Ping with the token = %+v, %v", res, err)
	}
}

func TestParseToken(t *testing.T) {
	if tok, err := admin.ParseToken([]byte("  " + testToken + "\n")); err != nil || tok != testToken {
		t.Errorf("ParseToken = %q, %v", tok, err)
	}
	for _, tc := range []struct{ in, want string }{
		{"", "0 characters, want at least 16"},
		{"short\n", "5 characters"},
		{"0123456789 abcdefgh", "space, control or non-ASCII character at byte 10"},
		{"0123456789abcdef\x00", "at byte 16"},
		{"0123456789abcdefé", "at byte 16"},
	} {
		_, err := admin.ParseToken([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseToken(%q) = %v, want %q", tc.in, err, tc.want)
		}
	}
}
