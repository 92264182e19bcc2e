package image

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Annotations naming the index in index.json: the OCI one (podman load,
// skopeo oci-archive:) and containerd's (ctr import, docker load with the
// containerd image store).
const (
	annotationRefName       = "org.opencontainers.image.ref.name"
	annotationContainerdRef = "io.containerd.image.name"
)

// writeOCIArchive writes idx, named ref, as an OCI image layout in a tar
// file at path. The entries are sorted, owned by root and dated mtime, so
// the tarball depends only on idx.
func writeOCIArchive(path string, idx v1.ImageIndex, ref name.Tag, mtime time.Time) error {
	dir, err := os.MkdirTemp(filepath.Dir(path), ".oci-layout-")
	if err != nil {
		return fmt.Errorf("OCI layout: %w", err)
	}
	defer os.RemoveAll(dir)
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("OCI layout in %s: %w", dir, err)
	}
	if err := lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		annotationRefName:       ref.String(),
		annotationContainerdRef: ref.String(),
	})); err != nil {
		return fmt.Errorf("OCI layout in %s: %w", dir, err)
	}
	return tarDir(path, dir, mtime)
}

// tarDir writes the tree under dir as a tar file at path, in lexical
// order (filepath.WalkDir's), with fixed owners, modes and times.
func tarDir(path, dir string, mtime time.Time) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("closing %s: %w", path, cerr)
		}
	}()
	tw := tar.NewWriter(f)
	mtime = mtime.UTC().Truncate(time.Second)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		hdr := &tar.Header{Name: filepath.ToSlash(rel), ModTime: mtime, Format: tar.FormatUSTAR}
		if d.IsDir() {
			hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, hdr.Name+"/", 0o755
			return tw.WriteHeader(hdr)
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", p)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, 0o644, info.Size()
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(tw, src)
		return err
	})
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// writeDockerArchive writes img, tagged ref, in the format of `docker
// save` (manifest.json), which docker load, podman load and ctr import
// read.
func writeDockerArchive(path string, img v1.Image, ref name.Tag) error {
	if err := tarball.WriteToFile(path, ref, img); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
