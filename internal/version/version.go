// Package version holds the relay's build identity, set by the linker: the
// version, the commit it was built from and that commit's date.
package version

import "runtime/debug"

// The linker sets these with -ldflags "-X
// github.com/liqo-relay/relay/internal/version.NAME=VALUE" (the Makefile's
// LDFLAGS, build/image's go build).
var (
	// Version is the release version (build/version.sh).
	Version = ""
	// Commit is the source revision, `git rev-parse HEAD`.
	Commit = ""
	// BuildDate is the commit's time in RFC 3339, UTC: the commit's and not
	// the clock's, so that two builds of one commit give the same binary.
	BuildDate = ""
)

// Unknown is what Get reports for a commit or date that neither the linker
// nor the Go toolchain's VCS stamp set.
const Unknown = "unknown"

// Info is the build identity of the running binary.
type Info struct {
	Version   string // String()
	Commit    string // Commit, else the VCS stamp's vcs.revision, else Unknown
	BuildDate string // BuildDate, else the VCS stamp's vcs.time, else Unknown
}

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

// Get returns the build identity. A value the linker did not set comes
// from the VCS stamp that `go build` adds in a git checkout, when there is
// one.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return info(String(), Commit, BuildDate, bi)
}

// info fills commit and date from bi's VCS settings when they are empty,
// and with Unknown when bi has none either. bi may be nil.
func info(v, commit, date string, bi *debug.BuildInfo) Info {
	if bi != nil {
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && commit == "":
				commit = s.Value
			case s.Key == "vcs.time" && date == "":
				date = s.Value
			}
		}
	}
	if commit == "" {
		commit = Unknown
	}
	if date == "" {
		date = Unknown
	}
	return Info{Version: v, Commit: commit, BuildDate: date}
}
