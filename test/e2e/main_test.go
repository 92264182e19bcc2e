package e2e

import (
	"os"
	"testing"
)

// TestMain removes the relay binary built by relayBin after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	os.Exit(code)
}
