package config

import (
	"fmt"
	"strconv"
	"strings"
)

// FieldError is one problem found in a configuration, with the path of the
// field it concerns, such as "peers[1].paths[0].endpoint". Path is empty for
// problems with the document as a whole (such as a YAML syntax error).
type FieldError struct {
	Path string
	Msg  string
}

// Error returns "path: msg", or msg alone when Path is empty.
func (e FieldError) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// Errors is every problem found in a configuration, in the order found. Parse
// and Validate return it as their error; use errors.As to get the list.
type Errors []FieldError

// Error returns one problem per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// errList collects problems. Problems recorded with decodef also mark their
// path as bad, so that later semantic checks (recorded with checkf) stay
// quiet about a field that could not even be decoded, or about its children.
type errList struct {
	errs Errors
	bad  map[string]bool
}

// maxErrors bounds the problems reported: past a few hundred, a human
// reads none of them, and a pathological document could yield millions.
const maxErrors = 500

func (l *errList) add(path, msg string) {
	switch n := len(l.errs); {
	case n < maxErrors:
		l.errs = append(l.errs, FieldError{Path: path, Msg: msg})
	case n == maxErrors:
		l.errs = append(l.errs, FieldError{Msg: fmt.Sprintf("too many problems; only the first %d are shown", maxErrors)})
	}
}

// decodef records a decoding problem and marks path as bad.
func (l *errList) decodef(path, msg string) {
	if l.bad == nil {
		l.bad = make(map[string]bool)
	}
	l.bad[path] = true
	l.add(path, msg)
}

// checkf records a semantic problem unless path, or a field containing it,
// already failed to decode.
func (l *errList) checkf(path, msg string) {
	if l.isBad(path) {
		return
	}
	l.add(path, msg)
}

func (l *errList) isBad(path string) bool {
	if len(l.bad) == 0 {
		return false
	}
	for p := path; ; {
		if l.bad[p] {
			return true
		}
		i := strings.LastIndexAny(p, ".[")
		if i <= 0 {
			return false
		}
		p = p[:i]
	}
}

func (l *errList) err() error {
	if len(l.errs) == 0 {
		return nil
	}
	return l.errs
}

// field joins a parent path and a field name.
func field(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// index joins a list path and an element index.
func index(parent string, i int) string {
	return parent + "[" + strconv.Itoa(i) + "]"
}
