package layoutcheck

import (
	"bytes"
	"fmt"
	"go/parser"
	"go/token"
	"regexp"
	"strings"
)

// historyWords match comments that narrate how the code came to be rather
// than what it does: references to a tracker's numbered tickets, and what
// the code did before. The repository's history is in git; a comment is
// read by someone changing the code as it is.
var historyWords = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\bissues? #?\d+\b`),
	regexp.MustCompile(`(?i)\b(it|they|this|we|which|that) used to\b`),
	regexp.MustCompile(`(?i)\bused to (sit|live|be|take|call|run|read|print|reject|keep|hold)\b`),
	regexp.MustCompile(`(?i)\bformerly\b`),
	regexp.MustCompile(`(?i)\bin (the|an) (old|earlier|previous) (version|design|layout)\b`),
}

// HistoryComment is one comment line that narrates history.
type HistoryComment struct {
	Where string // path:line
	Text  string
}

func (h HistoryComment) String() string { return h.Where + ": " + h.Text }

// GoHistory reports the comment lines of a Go source that narrate history.
func GoHistory(path string, src []byte) ([]HistoryComment, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	var out []HistoryComment
	for _, g := range f.Comments {
		for _, c := range g.List {
			line := fset.Position(c.Pos()).Line
			for i, text := range strings.Split(c.Text, "\n") {
				if matchesHistory(text) {
					out = append(out, HistoryComment{Where: fmt.Sprintf("%s:%d", path, line+i), Text: strings.TrimSpace(text)})
				}
			}
		}
	}
	return out, nil
}

// HashHistory reports the '#' comment lines of a shell script, a Makefile
// or YAML that narrate history.
func HashHistory(path string, src []byte) []HistoryComment {
	var out []HistoryComment
	n := 0
	for line := range bytes.Lines(src) {
		n++
		_, comment, ok := strings.Cut(string(line), "#")
		if ok && matchesHistory(comment) {
			out = append(out, HistoryComment{Where: fmt.Sprintf("%s:%d", path, n), Text: strings.TrimSpace(string(line))})
		}
	}
	return out
}

func matchesHistory(text string) bool {
	for _, re := range historyWords {
		if re.MatchString(text) {
			return true
		}
	}
	return false
}
