package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestLiqoSource(t *testing.T) {
	m := New()
	if n, err := testutil.GatherAndCount(m.Registry(), "relay_connections_reset_total", "relay_policy_rule_reasserts_total"); err != nil || n != 0 {
		t.Fatalf("liqo series before LiqoSource: %d, %v", n, err)
	}
	m.LiqoSource(func() LiqoCounters {
		return LiqoCounters{Resets: map[string]uint64{"provider-b": 2}, Reasserts: 3}
	})
	want := `
# HELP relay_policy_rule_reasserts_total Times the relay moved its policy rules ahead of a rule (Liqo's, added without a priority) that landed before them.
# TYPE relay_policy_rule_reasserts_total counter
relay_policy_rule_reasserts_total 3
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "relay_policy_rule_reasserts_total"); err != nil {
		t.Error(err)
	}
	if n, err := testutil.GatherAndCount(m.Registry(), "relay_connections_reset_total"); err != nil || n != 1 {
		t.Errorf("relay_connections_reset_total series: %d, %v", n, err)
	}
	var nilM *Metrics
	nilM.LiqoSource(nil) // no panic
}
