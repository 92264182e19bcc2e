package podrunner

import (
	"fmt"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// parseSignal reads a signal name as lifecycle.stopSignal writes it
// (SIGTERM, SIGUSR1, ...).
func parseSignal(name string) (syscall.Signal, error) {
	s := unix.SignalNum(strings.ToUpper(name))
	if s == 0 {
		return 0, fmt.Errorf("unknown signal %q", name)
	}
	return s, nil
}
