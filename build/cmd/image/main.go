// Command image builds the relay's OCI image without a Docker daemon
// (`make image`): an OCI layout tarball with the linux/amd64 and
// linux/arm64 images, and one docker-loadable tarball per platform. It is
// build tooling and never ships; docs/image.md describes the image.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/liqo-relay/relay/build/image"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "bin/image", "output directory")
	repo := fs.String("repo", image.Repository, "image name the tarballs are tagged with (REPO:VERSION)")
	version := fs.String("version", "", "the relay's version: linked into the binary, the tag and a label")
	revision := fs.String("revision", "", "source revision (org.opencontainers.image.revision)")
	epoch := fs.String("source-date-epoch", os.Getenv("SOURCE_DATE_EPOCH"), "every timestamp in the image, in seconds since 1970 (default $SOURCE_DATE_EPOCH)")
	platforms := fs.String("platforms", "linux/amd64,linux/arm64", "comma-separated os/arch list")
	module := fs.String("module", ".", "root of the relay's module")
	goCmd := fs.String("go", "go", "the go command")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	created, err := image.EpochTime(*epoch)
	if err != nil {
		fmt.Fprintf(stderr, "image: %v\n", err)
		return 2
	}
	plats, err := image.ParsePlatforms(strings.Split(*platforms, ","))
	if err != nil {
		fmt.Fprintf(stderr, "image: -platforms: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	_, err = image.Build(ctx, image.Options{
		Meta:       image.Meta{Version: *version, Revision: *revision, Created: created},
		Repository: *repo,
		Platforms:  plats,
		ModuleDir:  *module,
		OutDir:     *out,
		Go:         *goCmd,
		Env:        os.Environ(),
	}, log)
	if err != nil {
		fmt.Fprintf(stderr, "image: %v\n", err)
		return 1
	}
	return 0
}
