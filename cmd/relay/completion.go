package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// shells are the completion scripts `relay completion SHELL` prints, each
// written from the command table: its commands, their flags and the words
// of their arguments.
var shells = map[string]func(w io.Writer, cmds []command){
	"bash": writeBashCompletion,
	"zsh":  writeZshCompletion,
	"fish": writeFishCompletion,
}

func shellNames() []string {
	names := make([]string, 0, len(shells))
	for n := range shells {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func setupCompletion() (*flag.FlagSet, runFunc) {
	return newFlagSet("completion"), func(inv *invocation) error {
		write, ok := shells[inv.args[0]]
		if !ok {
			return usagef("unknown shell %q: want %s", inv.args[0], strings.Join(shellNames(), ", "))
		}
		write(inv.stdout, inv.cmds)
		return nil
	}
}

// completionCommand is one command as a completion script sees it.
type completionCommand struct {
	command
	flags []flagDoc
	words []string // for the positional arguments
}

func completionCommands(cmds []command) []completionCommand {
	out := make([]completionCommand, len(cmds))
	for i, c := range cmds {
		fs, _ := c.setup()
		out[i] = completionCommand{command: c, flags: flagDocs(fs)}
		if c.words != nil {
			out[i].words = c.words(cmds)
		}
	}
	return out
}

// writeBashCompletion writes a bash script: the commands after relay, then
// each one's flags and argument words. A flag's value, and anything else
// the script does not know, falls back to file names (complete -o default).
func writeBashCompletion(w io.Writer, cmds []command) {
	fmt.Fprint(w, `# bash completion for relay: source <(relay completion bash)
_relay() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	if (( COMP_CWORD == 1 )); then
		COMPREPLY=($(compgen -W "`+strings.Join(commandNames(cmds), " ")+`" -- "$cur"))
		return
	fi
	local flags="" valued="" words=""
	case ${COMP_WORDS[1]} in
`)
	for _, c := range completionCommands(cmds) {
		var flags, valued []string
		for _, f := range c.flags {
			flags = append(flags, f.names...)
			if f.arg != "" {
				valued = append(valued, f.names...)
			}
		}
		fmt.Fprintf(w, "\t%s)\n\t\tflags=%s\n\t\tvalued=%s\n\t\twords=%s\n\t\t;;\n",
			c.name, shQuote(strings.Join(flags, " ")), shQuote(strings.Join(valued, " ")), shQuote(strings.Join(c.words, " ")))
	}
	fmt.Fprint(w, `	esac
	case " $valued " in
	*" $prev "*) return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$flags" -- "$cur"))
	elif [[ -n $words ]]; then
		COMPREPLY=($(compgen -W "$words" -- "$cur"))
	fi
}
complete -o default -F _relay relay
`)
}

// writeZshCompletion writes a zsh script for fpath (as _relay) or source.
func writeZshCompletion(w io.Writer, cmds []command) {
	fmt.Fprint(w, "#compdef relay\n# zsh completion for relay: relay completion zsh > \"${fpath[1]}/_relay\"\n\n_relay() {\n\tlocal -a commands\n\tcommands=(\n")
	for _, c := range cmds {
		fmt.Fprintf(w, "\t\t%s\n", shQuote(c.name+":"+c.summary))
	}
	fmt.Fprint(w, "\t)\n\tif (( CURRENT == 2 )); then\n\t\t_describe -t commands 'relay command' commands\n\t\treturn\n\tfi\n")
	fmt.Fprint(w, "\tlocal cmd=${words[2]}\n\tshift words\n\t(( CURRENT-- ))\n\tcase $cmd in\n")
	for _, c := range completionCommands(cmds) {
		fmt.Fprintf(w, "\t%s)\n\t\t_arguments", c.name)
		for _, f := range c.flags {
			fmt.Fprintf(w, " \\\n\t\t\t%s", zshFlagSpec(f))
		}
		if c.maxArgs > 0 {
			action := " "
			if len(c.words) > 0 {
				action = "(" + strings.Join(c.words, " ") + ")"
			}
			fmt.Fprintf(w, " \\\n\t\t\t%s", shQuote("1:"+zshEscape(c.argName())+":"+action))
		}
		fmt.Fprint(w, "\n\t\t;;\n")
	}
	fmt.Fprint(w, "\tesac\n}\n\nif [[ $funcstack[1] == _relay ]]; then\n\t_relay \"$@\"\nelse\n\tcompdef _relay relay\nfi\n")
}

// zshFlagSpec is f as an _arguments spec: (-c --config){-c,--config}[text]:FILE:_files.
func zshFlagSpec(f flagDoc) string {
	text := "[" + zshEscape(f.usage) + "]"
	if f.arg != "" {
		action := " "
		if f.fileArg() {
			action = "_files"
		}
		text += ":" + zshEscape(f.arg) + ":" + action
	}
	if len(f.names) == 1 {
		return shQuote(f.names[0] + text)
	}
	return shQuote("("+strings.Join(f.names, " ")+")") + "{" + strings.Join(f.names, ",") + "}" + shQuote(text)
}

// zshEscape escapes what _arguments reads in a description or message.
func zshEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`, ":", `\:`).Replace(s)
}

// shQuote quotes s for bash and zsh: in single quotes.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// writeFishCompletion writes a fish script for ~/.config/fish/completions.
func writeFishCompletion(w io.Writer, cmds []command) {
	fmt.Fprint(w, "# fish completion for relay: relay completion fish > ~/.config/fish/completions/relay.fish\ncomplete -c relay -f\n")
	for _, c := range cmds {
		fmt.Fprintf(w, "complete -c relay -n __fish_use_subcommand -a %s -d %s\n", c.name, fishQuote(c.summary))
	}
	for _, c := range completionCommands(cmds) {
		cond := fishQuote("__fish_seen_subcommand_from " + c.name)
		for _, f := range c.flags {
			var opts []string
			for _, n := range f.names {
				if strings.HasPrefix(n, "--") {
					opts = append(opts, "-l "+strings.TrimPrefix(n, "--"))
				} else {
					opts = append(opts, "-s "+strings.TrimPrefix(n, "-"))
				}
			}
			switch {
			case f.fileArg():
				opts = append(opts, "-r -F")
			case f.arg != "":
				opts = append(opts, "-x")
			}
			fmt.Fprintf(w, "complete -c relay -n %s %s -d %s\n", cond, strings.Join(opts, " "), fishQuote(f.usage))
		}
		if len(c.words) > 0 {
			fmt.Fprintf(w, "complete -c relay -n %s -a %s\n", cond, fishQuote(strings.Join(c.words, " ")))
		}
	}
}

// fishQuote quotes s for fish: in single quotes, where \ and ' are escaped.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}
