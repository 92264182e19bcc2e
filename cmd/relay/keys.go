package main

import (
	"bufio"
	"fmt"
	"io"
	"runtime"

	"github.com/liqo-relay/relay/internal/core/keys"
	"github.com/liqo-relay/relay/internal/version"
)

// cmdGenkey prints a new Curve25519 private key, clamped, in the base64 form
// of `wg genkey`.
func cmdGenkey(stdout io.Writer) error {
	k, err := keys.NewPrivate()
	if err != nil {
		return fmt.Errorf("reading randomness: %w", err)
	}
	_, err = fmt.Fprintln(stdout, k.Reveal())
	return err
}

// cmdPubkey reads a private key on stdin and prints its public key, like
// `wg pubkey`.
func cmdPubkey(stdin io.Reader, stdout io.Writer) error {
	line, err := bufio.NewReader(io.LimitReader(stdin, 1024)).ReadString('\n')
	if err != nil && err != io.EOF {
		return fmt.Errorf("reading stdin: %w", err)
	}
	k, err := keys.ParsePrivate(line)
	if err != nil {
		return fmt.Errorf("stdin: %w", err)
	}
	_, err = fmt.Fprintln(stdout, k.PublicKey().String())
	return err
}

func cmdVersion(stdout io.Writer) error {
	_, err := fmt.Fprintf(stdout, "relay %s (%s, %s/%s)\n", version.String(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return err
}
