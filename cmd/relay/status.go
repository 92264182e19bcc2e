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

func setupStatus() (*flag.FlagSet, runFunc) {
	fs := newFlagSet("status")
	var af adminFlags
	af.register(fs)
	asJSON := fs.Bool("json", false, "print the status document as JSON (for scripts; docs/status.md)")
	return fs, func(inv *invocation) error { return cmdStatus(af, *asJSON, inv.stdout) }
}

func cmdStatus(af adminFlags, asJSON bool, stdout io.Writer) error {
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
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	admin.RenderTable(stdout, st, time.Now(), isTerminal(stdout))
	return nil
}

// withTokenHint adds to an authorization failure how to send the token.
func withTokenHint(err error) error {
	if errors.Is(err, admin.ErrUnauthorized) {
		return fmt.Errorf("%w (pass --token-file FILE, or -c CONFIG to use its admin.tokenFile)", err)
	}
	return err
}
