package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/liqo-relay/relay/build/release"
)

// write packs the chart into path through a temporary file beside it, so
// a failure leaves no half-written archive.
func write(path, chart, version string, mtime time.Time) (err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".chart-*.tgz")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := release.PackChart(f, chart, version, mtime); err != nil {
		return fmt.Errorf("packaging %s: %w", chart, err)
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
