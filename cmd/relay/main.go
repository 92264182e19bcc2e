// Command relay is liqo-relay: a userspace gateway that links the provider
// clusters of a Liqo federation directly over WireGuard, keeps each peer on
// its lowest-latency healthy path and fails over in a fraction of a second.
//
// It is thin: flags, wiring and signals. The work is done in internal/.
// Its subcommands are the table in commands.go, which dispatch, help and
// completion all read.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

// exitError carries a specific exit code.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// usageError is a wrong flag or argument: the message is printed with the
// command's usage, and the exit code is 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// usagef returns a usageError.
func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// invocation is what a command runs with.
type invocation struct {
	args           []string // the positional arguments, flags parsed out
	stdin          io.Reader
	stdout, stderr io.Writer
	cmds           []command // the command table, for help and completion
	clock          clock     // `relay ping --count` spaces its rounds on it
}

// clock is the time of a command that waits: the system's in the binary,
// a fake in tests.
type clock interface {
	Now() time.Time
	// Sleep waits d, or until ctx ends and then returns ctx's error.
	Sleep(ctx context.Context, d time.Duration) error
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// runFunc runs a command once its flags are parsed.
type runFunc func(inv *invocation) error

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return dispatch(args, &invocation{stdin: stdin, stdout: stdout, stderr: stderr, cmds: commands, clock: systemClock{}})
}

// dispatch runs the command line args and returns the exit code: 0, 1 for
// a failure, 2 for a wrong command line, or a command's own (exitError).
func dispatch(args []string, inv *invocation) int {
	if len(args) == 0 {
		writeTopUsage(inv.stderr, inv.cmds)
		return 2
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		writeTopUsage(inv.stdout, inv.cmds)
		return 0
	case "-v", "--version":
		name = "version"
	}
	c, ok := lookup(inv.cmds, name)
	if !ok {
		fmt.Fprintf(inv.stderr, "relay: unknown command %q\n\n", name)
		writeTopUsage(inv.stderr, inv.cmds)
		return 2
	}
	fs, runCmd := c.setup()
	fs.SetOutput(io.Discard) // dispatch prints the help and the errors
	fs.Usage = func() {}
	pos, err := parseArgs(fs, args[1:])
	switch {
	case errors.Is(err, flag.ErrHelp):
		writeHelp(inv.stdout, c, fs)
		return 0
	case err != nil:
		err = usageError{err.Error()}
	default:
		if err = c.checkArgs(pos); err == nil {
			inv.args = pos
			err = runCmd(inv)
		}
	}
	var ee exitError
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue):
		fmt.Fprintf(inv.stderr, "relay %s: %v\n\n", c.name, err)
		writeUsage(inv.stderr, c, fs)
		return 2
	default:
		fmt.Fprintf(inv.stderr, "relay %s: %v\n", c.name, err)
		return 1
	}
}
