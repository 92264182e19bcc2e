package image

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// versionSymbol is the variable the linker sets to the version, as the
// Makefile's build target does; commitSymbol and dateSymbol get the
// revision and its time, as the Makefile's LDFLAGS set them.
const (
	versionSymbol = "github.com/liqo-relay/relay/internal/version.Version"
	commitSymbol  = "github.com/liqo-relay/relay/internal/version.Commit"
	dateSymbol    = "github.com/liqo-relay/relay/internal/version.BuildDate"
)

// mainPackage is the one product binary.
const mainPackage = "./cmd/relay"

// GoBuildArgs are the arguments of `go build` for the image's binary:
// no absolute paths, no VCS stamp (the version and the revision label say
// which source it is, and a build without .git, as in the Dockerfile, gives
// the same binary), the version, commit and build date (the commit's time,
// RFC 3339 UTC) set by the linker.
func GoBuildArgs(version, commit, buildDate, out string) []string {
	return []string{"build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-X " + versionSymbol + "=" + version + " -X " + commitSymbol + "=" + commit + " -X " + dateSymbol + "=" + buildDate,
		"-o", out, mainPackage}
}

// GoBuildEnv is the environment `go build` adds for platform p: no cgo, so
// the binary is static and the image needs no libc.
func GoBuildEnv(p v1.Platform) []string {
	return []string{"CGO_ENABLED=0", "GOOS=" + p.OS, "GOARCH=" + p.Architecture}
}

// compile builds the relay of m for platform p into out, running the go
// command goCmd in moduleDir with env (the caller's environment) plus
// GoBuildEnv.
func compile(ctx context.Context, goCmd, moduleDir string, env []string, p v1.Platform, m Meta, out string) error {
	date := m.Created.UTC().Format(time.RFC3339)
	cmd := exec.CommandContext(ctx, goCmd, GoBuildArgs(m.Version, m.Revision, date, out)...)
	cmd.Dir = moduleDir
	cmd.Env = append(append([]string{}, env...), GoBuildEnv(p)...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("compiling %s for %s: %w\n%s", mainPackage, platformKey(p), err, stderr.Bytes())
	}
	return nil
}
