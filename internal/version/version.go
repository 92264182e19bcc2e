// Package version holds the relay's build version, set by the linker.
package version

import "runtime/debug"

// Version is set with -ldflags "-X github.com/liqo-relay/relay/internal/version.Version=...".
var Version = ""

// String returns the version, falling back to the module's build info.
func String() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
