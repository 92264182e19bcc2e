package image

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// The files Build writes under Options.OutDir.
const (
	// OCIArchiveName is the OCI image layout tarball holding the
	// multi-arch index.
	OCIArchiveName = "relay-oci.tar"
	// dockerArchivePattern names the per-platform docker-loadable
	// tarballs, by OS and architecture.
	dockerArchivePattern = "relay-docker-%s-%s.tar"
)

// DockerArchiveName is the name of the docker-loadable tarball of p.
func DockerArchiveName(p v1.Platform) string {
	return fmt.Sprintf(dockerArchivePattern, p.OS, p.Architecture)
}

// Options say what Build builds and where.
type Options struct {
	Meta
	// Repository names the image: the tarballs are tagged
	// Repository:Version.
	Repository string
	// Platforms to build, in the index's order.
	Platforms []v1.Platform
	// ModuleDir is the root of the relay's module.
	ModuleDir string
	// OutDir receives the tarballs and, under os-arch/, the binaries.
	OutDir string
	// Go is the go command; Env is its environment (GoBuildEnv is added).
	Go  string
	Env []string
}

// Result says what Build wrote.
type Result struct {
	Ref        name.Tag
	Index      v1.ImageIndex
	OCIArchive string
	// Binaries and DockerArchives are keyed by "os/arch".
	Binaries       map[string]string
	DockerArchives map[string]string
}

func (o Options) check() error {
	var errs []error
	if err := checkVersion(o.Version); err != nil {
		errs = append(errs, err)
	}
	if o.Revision == "" {
		errs = append(errs, errors.New("revision: empty (the org.opencontainers.image.revision label)"))
	}
	if o.Created.IsZero() {
		errs = append(errs, errors.New("created: not set (SOURCE_DATE_EPOCH)"))
	}
	if len(o.Platforms) == 0 {
		errs = append(errs, errors.New("platforms: none"))
	}
	if o.ModuleDir == "" || o.OutDir == "" || o.Go == "" {
		errs = append(errs, errors.New("module dir, output dir and go command must all be set"))
	}
	return errors.Join(errs...)
}

// Build compiles the relay for every platform and writes the image
// tarballs.
func Build(ctx context.Context, o Options, log *slog.Logger) (Result, error) {
	if err := o.check(); err != nil {
		return Result{}, err
	}
	binaries := make(map[string]string, len(o.Platforms))
	for _, p := range o.Platforms {
		bin, err := filepath.Abs(filepath.Join(o.OutDir, p.OS+"-"+p.Architecture, "relay"))
		if err != nil {
			return Result{}, fmt.Errorf("output dir: %w", err)
		}
		log.Info("compiling the relay", "platform", platformKey(p), "version", o.Version, "out", bin)
		if err := compile(ctx, o.Go, o.ModuleDir, o.Env, p, o.Meta, bin); err != nil {
			return Result{}, err
		}
		binaries[platformKey(p)] = bin
	}
	return Write(o, binaries, log)
}

// Write assembles the images from binaries built for o.Platforms (keyed
// "os/arch") and writes the OCI archive and the docker archives to
// o.OutDir. Build calls it after compiling; its output depends only on
// the binaries and o.
func Write(o Options, binaries map[string]string, log *slog.Logger) (Result, error) {
	if err := o.check(); err != nil {
		return Result{}, err
	}
	ref, err := name.NewTag(o.Repository + ":" + o.Version)
	if err != nil {
		return Result{}, fmt.Errorf("image name %q: %w", o.Repository+":"+o.Version, err)
	}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return Result{}, fmt.Errorf("output dir: %w", err)
	}
	res := Result{Ref: ref, Binaries: binaries, DockerArchives: make(map[string]string, len(o.Platforms))}
	imgs := make([]v1.Image, 0, len(o.Platforms))
	for _, p := range o.Platforms {
		bin, ok := binaries[platformKey(p)]
		if !ok {
			return Result{}, fmt.Errorf("no binary for %s", platformKey(p))
		}
		img, err := assembleImage(bin, p, o.Meta)
		if err != nil {
			return Result{}, err
		}
		imgs = append(imgs, img)
		path := filepath.Join(o.OutDir, DockerArchiveName(p))
		if err := writeDockerArchive(path, img, ref); err != nil {
			return Result{}, err
		}
		res.DockerArchives[platformKey(p)] = path
		digest, err := img.Digest()
		if err != nil {
			return Result{}, fmt.Errorf("%s: %w", platformKey(p), err)
		}
		log.Info("wrote a docker archive", "platform", platformKey(p), "path", path, "image", ref.String(), "digest", digest.String())
	}
	if res.Index, err = assembleIndex(imgs, o.Platforms, o.Meta); err != nil {
		return Result{}, err
	}
	res.OCIArchive = filepath.Join(o.OutDir, OCIArchiveName)
	if err := writeOCIArchive(res.OCIArchive, res.Index, ref, o.Created); err != nil {
		return Result{}, err
	}
	digest, err := res.Index.Digest()
	if err != nil {
		return Result{}, fmt.Errorf("index digest: %w", err)
	}
	log.Info("wrote the OCI archive", "path", res.OCIArchive, "image", ref.String(), "index", digest.String())
	return res, nil
}

// EpochTime parses SOURCE_DATE_EPOCH (seconds since 1970, UTC).
func EpochTime(s string) (time.Time, error) {
	var sec int64
	if _, err := fmt.Sscan(s, &sec); err != nil || sec <= 0 || fmt.Sprint(sec) != s {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: want a positive number of seconds since 1970", s)
	}
	return time.Unix(sec, 0).UTC(), nil
}
