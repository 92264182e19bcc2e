package layoutcheck

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Root finds the repository's root from the working directory: the nearest
// parent holding the main module's go.mod.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the repository root: %w", err)
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(b, []byte("module github.com/liqo-relay/relay\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no parent directory holds the main module's go.mod")
		}
		dir = parent
	}
}

// skipDir reports the directories no check reads: version control, data
// the tests read (testdata), built binaries and what node tooling installs.
func skipDir(name string) bool {
	switch name {
	case ".git", "testdata", "bin", "node_modules":
		return true
	}
	return false
}

// GoFiles lists every .go file under root, relative to it and sorted,
// across the main module and the tool modules beside it.
func GoFiles(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing Go files under %s: %w", root, err)
	}
	sort.Strings(files)
	return files, nil
}

// PackageDirs lists the directories that hold a Go package: at least one
// .go file, relative to root and sorted.
func PackageDirs(files []string) []string {
	seen := map[string]bool{}
	var dirs []string
	for _, f := range files {
		d := filepath.ToSlash(filepath.Dir(f))
		if !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	sort.Strings(dirs)
	return dirs
}

// generated reports whether a Go source says it is generated, the way `go
// generate` tools mark it.
func generated(src []byte) bool {
	for line := range bytes.Lines(src) {
		line = bytes.TrimSpace(line)
		if bytes.HasPrefix(line, []byte("package ")) {
			return false
		}
		if bytes.HasPrefix(line, []byte("// Code generated ")) && bytes.HasSuffix(line, []byte(" DO NOT EDIT.")) {
			return true
		}
	}
	return false
}
