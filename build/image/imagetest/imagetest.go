// Package imagetest helps tests read what build/image writes: it unpacks
// the OCI layout tarball as an OCI image layout directory.
package imagetest

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// Untar unpacks the regular files and directories of the tar file at
// path into dir.
func Untar(t testing.TB, path, dir string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !filepath.IsLocal(hdr.Name) {
			t.Fatalf("%s: entry %q leaves the archive's root", path, hdr.Name)
		}
		dst := filepath.Join(dir, hdr.Name)
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatalf("%s: %s: %v", path, hdr.Name, err)
			}
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, data, 0o644); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("%s: entry %q of type %c: the layout holds only files and directories", path, hdr.Name, hdr.Typeflag)
		}
	}
}
