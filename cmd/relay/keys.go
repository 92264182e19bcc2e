package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"

	"github.com/liqo-relay/relay/internal/core/keys"
)

func setupGenkey() (*flag.FlagSet, runFunc) {
	return newFlagSet("genkey"), func(inv *invocation) error { return cmdGenkey(inv.stdout) }
}

func setupPubkey() (*flag.FlagSet, runFunc) {
	return newFlagSet("pubkey"), func(inv *invocation) error { return cmdPubkey(inv.stdin, inv.stdout) }
}

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
