package admin_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/liqo-relay/relay/internal/control/admin"
	"github.com/liqo-relay/relay/internal/control/admin/admintest"
	"github.com/liqo-relay/relay/internal/control/metrics"
	"github.com/liqo-relay/relay/internal/core/status"
)

// do serves one request on a server built around src and returns the
// response code, content type and body.
func do(t *testing.T, src admin.Source, withMetrics bool, method, target string) (int, string, string) {
	t.Helper()
	m := (*metrics.Metrics)(nil)
	if withMetrics {
		m = metrics.New(metrics.WithVersion("v9.9.9"))
	}
	s := admin.NewServer("127.0.0.1:0", src, m.Registry(), nil)
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	res := rec.Result()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("Content-Type"), string(body)
}

func TestEndpoints(t *testing.T) {
	src := &admintest.Source{}
	src.SetReady(true, "")
	src.SetStatus(sampleStatus())
	src.SetPing("provider-b", []status.PingResult{{Path: "direct", RTTMs: 10.1, OK: true}})

	for _, tc := range []struct {
		method, target string
		metrics        bool
		code           int
		ctype          string
		body           string // substring
	}{
		{"GET", "/healthz", false, 200, "text/plain; charset=utf-8", "ok\n"},
		{"HEAD", "/healthz", false, 200, "text/plain; charset=utf-8", ""},
		{"GET", "/readyz", false, 200, "text/plain; charset=utf-8", "ok\n"},
		{"GET", "/status", false, 200, "application/json", `"name": "provider-a"`},
		{"GET", "/ping?peer=provider-b", false, 200, "application/json", `"rttMs": 10.1`},
		{"GET", "/ping?peer=nobody", false, 404, "application/json", `"error": "ping \"nobody\": unknown peer"`},
		{"GET", "/ping", false, 400, "application/json", `missing query parameter peer`},
		{"GET", "/metrics", true, 200, "", `relay_build_info{goversion=`},
		{"GET", "/metrics", false, 404, "", "404 page not found"},
		{"POST", "/status", false, 405, "", "Method Not Allowed"},
		{"GET", "/nothing", false, 404, "", "404 page not found"},
	} {
		t.Run(tc.method+tc.target, func(t *testing.T) {
			code, ctype, body := do(t, src, tc.metrics, tc.method, tc.target)
			if code != tc.code {
				t.Errorf("code %d, want %d (body %q)", code, tc.code, body)
			}
			if tc.ctype != "" && ctype != tc.ctype {
				t.Errorf("content type %q, want %q", ctype, tc.ctype)
			}
			if !strings.Contains(body, tc.body) {
				t.Errorf("body %q does not contain %q", body, tc.body)
			}
		})
	}
}

func TestReadyz(t *testing.T) {
	src := &admintest.Source{}
	for _, tc := range []struct {
		ready  bool
		reason string
		code   int
		body   string
	}{
		{false, "", 503, "not ready\n"},
		{false, "device not up: creating tun relay0: permission denied", 503, "device not up: creating tun relay0: permission denied\n"},
		{true, "", 200, "ok\n"},
		{false, "draining", 503, "draining\n"},
	} {
		src.SetReady(tc.ready, tc.reason)
		code, _, body := do(t, src, false, "GET", "/readyz")
		if code != tc.code || body != tc.body {
			t.Errorf("Ready()=(%v,%q): got %d %q, want %d %q", tc.ready, tc.reason, code, body, tc.code, tc.body)
		}
	}
}

// TestStatusGolden pins the /status document byte for byte.
func TestStatusGolden(t *testing.T) {
	src := &admintest.Source{}
	src.SetStatus(sampleStatus())
	code, _, body := do(t, src, false, "GET", "/status")
	if code != 200 {
		t.Fatalf("code %d", code)
	}
	golden(t, "status.golden.json", []byte(body))
}

// TestStatusFieldNames checks the Go types against the example document
// in the specification: decoding it and encoding it again must give back
// exactly the same keys and values, so no field is missing, extra or
// misspelt.
func TestStatusFieldNames(t *testing.T) {
	raw, err := os.ReadFile("testdata/spec_example.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	var s status.Status
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("spec example does not decode into Status: %v", err)
	}
	src := &admintest.Source{}
	src.SetStatus(s)
	_, _, body := do(t, src, false, "GET", "/status")
	var got map[string]any
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("served status differs from the spec example\ngot:  %v\nwant: %v", got, want)
	}
}

func TestStatusAlwaysEncodes(t *testing.T) {
	src := &admintest.Source{}
	st := status.Status{
		Name:          "x",
		UptimeSeconds: math.Inf(1),
		Peers: []status.PeerStatus{{Name: "b", Paths: []status.PathStatus{
			{Name: "direct", State: status.PathDown, RTTMs: math.NaN(), JitterMs: math.NaN(), Loss: math.Inf(-1)},
		}}},
	}
	src.SetStatus(st)
	code, _, body := do(t, src, false, "GET", "/status")
	if code != 200 {
		t.Fatalf("code %d: %s", code, body)
	}
	for _, want := range []string{`"events": []`, `"prefixes": []`, `"rttMs": 0`, `"uptimeSeconds": 0`, `"lastHandshake": ""`, `"lastChange": ""`} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %s:\n%s", want, body)
		}
	}
	if !math.IsNaN(st.Peers[0].Paths[0].RTTMs) {
		t.Error("the source's snapshot was modified")
	}

	src.SetStatus(status.Status{})
	_, _, body = do(t, src, false, "GET", "/status")
	if !strings.Contains(body, `"peers": []`) {
		t.Errorf("empty status encodes peers as null:\n%s", body)
	}
}

func TestPingErrors(t *testing.T) {
	src := &admintest.Source{}
	src.SetPing("provider-b", nil)
	for _, tc := range []struct {
		err  error
		code int
		body string
	}{
		{nil, 200, "[]"},
		{errors.New("no probe socket"), 500, `"error": "no probe socket"`},
		{context.DeadlineExceeded, 504, `"error": "context deadline exceeded"`},
		{fmt.Errorf("ping: %w", context.Canceled), 503, `"error": "ping: context canceled"`},
	} {
		src.SetPingError(tc.err)
		code, _, body := do(t, src, false, "GET", "/ping?peer=provider-b")
		if code != tc.code || !strings.Contains(body, tc.body) {
			t.Errorf("ping error %v: got %d %q, want %d containing %q", tc.err, code, body, tc.code, tc.body)
		}
	}
}

func TestPingHasDeadline(t *testing.T) {
	src := &admintest.Source{}
	src.SetPing("provider-b", nil)
	var hasDeadline bool
	src.SetPingHook(func(ctx context.Context, _ string) error {
		_, hasDeadline = ctx.Deadline()
		return nil
	})
	if code, _, _ := do(t, src, false, "GET", "/ping?peer=provider-b"); code != http.StatusOK {
		t.Fatalf("code %d", code)
	}
	if !hasDeadline {
		t.Error("Source.Ping got a context without deadline")
	}
	if got := src.Pinged(); !reflect.DeepEqual(got, []string{"provider-b"}) {
		t.Errorf("pinged %v", got)
	}
}

// The agent may build a new server on the same registry (a restart of the
// admin listener); promhttp must reuse its error counter, not panic.
func TestServersShareRegistry(t *testing.T) {
	reg := metrics.New().Registry()
	for range 2 {
		s := admin.NewServer("127.0.0.1:0", &admintest.Source{}, reg, nil)
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("code %d", rec.Code)
		}
	}
}
