package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/liqo-relay/relay/build/image"
	"github.com/liqo-relay/relay/build/image/imagetest"
	"github.com/liqo-relay/relay/build/manifestgen"
)

// testVersion is the version the test releases: not this checkout's, so
// that a place taking the version from anywhere but VERSION shows.
const testVersion = "0.9.0-releasecheck"

// TestMakeReleaseOneVersionReproducible runs `make release` twice on this
// checkout, into two folders, and checks that both hold the same bytes,
// that SHA256SUMS covers every file, and that the one version reaches
// every place a platform team reads it from: the binary (`relay version
// --json`), relay_build_info, the image tags and labels, the chart's
// version and appVersion, and the image the chart deploys by default.
func TestMakeReleaseOneVersionReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the release (images for two platforms): not in -short")
	}
	for _, tool := range []string{"make", "sha256sum", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: `make release` needs it", tool)
		}
	}
	a, b := makeRelease(t), makeRelease(t)
	sums := checkSums(t, a)
	if other := checkSums(t, b); !bytes.Equal(sums, other) {
		t.Fatalf("two releases of one commit differ:\n%s\n---\n%s", sums, other)
	}
	checkBinary(t, a)
	checkImages(t, a)
	checkChart(t, a)
}

// makeRelease runs `make release` into a new folder and returns the
// release's directory.
func makeRelease(t *testing.T) string {
	t.Helper()
	out := t.TempDir()
	cmd := exec.Command("make", "-C", "../..", "release", "VERSION="+testVersion, "RELEASE_DIR="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make release: %v\n%s", err, b)
	}
	return filepath.Join(out, testVersion)
}

// checkSums checks SHA256SUMS lists every other file in dir with its
// digest, and returns it.
func checkSums(t *testing.T, dir string) []byte {
	t.Helper()
	sums, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		sum, file, ok := strings.Cut(l, "  ")
		if !ok {
			t.Fatalf("SHA256SUMS: %q is not DIGEST  FILE", l)
		}
		listed[file] = sum
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"SHA256SUMS", "liqo-relay-" + testVersion + ".tgz", image.OCIArchiveName,
		"relay-docker-linux-amd64.tar", "relay-docker-linux-arm64.tar", "relay-linux-amd64", "relay-linux-arm64"}
	if len(ents) != len(want) {
		t.Errorf("the release holds %d files, want %v", len(ents), want)
	}
	for _, e := range ents {
		if e.Name() == "SHA256SUMS" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		d := sha256.Sum256(b)
		if listed[e.Name()] != hex.EncodeToString(d[:]) {
			t.Errorf("%s: SHA256SUMS says %q, the file's digest is %x", e.Name(), listed[e.Name()], d)
		}
	}
	return sums
}

// checkBinary runs the release's binary for this machine: its version,
// and relay_build_info from a running relay.
func checkBinary(t *testing.T, dir string) {
	t.Helper()
	bin := filepath.Join(dir, "relay-linux-"+runtime.GOARCH)
	if _, err := os.Stat(bin); err != nil || runtime.GOOS != "linux" {
		t.Logf("no release binary runs on %s/%s: its version is not checked", runtime.GOOS, runtime.GOARCH)
		return
	}
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatalf("relay version --json: %v", err)
	}
	var v struct{ Version string }
	if err := json.Unmarshal(out, &v); err != nil || v.Version != testVersion {
		t.Errorf("relay version --json: %s (%v), want version %s", out, err, testVersion)
	}
	if got := buildInfoVersion(t, bin); got != testVersion {
		t.Errorf("relay_build_info's version is %q, want %s", got, testVersion)
	}
}

// buildInfoVersion runs the relay on loopback (netstack mode, no peers)
// and reads the version label of relay_build_info from its admin server.
func buildInfoVersion(t *testing.T, bin string) string {
	t.Helper()
	admin := freeAddr(t, "tcp")
	port := freeAddr(t, "udp")
	_, p, _ := net.SplitHostPort(port)
	cfg := filepath.Join(t.TempDir(), "relay.yaml")
	conf := fmt.Sprintf("name: check\nprivateKey: yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=\nlistenPort: %s\n"+
		"mode: netstack\naddresses: [100.80.0.1/32]\nadmin: %s\npeers: []\n", p, admin)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "-c", cfg)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	re := regexp.MustCompile(`relay_build_info\{[^}]*version="([^"]*)"`)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get("http://" + admin + "/metrics"); err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if m := re.FindSubmatch(body); m != nil {
				return string(m[1])
			}
		}
		time.Sleep(100 * time.Millisecond) // real: the relay process starting its admin server
	}
	t.Fatalf("no relay_build_info from the relay within 20 s:\n%s", logs.String())
	return ""
}

// freeAddr is a loopback address with a port free for network.
func freeAddr(t *testing.T, network string) string {
	t.Helper()
	if network == "udp" {
		c, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.LocalAddr().String()
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// checkImages checks the OCI archive is named REPO:VERSION and each of its
// images carries the version label, and each docker archive holds the
// image tagged REPO:VERSION.
func checkImages(t *testing.T, dir string) {
	t.Helper()
	ref := image.Repository + ":" + testVersion
	oci := filepath.Join(t.TempDir(), "oci")
	imagetest.Untar(t, filepath.Join(dir, image.OCIArchiveName), oci)
	idx, err := layout.ImageIndexFromPath(oci)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != ref {
		t.Fatalf("OCI archive's index: %+v, want one index named %s", im.Manifests, ref)
	}
	inner, err := idx.ImageIndex(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	imgs, err := inner.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range imgs.Manifests {
		img, err := inner.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if got := cf.Config.Labels[image.LabelVersion]; got != testVersion {
			t.Errorf("image for %v: label %s=%q, want %s", d.Platform, image.LabelVersion, got, testVersion)
		}
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"amd64", "arm64"} {
		if _, err := tarball.ImageFromPath(filepath.Join(dir, "relay-docker-linux-"+arch+".tar"), &tag); err != nil {
			t.Errorf("docker archive for %s: no image tagged %s: %v", arch, ref, err)
		}
	}
}

// checkChart checks the packaged chart's version and appVersion, and that
// every relay image it renders by default is REPO:VERSION.
func checkChart(t *testing.T, dir string) {
	t.Helper()
	tgz := filepath.Join(dir, "liqo-relay-"+testVersion+".tgz")
	chart := chartFile(t, tgz, "liqo-relay/Chart.yaml")
	for _, k := range []string{"version", "appVersion"} {
		if !regexp.MustCompile(`(?m)^` + k + `: "?` + regexp.QuoteMeta(testVersion) + `"?$`).MatchString(chart) {
			t.Errorf("the packaged Chart.yaml's %s is not %s:\n%s", k, testVersion, chart)
		}
	}
	helm := helmBinary(t)
	if helm == "" {
		return
	}
	out, err := exec.Command(helm, "template", "r", tgz, "--namespace", "liqo-relay", "--kube-version", manifestgen.KubeVersion).CombinedOutput()
	if err != nil {
		t.Fatalf("helm template of the packaged chart: %v\n%s", err, out)
	}
	imgs := regexp.MustCompile(`(?m)image: "?(\S*liqo-relay/relay\S*?)"?$`).FindAllStringSubmatch(string(out), -1)
	if len(imgs) == 0 {
		t.Fatalf("the packaged chart renders no relay image:\n%s", out)
	}
	for _, m := range imgs {
		if m[1] != image.Repository+":"+testVersion {
			t.Errorf("the chart deploys %s by default, want %s:%s", m[1], image.Repository, testVersion)
		}
	}
}

// chartFile reads one file of a chart archive.
func chartFile(t *testing.T, tgz, file string) string {
	t.Helper()
	f, err := os.Open(tgz)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s: no %s (%v)", tgz, file, err)
		}
		if h.Name == file {
			b, _ := io.ReadAll(tr)
			return string(b)
		}
	}
}

// helmBinary is the helm that test/k8s/cluster.sh builds, or "" (logged)
// when it has not been built.
func helmBinary(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("../../test/k8s/cluster.sh", "bin").Output()
	if err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "helm")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Log("no helm built (make k8s-tools): the packaged chart is not rendered")
	return ""
}
