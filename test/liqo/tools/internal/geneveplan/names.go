package geneveplan

import (
	"errors"
	"fmt"
	"strings"
)

const (
	// NamePrefix starts every device name Liqo gives its geneve tunnels
	// (internalnetwork.InterfaceNamePrefix). The stand-in never touches a
	// device whose name lacks it.
	NamePrefix = "liqo."

	// maxNameLen is the kernel's limit on a device name (IFNAMSIZ less the
	// terminating NUL). Liqo's names are the prefix and 10 characters: 15.
	maxNameLen = 15

	// MaxVNI is the largest VNI a vxlan device takes (24 bits). Liqo's ID
	// allocator hands out 0 .. 2^24-2.
	MaxVNI = 1<<24 - 1
)

// ErrBadName reports a device name the stand-in refuses to make.
var ErrBadName = errors.New("bad device name")

// CheckName reports whether name is one the stand-in may make: Liqo's
// prefix, something after it, within the kernel's length limit and free of
// the characters the kernel rejects.
func CheckName(name string) error {
	switch {
	case !strings.HasPrefix(name, NamePrefix) || len(name) == len(NamePrefix):
		return fmt.Errorf("%w %q: want %q and a suffix", ErrBadName, name, NamePrefix)
	case len(name) > maxNameLen:
		return fmt.Errorf("%w %q: longer than %d bytes", ErrBadName, name, maxNameLen)
	case strings.ContainsAny(name, "/: \t\n\x00"):
		return fmt.Errorf("%w %q: contains '/', ':' or white space", ErrBadName, name)
	}
	return nil
}

// IsCandidate reports whether a device of this name could be one of the
// stand-in's: only such devices are observed and compared.
func IsCandidate(name string) bool {
	return strings.HasPrefix(name, NamePrefix)
}
