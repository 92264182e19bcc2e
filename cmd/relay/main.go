// Command relay is liqo-relay: a userspace gateway that links the provider
// clusters of a Liqo federation directly over WireGuard, keeps each peer on
// its lowest-latency healthy path and fails over in a fraction of a second.
//
// It is thin: flags, wiring and signals. The work is done in internal/.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

const usage = `relay: direct WireGuard links between the provider clusters of a Liqo federation

Usage:
  relay run -c FILE            run the relay (SIGHUP reloads FILE, SIGINT/SIGTERM stop it)
  relay check -c FILE          validate a configuration: exit 0, or print every problem and exit 1
  relay status [--admin ADDR] [--token-file FILE | -c FILE] [--json]
                               show the running relay's peers and paths
  relay ping PEER [--admin ADDR] [--token-file FILE | -c FILE]
                               probe every path to PEER from the running relay
                               (-c FILE: take the admin address and token file
                               from the relay's configuration)
  relay inject --namespace NS --service SVC --webhook-config NAME --cert-dir DIR [--cert-manager]
               [--sidecar FILE] [--listen :9443] [--metrics-listen :9090] [--health-listen :8081]
                               inject the relay sidecar into Liqo gateway pods (docs/inject.md)
  relay operator --namespace NS [--kubeconfig FILE] [--cluster-id ID] [--leader-elect=false]
                               run the consumer-side operator (ForeignClusterConnections)
  relay demo                   an in-process federation of three relays on loopback
  relay genkey                 print a new private key
  relay pubkey                 read a private key on stdin, print its public key
  relay version                print the version
`

// errUsage marks errors that should be followed by the usage text.
var errUsage = errors.New("usage")

// exitError carries a specific exit code.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "run":
		err = cmdRun(args[1:], stderr)
	case "check":
		err = cmdCheck(args[1:], stdout, stderr)
	case "status":
		err = cmdStatus(args[1:], stdout)
	case "ping":
		err = cmdPing(args[1:], stdout)
	case "inject":
		err = cmdInject(args[1:], stderr)
	case "operator":
		err = cmdOperator(args[1:], stderr)
	case "demo":
		err = cmdDemo(args[1:], stdout)
	case "genkey":
		err = cmdGenkey(stdout)
	case "pubkey":
		err = cmdPubkey(stdin, stdout)
	case "version", "--version", "-v":
		err = cmdVersion(stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "relay: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	var ee exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "relay %s: %v\n", args[0], err)
		return 2
	default:
		fmt.Fprintf(stderr, "relay %s: %v\n", args[0], err)
		return 1
	}
}
