package admin_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/control/admin"
	"github.com/liqo-relay/relay/internal/control/admin/admintest"
	"github.com/liqo-relay/relay/internal/core/status"
)

// TestPingTimeout: /ping?timeout=D gives the source a context that ends
// within D; without it the source gets the server's longer guard; a bad D
// answers 400 without reaching the source or the rate limit.
func TestPingTimeout(t *testing.T) {
	src := &admintest.Source{}
	src.SetPing("b", []status.PingResult{{Path: "direct", OK: true}})
	var leftNs atomic.Int64 // how long the source's last context had left
	src.SetPingHook(func(ctx context.Context, _ string) error {
		d, ok := ctx.Deadline()
		if !ok {
			t.Error("the source's context has no deadline")
		}
		leftNs.Store(int64(time.Until(d)))
		return nil
	})
	left := func() time.Duration { return time.Duration(leftNs.Load()) }
	ts := httptest.NewServer(admin.NewServer("", src, nil, nil).Handler())
	defer ts.Close()
	ctx := context.Background()
	c := admin.Client{Addr: ts.URL}

	if _, err := c.PingWithin(ctx, "b", 300*time.Millisecond); err != nil || left() <= 0 || left() > 300*time.Millisecond {
		t.Errorf("PingWithin 300ms: %v; the source had %v left, want at most 300ms", err, left())
	}
	if _, err := c.Ping(ctx, "b"); err != nil || left() <= admin.MaxPingWait {
		t.Errorf("Ping: %v; the source had %v left, want the guard beyond MaxPingWait", err, left())
	}
	for _, bad := range []string{"0s", "-1s", "3s", "soon"} {
		res, err := http.Get(ts.URL + "/ping?peer=b&timeout=" + bad)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest {
			t.Errorf("timeout=%s: %d, want 400", bad, res.StatusCode)
		}
	}
	if n := len(src.Pinged()); n != 2 {
		t.Errorf("source pinged %d times, want 2 (bad timeouts never reach it)", n)
	}
	if _, err := c.PingWithin(ctx, "b", 3*time.Second); err == nil || !strings.Contains(err.Error(), "at most 2s") {
		t.Errorf("PingWithin 3s: %v, want the relay's refusal naming 2s", err)
	}
	// The five refused requests took nothing from the burst of five.
	if _, err := c.Ping(ctx, "b"); err != nil {
		t.Errorf("ping after the refused ones: %v", err)
	}
}
