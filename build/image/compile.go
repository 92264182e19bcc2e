package image

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// versionSymbol is the variable the linker sets to the version, as the
// Makefile's build target does.
const versionSymbol = "github.com/liqo-relay/relay/internal/version.Version"

// mainPackage is the one product binary.
const mainPackage = "./cmd/relay"

// GoBuildArgs are the arguments of `go build` for the image's binary:
// no absolute paths, no VCS stamp (the version and the revision label say
// which source it is, and a build without .git, as in the Dockerfile, gives
// the same binary), the version set by the linker.
func GoBuildArgs(version, out string) []string {
	return []string{"build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-X " + versionSymbol + "=" + version,
		"-o", out, mainPackage}
}

// GoBuildEnv is the environment `go build` adds for platform p: no cgo, so
// the binary is static and the image needs no libc.
func GoBuildEnv(p v1.Platform) []string {
	return []string{"CGO_ENABLED=0", "GOOS=" + p.OS, "GOARCH=" + p.Architecture}
}

// compile builds the relay for platform p into out, running the go command
// goCmd in moduleDir with env (the caller's environment) plus GoBuildEnv.
func compile(ctx context.Context, goCmd, moduleDir string, env []string, p v1.Platform, version, out string) error {
	cmd := exec.CommandContext(ctx, goCmd, GoBuildArgs(version, out)...)
	cmd.Dir = moduleDir
	cmd.Env = append(append([]string{}, env...), GoBuildEnv(p)...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("compiling %s for %s: %w\n%s", mainPackage, platformKey(p), err, stderr.Bytes())
	}
	return nil
}
