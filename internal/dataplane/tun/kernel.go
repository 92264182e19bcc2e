package tun

import "errors"

// ErrUnsupported is returned by CreateKernel on platforms other than Linux.
var ErrUnsupported = errors.New("kernel TUN devices are only supported on Linux")

// maxLinkName is IFNAMSIZ minus the terminating NUL.
const maxLinkName = 15
