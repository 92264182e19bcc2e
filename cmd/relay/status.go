package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/liqo-relay/relay/internal/control/admin"
)

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func cmdStatus(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	var af adminFlags
	af.register(fs)
	asJSON := fs.Bool("json", false, "print JSON (for scripts)")
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	c, err := af.client()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := c.Status(ctx)
	if err != nil {
		return withTokenHint(err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	admin.RenderTable(stdout, st, time.Now(), isTerminal(stdout))
	return nil
}

func cmdPing(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("ping", flag.ContinueOnError)
	var af adminFlags
	af.register(fs)
	// Accept the peer before or after the flags.
	var peer string
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		peer, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	if peer == "" && fs.NArg() > 0 {
		peer = fs.Arg(0)
	}
	if peer == "" {
		return fmt.Errorf("%w: relay ping PEER [--admin ADDR] [--token-file FILE | -c FILE]", errUsage)
	}
	c, err := af.client()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := c.Ping(ctx, peer)
	if err != nil {
		return withTokenHint(err)
	}
	admin.RenderPing(stdout, peer, res)
	for _, r := range res {
		if r.OK {
			return nil
		}
	}
	return errors.New("no path answered")
}

// withTokenHint adds to an authorization failure how to send the token.
func withTokenHint(err error) error {
	if errors.Is(err, admin.ErrUnauthorized) {
		return fmt.Errorf("%w (pass --token-file FILE, or -c CONFIG to use its admin.tokenFile)", err)
	}
	return err
}
