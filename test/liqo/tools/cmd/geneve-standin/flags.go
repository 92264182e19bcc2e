package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// standinFlags are the stand-in's own settings, beside Liqo's flags.
type standinFlags struct {
	logLevel  string
	keepLinks bool
	ipcSocket string // guest only
}

func (s *standinFlags) register(fs *pflag.FlagSet, guest bool) {
	fs.StringVar(&s.logLevel, "standin-log-level", "info", "Log level of the stand-in: debug, info, warn or error")
	fs.BoolVar(&s.keepLinks, "standin-keep-links", false, "Leave the tunnel ends in place on exit instead of deleting them")
	if guest {
		fs.StringVar(&s.ipcSocket, "standin-ipc-socket", defaultIPCSocket,
			"Unix socket of the gateway container's IPC (Liqo's is a constant; only the guest's end moves)")
	}
}

// errHelp is returned for -h/--help after the usage was printed.
var errHelp = errors.New("help requested")

// parseFlags parses args and checks that every required flag was given, as
// cobra's MarkFlagRequired does for Liqo's binaries.
// flagNames lists Liqo's required flags (each binary has its own FlagName
// type) as strings for parseFlags.
func flagNames[F fmt.Stringer](flags []F) []string {
	names := make([]string, len(flags))
	for i, f := range flags {
		names[i] = f.String()
	}
	return names
}

func parseFlags(fs *pflag.FlagSet, args []string, required []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return errHelp
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var missing []string
	for _, name := range required {
		if f := fs.Lookup(name); f == nil || !f.Changed {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("required flag(s) %q not set", strings.Join(missing, `", "`))
	}
	return nil
}
