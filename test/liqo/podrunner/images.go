package podrunner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Images maps an image reference without tag or digest
// ("ghcr.io/liqotech/gateway/wireguard") to the absolute path of the host
// binary that stands for that image's entrypoint.
type Images map[string]string

// LoadImages reads an image map from a JSON object in file path.
func LoadImages(path string) (Images, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the image map: %w", err)
	}
	var m Images
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("parsing the image map %s: %w", path, err)
	}
	for ref, bin := range m {
		if !filepath.IsAbs(bin) {
			return nil, fmt.Errorf("image map %s: %q maps to %q, not an absolute path", path, ref, bin)
		}
		if ImageName(ref) != ref {
			return nil, fmt.Errorf("image map %s: key %q carries a tag or digest; use %q", path, ref, ImageName(ref))
		}
	}
	return m, nil
}

// Entrypoint returns the binary standing for image (tag and digest
// ignored).
func (m Images) Entrypoint(image string) (string, bool) {
	bin, ok := m[ImageName(image)]
	return bin, ok
}

// ImageName strips the digest (@sha256:...) and the tag (:v1) from an
// image reference, leaving a registry port (host:5000/x) alone.
func ImageName(ref string) string {
	if i := strings.IndexByte(ref, '@'); i >= 0 {
		ref = ref[:i]
	}
	slash := strings.LastIndexByte(ref, '/')
	if i := strings.LastIndexByte(ref, ':'); i > slash {
		ref = ref[:i]
	}
	return ref
}
