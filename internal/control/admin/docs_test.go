package admin_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/liqo-relay/relay/internal/control/admin"
)

// TestDocsShowCurrentTable keeps the example in docs/status.md identical
// to what RenderTable prints for the fixture.
func TestDocsShowCurrentTable(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/status.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "$ relay status\n")
	if !ok {
		t.Fatal(`docs/status.md has no "$ relay status" example`)
	}
	example, _, _ := strings.Cut(after, "```")
	var b bytes.Buffer
	admin.RenderTable(&b, sampleStatus(), now, false)
	if example != b.String() {
		t.Errorf("docs/status.md example is stale; RenderTable now prints:\n%s", b.String())
	}
}
