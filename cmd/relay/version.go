package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"

	"github.com/liqo-relay/relay/internal/core/health"
	"github.com/liqo-relay/relay/internal/version"
)

// versionInfo is what `relay version` prints; its JSON names are an
// interface for scripts.
type versionInfo struct {
	Version         string `json:"version"`
	Commit          string `json:"commit"`
	BuildDate       string `json:"buildDate"` // the commit's time, RFC 3339 UTC
	GoVersion       string `json:"goVersion"`
	Platform        string `json:"platform"`        // GOOS/GOARCH
	ProtocolVersion int    `json:"protocolVersion"` // the probe protocol (docs/protocol.md)
}

func currentVersion() versionInfo {
	v := version.Get()
	return versionInfo{
		Version: v.Version, Commit: v.Commit, BuildDate: v.BuildDate,
		GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
		ProtocolVersion: health.Version,
	}
}

func setupVersion() (*flag.FlagSet, runFunc) {
	fs := newFlagSet("version")
	asJSON := fs.Bool("json", false, "print a JSON object: version, commit, buildDate, goVersion, platform, protocolVersion")
	return fs, func(inv *invocation) error { return cmdVersion(currentVersion(), *asJSON, inv.stdout) }
}

// cmdVersion prints v on one line that starts "relay VERSION (go" and ends
// with the platform, or as JSON.
func cmdVersion(v versionInfo, asJSON bool, stdout io.Writer) error {
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	_, err := fmt.Fprintf(stdout, "relay %s (%s, commit %s, built %s, probe protocol %d, %s)\n",
		v.Version, v.GoVersion, v.Commit, v.BuildDate, v.ProtocolVersion, v.Platform)
	return err
}
