package image

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"

	"github.com/liqo-relay/relay/build/image/imagetest"
)

// The image's settings as docs/image.md states them, written out here so
// that a change to spec.go shows up as a test failure and a doc update.
var (
	documentedEntrypoint = []string{"/relay"}
	documentedCmd        = []string{"run", "--kubernetes", "-c", "/etc/relay/relay.yaml"}
	documentedEnv        = []string{"PATH=/"}
)

const (
	documentedUser    = "65532:65532"
	documentedWorkDir = "/"
	testVersion       = "v0.0.0-imagetest"
	testRevision      = "0123456789abcdef0123456789abcdef01234567"
)

var testCreated = time.Unix(1700000000, 0).UTC()

// TestImage builds the image as `make image` does, into a temporary
// directory, and checks what it wrote: the OCI archive validates as an
// index of the two platforms, the docker archives hold the same images,
// each image holds only the static relay binary for its architecture, the
// amd64 binary runs here and prints its version, and the config is as
// documented. A second write from the same binaries gives the same bytes.
func TestImage(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles the relay for two platforms")
	}
	moduleDir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{
		Meta:       Meta{Version: testVersion, Revision: testRevision, Created: testCreated},
		Repository: Repository,
		Platforms:  Platforms(),
		ModuleDir:  moduleDir,
		OutDir:     t.TempDir(),
		Go:         "go",
		Env:        os.Environ(),
	}
	log := slog.New(slog.DiscardHandler)
	res, err := Build(context.Background(), o, log)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if want := "ghcr.io/liqo-relay/relay:" + testVersion; res.Ref.String() != want {
		t.Errorf("reference %s, want %s", res.Ref, want)
	}

	idx := readOCIArchive(t, res.OCIArchive, res.Ref)
	if err := validate.Index(idx); err != nil {
		t.Fatalf("validate.Index: %v", err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if im.MediaType != types.OCIImageIndex {
		t.Errorf("index media type %s, want %s", im.MediaType, types.OCIImageIndex)
	}
	if !reflect.DeepEqual(im.Annotations, Labels(testVersion, testRevision)) {
		t.Errorf("index annotations %v, want the labels", im.Annotations)
	}
	wantPlatforms := []string{"linux/amd64", "linux/arm64"}
	if len(im.Manifests) != len(wantPlatforms) {
		t.Fatalf("index has %d manifests, want %d (%v)", len(im.Manifests), len(wantPlatforms), wantPlatforms)
	}
	ranHere := false
	for i, desc := range im.Manifests {
		plat := wantPlatforms[i]
		if desc.Platform == nil || platformKey(*desc.Platform) != plat {
			t.Errorf("manifest %d: platform %v, want %s", i, desc.Platform, plat)
			continue
		}
		img, err := idx.Image(desc.Digest)
		if err != nil {
			t.Fatalf("%s: %v", plat, err)
		}
		checkConfig(t, plat, img)
		bin := extractBinary(t, plat, img)
		checkELF(t, plat, bin, moduleDir)
		if desc.Platform.Architecture == runtime.GOARCH {
			checkRunsVersion(t, bin)
			ranHere = true
		}
		checkDockerArchive(t, plat, res.DockerArchives[plat], res.Ref, img)
	}
	if !ranHere {
		t.Logf("no image for this host's architecture %s: the binary was not run", runtime.GOARCH)
	}

	t.Run("reproducible", func(t *testing.T) {
		o2 := o
		o2.OutDir = t.TempDir()
		res2, err := Write(o2, res.Binaries, log)
		if err != nil {
			t.Fatalf("Write: %v", err)
		}
		pairs := [][2]string{{res.OCIArchive, res2.OCIArchive}}
		for _, plat := range wantPlatforms {
			pairs = append(pairs, [2]string{res.DockerArchives[plat], res2.DockerArchives[plat]})
		}
		for _, p := range pairs {
			if a, b := fileSum(t, p[0]), fileSum(t, p[1]); a != b {
				t.Errorf("%s differs between two writes from the same binaries (%x, %x)", filepath.Base(p[0]), a, b)
			}
		}
	})
}

// readOCIArchive unpacks the OCI layout tarball and returns the index that
// index.json names ref.
func readOCIArchive(t *testing.T, path string, ref name.Tag) v1.ImageIndex {
	t.Helper()
	dir := t.TempDir()
	imagetest.Untar(t, path, dir)
	lp, err := layout.FromPath(dir)
	if err != nil {
		t.Fatalf("OCI layout: %v", err)
	}
	top, err := lp.ImageIndex()
	if err != nil {
		t.Fatalf("index.json: %v", err)
	}
	tm, err := top.IndexManifest()
	if err != nil {
		t.Fatalf("index.json: %v", err)
	}
	if len(tm.Manifests) != 1 {
		t.Fatalf("index.json lists %d entries, want 1 (the multi-arch index)", len(tm.Manifests))
	}
	d := tm.Manifests[0]
	for _, k := range []string{"org.opencontainers.image.ref.name", "io.containerd.image.name"} {
		if d.Annotations[k] != ref.String() {
			t.Errorf("index.json annotation %s = %q, want %q", k, d.Annotations[k], ref.String())
		}
	}
	if d.MediaType != types.OCIImageIndex {
		t.Fatalf("index.json entry is a %s, want an image index", d.MediaType)
	}
	idx, err := top.ImageIndex(d.Digest)
	if err != nil {
		t.Fatalf("the multi-arch index: %v", err)
	}
	return idx
}

func checkConfig(t *testing.T, plat string, img v1.Image) {
	t.Helper()
	mt, err := img.MediaType()
	if err != nil || mt != types.OCIManifestSchema1 {
		t.Errorf("%s: manifest media type %s (%v), want %s", plat, mt, err, types.OCIManifestSchema1)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatalf("%s: config: %v", plat, err)
	}
	if got := cf.OS + "/" + cf.Architecture; got != plat {
		t.Errorf("%s: config platform %s", plat, got)
	}
	if !cf.Created.Equal(testCreated) {
		t.Errorf("%s: created %v, want %v", plat, cf.Created.Time, testCreated)
	}
	c := cf.Config
	for _, f := range []struct {
		field     string
		got, want any
	}{
		{"Entrypoint", c.Entrypoint, documentedEntrypoint},
		{"Cmd", c.Cmd, documentedCmd},
		{"Env", c.Env, documentedEnv},
		{"User", c.User, documentedUser},
		{"WorkingDir", c.WorkingDir, documentedWorkDir},
		{"Labels", c.Labels, map[string]string{
			"org.opencontainers.image.title":    "liqo-relay",
			"org.opencontainers.image.source":   "https://github.com/liqo-relay/relay",
			"org.opencontainers.image.version":  testVersion,
			"org.opencontainers.image.revision": testRevision,
		}},
	} {
		if !reflect.DeepEqual(f.got, f.want) {
			t.Errorf("%s: config.%s = %#v, want %#v", plat, f.field, f.got, f.want)
		}
	}
	for i, h := range cf.History {
		if !h.Created.Equal(testCreated) {
			t.Errorf("%s: history[%d] created %v, want %v", plat, i, h.Created.Time, testCreated)
		}
	}
}

// extractBinary flattens the image's filesystem and returns the relay
// binary, checking that it is the only file: no shell, nothing else.
func extractBinary(t *testing.T, plat string, img v1.Image) []byte {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	var names []string
	var bin []byte
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: reading the filesystem: %v", plat, err)
		}
		names = append(names, hdr.Name)
		base := filepath.Base(hdr.Name)
		if base == "sh" || base == "bash" || base == "ash" || base == "busybox" {
			t.Errorf("%s: the image has a shell: %s", plat, hdr.Name)
		}
		if "/"+strings.TrimPrefix(hdr.Name, "./") != BinaryPath {
			continue
		}
		if hdr.Typeflag != tar.TypeReg || hdr.Mode != 0o755 || hdr.Uid != 0 || hdr.Gid != 0 {
			t.Errorf("%s: %s: type %c mode %o owner %d:%d, want a regular file, 0755, root-owned", plat, hdr.Name, hdr.Typeflag, hdr.Mode, hdr.Uid, hdr.Gid)
		}
		if !hdr.ModTime.Equal(testCreated) {
			t.Errorf("%s: %s dated %v, want %v", plat, hdr.Name, hdr.ModTime, testCreated)
		}
		if bin, err = io.ReadAll(tr); err != nil {
			t.Fatalf("%s: reading %s: %v", plat, hdr.Name, err)
		}
	}
	if !reflect.DeepEqual(names, []string{"relay"}) {
		t.Errorf("%s: the image's files are %q, want only %s", plat, names, BinaryPath)
	}
	if bin == nil {
		t.Fatalf("%s: no %s in the image", plat, BinaryPath)
	}
	return bin
}

// checkELF checks that bin is a static Linux executable for plat's
// architecture, built without the module's absolute path (-trimpath).
func checkELF(t *testing.T, plat string, bin []byte, moduleDir string) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		t.Fatalf("%s: %s is not an ELF file: %v", plat, BinaryPath, err)
	}
	defer f.Close()
	want := map[string]elf.Machine{"linux/amd64": elf.EM_X86_64, "linux/arm64": elf.EM_AARCH64}[plat]
	if f.Machine != want || f.Type != elf.ET_EXEC {
		t.Errorf("%s: ELF machine %v type %v, want %v ET_EXEC", plat, f.Machine, f.Type, want)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("%s: ELF has a %v program header: not static", plat, p.Type)
		}
	}
	if bytes.Contains(bin, []byte(moduleDir)) {
		t.Errorf("%s: the binary holds the build path %s: not built with -trimpath", plat, moduleDir)
	}
}

// checkRunsVersion runs the extracted binary with the image's entrypoint
// and `version`, as `docker run IMAGE version` would.
func checkRunsVersion(t *testing.T, bin []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "relay")
	if err := os.WriteFile(path, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(path, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s version: %v\n%s", BinaryPath, err, out)
	}
	want := "relay " + testVersion + " (go"
	if !strings.HasPrefix(string(out), want) || !strings.HasSuffix(string(out), ", linux/"+runtime.GOARCH+")\n") {
		t.Errorf("%s version printed %q, want %q...linux/%s)", BinaryPath, out, want, runtime.GOARCH)
	}
}

// checkDockerArchive checks that the docker archive of plat loads, is
// tagged ref and holds the same config and layer as the index's image.
func checkDockerArchive(t *testing.T, plat, path string, ref name.Tag, want v1.Image) {
	t.Helper()
	img, err := tarball.ImageFromPath(path, &ref)
	if err != nil {
		t.Fatalf("%s: docker archive %s tagged %s: %v", plat, path, ref, err)
	}
	if err := validate.Image(img); err != nil {
		t.Errorf("%s: docker archive: validate.Image: %v", plat, err)
	}
	m, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(path) })
	if err != nil || len(m) != 1 || !reflect.DeepEqual(m[0].RepoTags, []string{ref.String()}) {
		t.Errorf("%s: docker archive manifest.json %+v (%v), want one image tagged %s", plat, m, err, ref)
	}
	gotCfg, err1 := img.ConfigName()
	wantCfg, err2 := want.ConfigName()
	if err := errors.Join(err1, err2); err != nil || gotCfg != wantCfg {
		t.Errorf("%s: docker archive config %s, the index's %s (%v)", plat, gotCfg, wantCfg, err)
	}
	gotLayers, err1 := img.Layers()
	wantLayers, err2 := want.Layers()
	if err := errors.Join(err1, err2); err != nil || len(gotLayers) != 1 || len(wantLayers) != 1 {
		t.Fatalf("%s: layers %d and %d (%v), want one each", plat, len(gotLayers), len(wantLayers), err)
	}
	gd, err1 := gotLayers[0].Digest()
	wd, err2 := wantLayers[0].Digest()
	if err := errors.Join(err1, err2); err != nil || gd != wd {
		t.Errorf("%s: docker archive layer %s, the index's %s (%v)", plat, gd, wd, err)
	}
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(data)
}
