package main

import (
	"flag"
	"strings"
)

// command is one subcommand: what dispatch runs, what help prints about it
// and what completion offers.
type command struct {
	name    string
	summary string // one sentence: what the command does
	usage   string // what follows "relay NAME" on the usage line
	// minArgs and maxArgs bound the positional arguments.
	minArgs, maxArgs int
	examples         []string
	// words returns what completion offers for the positional arguments;
	// nil: nothing.
	words func(cmds []command) []string
	// setup returns the command's flags, not yet parsed, and the function
	// that runs the command once they are. Help and completion call it
	// for the flags alone.
	setup func() (*flag.FlagSet, runFunc)
}

// commands is the table of subcommands, in the order help lists them.
var commands = []command{
	{
		name:    "run",
		summary: "Run the relay until SIGINT or SIGTERM; SIGHUP re-reads its configuration.",
		usage:   "-c FILE [flags]",
		examples: []string{
			"relay run -c /etc/relay/relay.yaml",
			"relay run -c relay.yaml --kubernetes      # in a pod: driven by the provider's API server",
		},
		setup: setupRun,
	},
	{
		name:     "check",
		summary:  "Validate a configuration file: exit 0, or print every problem and exit 1.",
		usage:    "-c FILE",
		examples: []string{"relay check -c relay.yaml"},
		setup:    setupCheck,
	},
	{
		name:    "status",
		summary: "Show the running relay's peers and paths.",
		usage:   "[flags]",
		examples: []string{
			"relay status",
			"relay status -c /etc/relay/relay.yaml --json | jq -r '.peers[] | \"\\(.name) \\(.activePath)\"'",
		},
		setup: setupStatus,
	},
	{
		name:    "ping",
		summary: "Probe every path to PEER from the running relay and print each path's round-trip time.",
		usage:   "PEER [flags]",
		minArgs: 1, maxArgs: 1,
		examples: []string{
			"relay ping provider-b",
			"relay ping provider-b --count 5 --timeout 500ms",
			"relay ping provider-b --json | jq '.paths[] | select(.answered == 0) | .path'",
		},
		setup: setupPing,
	},
	{
		name:    "inject",
		summary: "Run the webhook that injects the relay sidecar into Liqo gateway pods (docs/inject.md).",
		usage:   "--namespace NS --service SVC --cert-dir DIR --webhook-config NAME [--cert-manager] [flags]",
		examples: []string{
			"relay inject --namespace liqo-relay --service liqo-relay-inject --webhook-config liqo-relay-inject \\\n" +
				"    --cert-dir /var/run/relay-inject/certs",
		},
		setup: setupInject,
	},
	{
		name:    "operator",
		summary: "Run the consumer-side operator: it links two providers' relays for each ForeignClusterConnection (docs/operator.md).",
		usage:   "--namespace NS [flags]",
		examples: []string{
			"relay operator --namespace liqo-relay",
			"relay operator --namespace liqo-relay --kubeconfig ~/.kube/consumer --leader-elect=false",
		},
		setup: setupOperator,
	},
	{
		name:    "demo",
		summary: "Run an in-process federation of three relays on loopback and watch one fail over.",
		usage:   "[flags]",
		examples: []string{
			"relay demo",
			"relay demo --duration 1m --plain",
		},
		setup: setupDemo,
	},
	{
		name:    "genkey",
		summary: "Print a new WireGuard private key, like wg genkey.",
		examples: []string{
			"relay genkey > private.key",
			"relay genkey | tee private.key | relay pubkey > public.key",
		},
		setup: setupGenkey,
	},
	{
		name:     "pubkey",
		summary:  "Read a private key on stdin and print its public key, like wg pubkey.",
		usage:    "< PRIVATE-KEY-FILE",
		examples: []string{"relay pubkey < private.key"},
		setup:    setupPubkey,
	},
	{
		name:    "version",
		summary: "Print the version, commit, build date, Go version and probe protocol version.",
		usage:   "[--json]",
		examples: []string{
			"relay version",
			"relay version --json | jq -r .commit",
		},
		setup: setupVersion,
	},
	{
		name:     "help",
		summary:  "Print the help of a command, or list the commands.",
		usage:    "[COMMAND]",
		maxArgs:  1,
		examples: []string{"relay help ping"},
		words:    commandNames,
		setup:    setupHelp,
	},
	{
		name:    "completion",
		summary: "Print the completion script for a shell: bash, zsh or fish.",
		usage:   "bash|zsh|fish",
		minArgs: 1, maxArgs: 1,
		examples: []string{
			"source <(relay completion bash)",
			"relay completion zsh > \"${fpath[1]}/_relay\"",
			"relay completion fish > ~/.config/fish/completions/relay.fish",
		},
		words: func([]command) []string { return shellNames() },
		setup: setupCompletion,
	},
}

// lookup returns the command called name.
func lookup(cmds []command, name string) (command, bool) {
	for _, c := range cmds {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func commandNames(cmds []command) []string {
	names := make([]string, len(cmds))
	for i, c := range cmds {
		names[i] = c.name
	}
	return names
}

// checkArgs refuses too few or too many positional arguments.
func (c command) checkArgs(args []string) error {
	switch {
	case len(args) < c.minArgs:
		return usagef("missing %s", c.argName())
	case len(args) > c.maxArgs:
		return usagef("unexpected argument %q", args[c.maxArgs])
	}
	return nil
}

// argName is the first positional argument as the usage line names it.
func (c command) argName() string {
	for _, w := range strings.Fields(c.usage) {
		if w = strings.Trim(w, "[]"); !strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "<") {
			return w
		}
	}
	return "argument"
}

func newFlagSet(name string) *flag.FlagSet {
	return flag.NewFlagSet(name, flag.ContinueOnError)
}

// parseArgs parses the flags in args, before and after the positional
// arguments, and returns the positional ones. After "--" every argument is
// positional.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}
