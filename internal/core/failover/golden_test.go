package failover

import (
	"path/filepath"
	"testing"
)

// TestGolden replays the long scenarios in testdata/*.txt. The expected
// outputs ("= " lines) are part of the files; after a deliberate change of
// behaviour, rerun with -update and review the diff.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) { checkGolden(t, f) })
	}
}
