package admin_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/liqo-relay/relay/internal/control/admin/admintest"
)

// TestStatusError: when the source has no status (the relay does not
// answer), /status says so with 503 and the error, not an empty 200.
func TestStatusError(t *testing.T) {
	src := &admintest.Source{}
	src.SetStatus(sampleStatus())
	src.SetStatusError(errors.New("relay provider-a: status: context deadline exceeded"))
	code, ctype, body := do(t, src, false, "GET", "/status")
	if code != 503 || ctype != "application/json" || !strings.Contains(body, `"error": "relay provider-a: status: context deadline exceeded"`) {
		t.Errorf("/status with a failing source: %d %s %s", code, ctype, body)
	}
}
