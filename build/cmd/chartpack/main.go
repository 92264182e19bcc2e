// Command chartpack packages the relay's Helm chart for a release
// (`make release`): liqo-relay-VERSION.tgz, with Chart.yaml's version and
// appVersion set to the release version and every timestamp fixed
// (build/release). It is build tooling and never ships.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/liqo-relay/relay/build/image"
	"github.com/liqo-relay/relay/build/release"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("chartpack", flag.ContinueOnError)
	fs.SetOutput(stderr)
	chart := fs.String("chart", "manifests/chart/liqo-relay", "the chart's directory")
	out := fs.String("out", "bin/release", "directory to write liqo-relay-VERSION.tgz into")
	version := fs.String("version", "", "the release version (SemVer 2): the chart's version and appVersion")
	epoch := fs.String("source-date-epoch", os.Getenv("SOURCE_DATE_EPOCH"), "the archive's timestamps, in seconds since 1970 (default $SOURCE_DATE_EPOCH)")
	check := fs.Bool("check", false, "only check that -version can be a release's version, and write nothing")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *check {
		if err := release.CheckVersion(*version); err != nil {
			fmt.Fprintf(stderr, "chartpack: -version: %v\n", err)
			return 2
		}
		return 0
	}
	mtime, err := image.EpochTime(*epoch)
	if err != nil {
		fmt.Fprintf(stderr, "chartpack: %v\n", err)
		return 2
	}
	if err := release.CheckVersion(*version); err != nil {
		fmt.Fprintf(stderr, "chartpack: -version: %v\n", err)
		return 2
	}
	path := filepath.Join(*out, "liqo-relay-"+*version+".tgz")
	if err := write(path, *chart, *version, mtime); err != nil {
		fmt.Fprintf(stderr, "chartpack: %v\n", err)
		return 1
	}
	fmt.Fprintln(stderr, path)
	return 0
}
