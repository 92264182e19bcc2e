package release

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// semver is SemVer 2, which Helm requires of a chart's version.
var semver = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
	`(-((0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?` +
	`(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$`)

// CheckVersion reports whether v can be a chart's version and an image's
// tag: SemVer 2 without build metadata (a tag cannot hold a +).
func CheckVersion(v string) error {
	if !semver.MatchString(v) || strings.Contains(v, "+") {
		return fmt.Errorf("version %q is not a SemVer 2 version without build metadata (X.Y.Z or X.Y.Z-PRERELEASE)", v)
	}
	return nil
}

// PackChart writes the chart in dir as a Helm chart archive (.tgz) to w:
// its files under the chart's name, in lexical order, without those its
// .helmignore names, with Chart.yaml's version and appVersion set to
// version. Every entry is owned by root, mode 0644, dated mtime, and the
// gzip header carries no name or time, so the archive depends only on the
// files, version and mtime.
func PackChart(w io.Writer, dir, version string, mtime time.Time) error {
	if err := CheckVersion(version); err != nil {
		return err
	}
	chart, err := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		return fmt.Errorf("reading the chart: %w", err)
	}
	name, stamped, err := stampChart(chart, version)
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, "Chart.yaml"), err)
	}
	ignore, err := readHelmignore(dir)
	if err != nil {
		return err
	}
	files, err := chartFiles(dir, ignore)
	if err != nil {
		return err
	}
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	for _, rel := range files {
		body := stamped
		if rel != "Chart.yaml" {
			if body, err = os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
				return fmt.Errorf("reading the chart: %w", err)
			}
		}
		hdr := &tar.Header{
			Name: path.Join(name, rel), Mode: 0o644, Size: int64(len(body)),
			ModTime: mtime.UTC(), Typeflag: tar.TypeReg, Format: tar.FormatPAX,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("archiving %s: %w", rel, err)
		}
		if _, err := tw.Write(body); err != nil {
			return fmt.Errorf("archiving %s: %w", rel, err)
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// stampChart returns the chart's name and Chart.yaml with its top-level
// version and appVersion set to version. Both keys must be there, once.
func stampChart(chart []byte, version string) (name string, out []byte, err error) {
	seen := map[string]int{}
	var b bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(chart))
	for sc.Scan() {
		line := sc.Text()
		key, val, ok := strings.Cut(line, ":")
		switch {
		case ok && key == "name":
			name = strings.Trim(strings.TrimSpace(val), `"'`)
		case ok && (key == "version" || key == "appVersion"):
			seen[key]++
			line = fmt.Sprintf("%s: %q", key, version)
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return "", nil, err
	}
	if name == "" {
		return "", nil, fmt.Errorf("no top-level name")
	}
	for _, k := range []string{"version", "appVersion"} {
		if seen[k] != 1 {
			return "", nil, fmt.Errorf("want one top-level %s, found %d", k, seen[k])
		}
	}
	return name, b.Bytes(), nil
}

// chartFiles are the chart's regular files, relative to dir with slashes,
// sorted, without the ignored ones.
func chartFiles(dir string, ignore []string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		if ignored(ignore, rel, d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case d.IsDir():
		case d.Type().IsRegular():
			out = append(out, rel)
		default:
			return fmt.Errorf("%s: not a regular file: a chart archive holds only files", p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing the chart: %w", err)
	}
	slices.Sort(out)
	return out, nil
}

// readHelmignore reads the chart's .helmignore patterns (none without
// one). The file itself is never archived, as helm package leaves it out.
func readHelmignore(dir string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, ".helmignore"))
	if os.IsNotExist(err) {
		return []string{".helmignore"}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the chart's .helmignore: %w", err)
	}
	out := []string{".helmignore"}
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if strings.HasPrefix(l, "!") {
			return nil, fmt.Errorf(".helmignore: negated pattern %q is not supported", l)
		}
		if _, err := path.Match(strings.TrimSuffix(strings.TrimPrefix(l, "/"), "/"), ""); err != nil {
			return nil, fmt.Errorf(".helmignore: pattern %q: %w", l, err)
		}
		out = append(out, l)
	}
	return out, nil
}

// ignored reports whether a .helmignore pattern matches rel: a pattern
// with a slash inside matches the whole path, others any one name in it;
// a trailing slash matches directories only.
func ignored(patterns []string, rel string, isDir bool) bool {
	for _, p := range patterns {
		dirOnly := strings.HasSuffix(p, "/")
		p = strings.TrimSuffix(strings.TrimPrefix(p, "/"), "/")
		if dirOnly && !isDir {
			continue
		}
		if strings.Contains(p, "/") {
			if ok, _ := path.Match(p, rel); ok {
				return true
			}
			continue
		}
		if ok, _ := path.Match(p, path.Base(rel)); ok {
			return true
		}
	}
	return false
}
