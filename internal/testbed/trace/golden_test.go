package trace

import (
	"flag"
	"testing"
)

var update = flag.Bool("update", false, "write the engine's logs into the golden traces")

// TestGoldenTracesThroughTheEngine plays every golden trace against the
// engine alone. `go test ./internal/testbed/trace -update` rewrites them
// from it; internal/agent's TestGoldenTracesThroughTheShell then checks
// the relay's shell gives the same.
func TestGoldenTracesThroughTheEngine(t *testing.T) {
	Check(t, Dir, EngineRelay, *update)
}
