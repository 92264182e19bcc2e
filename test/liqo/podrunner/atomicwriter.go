package podrunner

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// dataLink is the symlink to a projected volume's current data directory,
// the kubelet's name: a reader that opens key (a symlink into ..data)
// sees either the old or the new set of files, never a mix.
const dataLink = "..data"

// WriteAtomic makes dir hold exactly files (paths relative to dir) the
// way the kubelet's atomic writer does: a new ..<timestamp> directory with
// every file, the ..data symlink swapped to it by a rename, top-level
// symlinks into ..data for each first path component, and the old data
// directory removed. It writes nothing when dir already holds files and
// reports whether it wrote.
func WriteAtomic(dir string, files map[string]File) (bool, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("creating %s: %w", dir, err)
	}
	oldData, _ := os.Readlink(filepath.Join(dir, dataLink))
	if oldData != "" && sameFiles(filepath.Join(dir, oldData), files) {
		return false, nil
	}
	tsDir, err := os.MkdirTemp(dir, ".."+time.Now().UTC().Format("2006_01_02_15_04_05."))
	if err != nil {
		return false, fmt.Errorf("creating a data directory in %s: %w", dir, err)
	}
	if err := os.Chmod(tsDir, 0o755); err != nil {
		return false, fmt.Errorf("chmod %s: %w", tsDir, err)
	}
	for _, p := range sortedKeys(files) {
		f := files[p]
		full := filepath.Join(tsDir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return false, fmt.Errorf("writing %s: %w", full, err)
		}
		if err := os.WriteFile(full, f.Data, f.Mode); err != nil {
			return false, fmt.Errorf("writing %s: %w", full, err)
		}
		if err := os.Chmod(full, f.Mode); err != nil {
			return false, fmt.Errorf("chmod %s: %w", full, err)
		}
	}
	tmpLink := filepath.Join(dir, dataLink+"_tmp")
	_ = os.Remove(tmpLink)
	if err := os.Symlink(filepath.Base(tsDir), tmpLink); err != nil {
		return false, fmt.Errorf("linking %s: %w", tmpLink, err)
	}
	if err := os.Rename(tmpLink, filepath.Join(dir, dataLink)); err != nil {
		return false, fmt.Errorf("swapping %s: %w", dataLink, err)
	}
	top := map[string]bool{}
	for p := range files {
		first, _, _ := strings.Cut(p, "/")
		top[first] = true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return true, fmt.Errorf("reading %s: %w", dir, err)
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, "..") || top[name] {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			return true, fmt.Errorf("removing stale %s: %w", name, err)
		}
	}
	for name := range top {
		link := filepath.Join(dir, name)
		if target, err := os.Readlink(link); err == nil && target == filepath.Join(dataLink, name) {
			continue
		}
		_ = os.Remove(link)
		if err := os.Symlink(filepath.Join(dataLink, name), link); err != nil {
			return true, fmt.Errorf("linking %s: %w", link, err)
		}
	}
	if oldData != "" {
		if err := os.RemoveAll(filepath.Join(dir, oldData)); err != nil {
			return true, fmt.Errorf("removing the old data directory: %w", err)
		}
	}
	return true, nil
}

// sameFiles says whether data holds exactly files, with their modes.
func sameFiles(data string, files map[string]File) bool {
	n := 0
	err := filepath.WalkDir(data, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(data, p)
		f, ok := files[filepath.ToSlash(rel)]
		if !ok {
			return errDiffers
		}
		info, err := d.Info()
		if err != nil || info.Mode().Perm() != f.Mode {
			return errDiffers
		}
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(b, f.Data) {
			return errDiffers
		}
		n++
		return nil
	})
	return err == nil && n == len(files)
}

var errDiffers = fmt.Errorf("differs")
