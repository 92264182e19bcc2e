// Package secretfile reads small secret files, such as the relay's private
// key and the admin token, with the checks ssh applies to its keys: the
// file, after following symbolic links, must be a regular file that
// neither group nor others may read or write, and it must be small. A
// Kubernetes Secret volume passes: its files are symbolic links through
// ..data to regular files whose mode is the volume's defaultMode (0400 or
// 0600).
package secretfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// MaxSize is the most a secret file may hold. A WireGuard key in base64 is
// 44 bytes and a token a few dozen; anything near this is not a secret file.
const MaxSize = 4096

// Errors wrapped by Read.
var (
	ErrNotRegular = errors.New("not a regular file")
	ErrTooOpen    = errors.New("permissions too open")
	ErrTooLarge   = errors.New("too large")
)

// Read returns the contents of the secret file at path. It opens the file
// once and checks what it opened (no race between check and read), without
// blocking on a FIFO. Errors name the path and, for a symbolic link, the
// file it leads to.
func Read(path string) ([]byte, error) {
	// O_NONBLOCK: opening a FIFO must not wait for a writer; it is then
	// refused as not regular. It changes nothing for a regular file.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err // *fs.PathError names path
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w (it is %s)", where(path), ErrNotRegular, kind(fi.Mode()))
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%s: %w: mode %04o lets group or others read or write it; "+
			"like ssh, the relay wants 0600 or 0400 (chmod 600, or defaultMode: 0400 on a Secret volume)",
			where(path), ErrTooOpen, perm)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where(path), err)
	}
	if len(data) > MaxSize {
		clear(data)
		return nil, fmt.Errorf("%s: %w: more than %d bytes", where(path), ErrTooLarge, MaxSize)
	}
	return data, nil
}

// where names path and, when it is a symbolic link, its target.
func where(path string) string {
	if t, err := filepath.EvalSymlinks(path); err == nil && t != filepath.Clean(path) {
		return fmt.Sprintf("%s (-> %s)", path, t)
	}
	return path
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "mode " + m.String()
}
