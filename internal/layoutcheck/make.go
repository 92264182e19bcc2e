package layoutcheck

import (
	"regexp"
	"strings"
)

// ruleLine matches a Makefile rule's first line: "name: prerequisites",
// not a variable assignment (":=").
var ruleLine = regexp.MustCompile(`^([a-z][a-z0-9-]*):([^=].*)?$`)

// UndescribedTargets returns the targets of a Makefile whose rule line has
// no "## description", which `make help` prints.
func UndescribedTargets(makefile string) []string {
	var out []string
	for _, line := range strings.Split(makefile, "\n") {
		m := ruleLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if _, desc, ok := strings.Cut(m[2], "## "); !ok || strings.TrimSpace(desc) == "" {
			out = append(out, m[1])
		}
	}
	return out
}
