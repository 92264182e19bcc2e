package agent

import (
	"strings"
	"testing"

	"github.com/liqo-relay/relay/internal/core/config"
)

// The liqo section is installed once (tables, mark, rules): a reload that
// changes it is refused, naming it.
func TestLiqoSectionNeedsRestart(t *testing.T) {
	old := config.Defaults()
	old.Liqo = config.Liqo{Enabled: true, Tunnel: "liqo-tunnel", InTable: 20001, ConsumerTable: 20002,
		RulePriority: 1000, Mark: 0x40000000, NftTable: "liqo-relay"}
	a := &Agent{cfg: &old}
	same := old
	if err := a.immutableChanges(&same); err != nil {
		t.Fatalf("unchanged liqo section refused: %v", err)
	}
	changed := old
	changed.Liqo.InTable = 20003
	err := a.immutableChanges(&changed)
	if err == nil || !strings.Contains(err.Error(), "liqo cannot change while running") {
		t.Errorf("changed liqo section: error %v, want it refused naming liqo", err)
	}
}
