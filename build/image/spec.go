// Package image builds the relay's OCI image without a Docker daemon: it
// cross-compiles cmd/relay into a static binary per platform, lays it into
// a one-layer image on an empty base, and writes an OCI image index
// (multi-arch) as an OCI layout tarball plus one docker-loadable tarball
// per platform. Timestamps come from the caller (SOURCE_DATE_EPOCH), so the
// same sources and toolchain give the same bytes.
//
// It is build tooling, never part of the relay: only build/ may import it
// or go-containerregistry (internal/depscheck). docs/image.md documents
// the settings below; the repository's Dockerfile repeats them, and
// TestDockerfileMatchesBuilder keeps the two in step.
package image

import (
	"fmt"
	"regexp"
	"slices"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// The image's settings, as docs/image.md documents them.
const (
	// BinaryPath is where the relay binary lies, the one file in the image.
	BinaryPath = "/relay"
	// User is the default user: numeric, so that no /etc/passwd is needed,
	// and non-root. TUN mode needs NET_ADMIN and /dev/net/tun, which the
	// pod's securityContext grants (the chart does); netstack mode needs
	// neither.
	User = "65532:65532"
	// WorkingDir is the process's working directory.
	WorkingDir = "/"
	// ConfigPath is the configuration file the default command reads.
	ConfigPath = "/etc/relay/relay.yaml"
	// Repository is the default image name the tarballs are tagged with.
	Repository = "ghcr.io/liqo-relay/relay"
	// Source is the org.opencontainers.image.source label.
	Source = "https://github.com/liqo-relay/relay"
	// Title is the org.opencontainers.image.title label.
	Title = "liqo-relay"
)

// OCI annotation keys used as image labels.
const (
	LabelTitle    = "org.opencontainers.image.title"
	LabelSource   = "org.opencontainers.image.source"
	LabelVersion  = "org.opencontainers.image.version"
	LabelRevision = "org.opencontainers.image.revision"
)

// Entrypoint is the image's entrypoint: the relay itself, no shell.
func Entrypoint() []string { return []string{BinaryPath} }

// Cmd is the default command: the relay in Kubernetes mode with the
// configuration mounted at ConfigPath. Pods usually set their own args.
func Cmd() []string { return []string{"run", "--kubernetes", "-c", ConfigPath} }

// Env is the image's environment. PATH=/ lets `kubectl exec POD -c relay
// -- relay status` find /relay without a shell.
func Env() []string { return []string{"PATH=/"} }

// Labels returns the image's labels for a version and a source revision.
func Labels(version, revision string) map[string]string {
	return map[string]string{
		LabelTitle:    Title,
		LabelSource:   Source,
		LabelVersion:  version,
		LabelRevision: revision,
	}
}

// Platforms are the platforms `make image` builds: Liqo runs at the edge
// as well as in data centres.
func Platforms() []v1.Platform {
	return []v1.Platform{
		{OS: "linux", Architecture: "amd64"},
		{OS: "linux", Architecture: "arm64"},
	}
}

// Config returns the image's runtime configuration.
func Config(version, revision string) v1.Config {
	return v1.Config{
		Entrypoint: Entrypoint(),
		Cmd:        Cmd(),
		Env:        Env(),
		User:       User,
		WorkingDir: WorkingDir,
		Labels:     Labels(version, revision),
	}
}

// tagPattern is the grammar of an image tag; the version is the tag.
var tagPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

// checkVersion rejects a version that cannot be an image tag (it is also
// passed to the linker, where spaces would split it).
func checkVersion(version string) error {
	if !tagPattern.MatchString(version) {
		return fmt.Errorf("version %q: must be a valid image tag ([A-Za-z0-9_][A-Za-z0-9_.-]*, at most 128 characters)", version)
	}
	return nil
}

// platformKey is "os/arch", the name of a platform in flags and results.
func platformKey(p v1.Platform) string { return p.OS + "/" + p.Architecture }

// ParsePlatforms parses a comma-separated list of os/arch pairs.
func ParsePlatforms(list []string) ([]v1.Platform, error) {
	var out []v1.Platform
	for _, s := range list {
		p, err := v1.ParsePlatform(s)
		if err != nil {
			return nil, fmt.Errorf("platform %q: %w", s, err)
		}
		if p.OS != "linux" || p.Architecture == "" || p.Variant != "" {
			return nil, fmt.Errorf("platform %q: want linux/ARCH (the relay is Linux only)", s)
		}
		if slices.ContainsFunc(out, func(q v1.Platform) bool { return platformKey(q) == platformKey(*p) }) {
			return nil, fmt.Errorf("platform %q: listed twice", s)
		}
		out = append(out, *p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no platform")
	}
	return out, nil
}
