package layoutcheck

import (
	"regexp"
	"slices"
	"strings"
)

// tableRow matches a row of a Markdown table whose first cell names one or
// more paths in backquotes: | `internal/agent` | ... |.
var tableRow = regexp.MustCompile("^\\|\\s*((?:`[^`]+`[ ,]*)+)\\|")

// quoted matches one backquoted item.
var quoted = regexp.MustCompile("`([^`]+)`")

// DocumentedPackages returns the directories the first column of the
// document's tables names (a trailing slash is dropped).
func DocumentedPackages(doc string) []string {
	var dirs []string
	for _, line := range strings.Split(doc, "\n") {
		m := tableRow.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		for _, q := range quoted.FindAllStringSubmatch(m[1], -1) {
			dirs = append(dirs, strings.TrimSuffix(q[1], "/"))
		}
	}
	slices.Sort(dirs)
	return slices.Compact(dirs)
}

// Undocumented returns the package directories the document does not list.
func Undocumented(packages, documented []string) []string {
	var out []string
	for _, p := range packages {
		if !slices.Contains(documented, p) {
			out = append(out, p)
		}
	}
	return out
}

// Stale returns the documented directories that hold no package.
func Stale(packages, documented []string) []string {
	var out []string
	for _, d := range documented {
		if !slices.Contains(packages, d) {
			out = append(out, d)
		}
	}
	return out
}
