package admin_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/control/admin"
	"github.com/liqo-relay/relay/internal/control/admin/admintest"
	"github.com/liqo-relay/relay/internal/core/status"
)

// fakeClock is a settable clock for the /ping rate limit.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestPingRateLimit: after a burst of five pings the sixth answers 429 with
// Retry-After and does not reach the source; a second later one more ping
// is allowed. /status is not limited.
func TestPingRateLimit(t *testing.T) {
	src := &admintest.Source{}
	src.SetPing("b", []status.PingResult{{Path: "direct", OK: true}})
	clk := &fakeClock{t: time.Unix(1000, 0)}
	h := admin.NewServerWith("", src, nil, nil, admin.Options{Now: clk.Now}).Handler()
	ping := func() *http.Response {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ping?peer=b", nil))
		return rec.Result()
	}
	for i := range 5 {
		if res := ping(); res.StatusCode != http.StatusOK {
			t.Fatalf("ping %d: %d, want 200", i+1, res.StatusCode)
		}
	}
	res := ping()
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") != "1" {
		t.Fatalf("ping 6: %d, Retry-After %q; want 429, 1", res.StatusCode, res.Header.Get("Retry-After"))
	}
	if n := len(src.Pinged()); n != 5 {
		t.Errorf("source pinged %d times, want 5", n)
	}
	for range 10 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/status", nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("/status after the ping burst: %d", rec.Code)
		}
	}
	clk.Advance(time.Second)
	if res := ping(); res.StatusCode != http.StatusOK {
		t.Errorf("ping a second later: %d, want 200", res.StatusCode)
	}
	if res := ping(); res.StatusCode != http.StatusTooManyRequests {
		t.Errorf("second ping a second later: %d, want 429", res.StatusCode)
	}
}

// TestClientRateLimited: the client reports a 429 as ErrRateLimited with the
// server's Retry-After.
func TestClientRateLimited(t *testing.T) {
	src := &admintest.Source{}
	src.SetPing("b", []status.PingResult{{Path: "direct", OK: true}})
	clk := &fakeClock{t: time.Unix(1000, 0)}
	ts := httptest.NewServer(admin.NewServerWith("", src, nil, nil, admin.Options{Now: clk.Now}).Handler())
	defer ts.Close()
	var err error
	for range 6 {
		_, err = admin.FetchPing(context.Background(), ts.URL, "b")
	}
	if !errors.Is(err, admin.ErrRateLimited) || !contains(err.Error(), "retry in 1 s") {
		t.Errorf("sixth FetchPing: %v, want ErrRateLimited, retry in 1 s", err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
