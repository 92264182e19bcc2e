package secretfile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/liqo-relay/relay/internal/secretfile"
)

const key = "yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=\n"

func write(t *testing.T, path, data string, mode os.FileMode) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // not subject to umask
		t.Fatal(err)
	}
	return path
}

// secretVolume lays files out as the kubelet does for a Secret volume:
// key -> ..data/key, ..data -> ..2024_01_01_00_00_00.1, and the regular
// file inside the timestamped directory with the volume's defaultMode.
func secretVolume(t *testing.T, mode os.FileMode) string {
	t.Helper()
	dir := t.TempDir()
	ts := filepath.Join(dir, "..2024_01_01_00_00_00.1")
	if err := os.Mkdir(ts, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ts, "key"), key, mode)
	if err := os.Symlink("..2024_01_01_00_00_00.1", filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..data/key", filepath.Join(dir, "key")); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "key")
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		path string
		want error  // nil: read succeeds
		msg  string // substring of the error
	}{
		{"0600", write(t, filepath.Join(dir, "a"), key, 0o600), nil, ""},
		{"0400", write(t, filepath.Join(dir, "b"), key, 0o400), nil, ""},
		{"secret volume 0400", secretVolume(t, 0o400), nil, ""},
		{"secret volume 0600", secretVolume(t, 0o600), nil, ""},
		{"group readable", write(t, filepath.Join(dir, "c"), key, 0o640), secretfile.ErrTooOpen, "mode 0640"},
		{"world readable", write(t, filepath.Join(dir, "d"), key, 0o604), secretfile.ErrTooOpen, "mode 0604"},
		{"group writable", write(t, filepath.Join(dir, "e"), key, 0o620), secretfile.ErrTooOpen, "mode 0620"},
		{"secret volume 0644", secretVolume(t, 0o644), secretfile.ErrTooOpen, "-> "},
		{"secret volume 0440 (fsGroup)", secretVolume(t, 0o440), secretfile.ErrTooOpen, "..2024_01_01_00_00_00.1/key"},
		{"directory", dir, secretfile.ErrNotRegular, "a directory"},
		{"fifo", fifo, secretfile.ErrNotRegular, "a FIFO"},
		{"device", "/dev/null", secretfile.ErrNotRegular, "a character device"},
		{"too large", write(t, filepath.Join(dir, "f"), strings.Repeat("k", secretfile.MaxSize+1), 0o600), secretfile.ErrTooLarge, "more than 4096 bytes"},
		{"missing", filepath.Join(dir, "nope"), fs.ErrNotExist, "nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := secretfile.Read(tc.path)
			if tc.want == nil {
				if err != nil || string(data) != key {
					t.Fatalf("Read = %q, %v; want the key", data, err)
				}
				return
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), tc.path) {
				t.Fatalf("Read error = %v; want %v mentioning %q and the path", err, tc.want, tc.msg)
			}
			if data != nil {
				t.Errorf("Read returned data with an error")
			}
		})
	}
}

// TestReadExactlyMaxSize reads a file of exactly MaxSize bytes.
func TestReadExactlyMaxSize(t *testing.T) {
	p := write(t, filepath.Join(t.TempDir(), "k"), strings.Repeat("k", secretfile.MaxSize), 0o600)
	if data, err := secretfile.Read(p); err != nil || len(data) != secretfile.MaxSize {
		t.Fatalf("Read = %d bytes, %v", len(data), err)
	}
}
