package main

import (
	"flag"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"text/tabwriter"
)

const tagline = "relay: direct WireGuard links between the provider clusters of a Liqo federation"

// writeTopUsage writes `relay --help`: every command with its sentence.
func writeTopUsage(w io.Writer, cmds []command) {
	fmt.Fprintf(w, "%s\n\nUsage:\n  relay COMMAND [ARGUMENTS] [flags]\n\nCommands:\n", tagline)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range cmds {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.summary)
	}
	tw.Flush()
	fmt.Fprint(w, "\nRun 'relay help COMMAND' or 'relay COMMAND --help' for a command's flags and examples.\n")
}

// writeHelp writes `relay NAME --help`: the sentence, the usage, the flags
// and the examples.
func writeHelp(w io.Writer, c command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "%s\n\n", c.summary)
	writeUsage(w, c, fs)
	fmt.Fprint(w, "\nExamples:\n")
	for _, e := range c.examples {
		fmt.Fprintf(w, "  %s\n", strings.ReplaceAll(e, "\n", "\n  "))
	}
}

// writeUsage writes the usage line and the flags: what follows an error
// in the command line.
func writeUsage(w io.Writer, c command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage:\n  %s\n\nFlags:\n", strings.TrimSpace("relay "+c.name+" "+c.usage))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, f := range flagDocs(fs) {
		spec := strings.Join(f.names, ", ")
		if f.arg != "" {
			spec += " " + f.arg
		}
		usage := f.usage
		if f.def != "" {
			usage += " (default " + f.def + ")"
		}
		fmt.Fprintf(tw, "  %s\t%s\n", spec, usage)
	}
	tw.Flush()
}

// flagDoc is one flag as help and completion show it.
type flagDoc struct {
	// names are "-x" for a one-letter name and "--name" otherwise; a
	// shorthand registered on the same variable (-c for --config) shares
	// the entry, shortest first.
	names []string
	arg   string // the value's placeholder; "" for a boolean flag
	usage string
	def   string // the default; "" when it is the type's zero value
}

// fileArg reports whether the flag's value is a file or directory name.
func (f flagDoc) fileArg() bool { return f.arg == "FILE" || f.arg == "DIR" }

// helpFlag is the flag every command answers without registering it.
var helpFlag = flagDoc{names: []string{"-h", "--help"}, usage: "print this help"}

// flagDocs returns the flags of fs, and -h/--help, sorted by name.
func flagDocs(fs *flag.FlagSet) []flagDoc {
	var docs []flagDoc
	byVar := map[uintptr]int{} // a flag variable's address -> its entry
	fs.VisitAll(func(f *flag.Flag) {
		name := "--" + f.Name
		if len(f.Name) == 1 {
			name = "-" + f.Name
		}
		if v := reflect.ValueOf(f.Value); v.Kind() == reflect.Pointer {
			if i, ok := byVar[v.Pointer()]; ok {
				docs[i].names = append(docs[i].names, name)
				if len(f.Name) > 1 { // the long name's text, not "shorthand for"
					docs[i].arg, docs[i].usage = flag.UnquoteUsage(f)
				}
				return
			}
			byVar[v.Pointer()] = len(docs)
		}
		arg, usage := flag.UnquoteUsage(f)
		d := flagDoc{names: []string{name}, arg: arg, usage: usage, def: f.DefValue}
		if slices.Contains([]string{"", "0", "0s", "false"}, d.def) {
			d.def = ""
		}
		docs = append(docs, d)
	})
	docs = append(docs, helpFlag)
	for i := range docs {
		slices.SortFunc(docs[i].names, func(a, b string) int { return len(a) - len(b) })
	}
	slices.SortFunc(docs, func(a, b flagDoc) int {
		return strings.Compare(strings.TrimLeft(a.names[len(a.names)-1], "-"), strings.TrimLeft(b.names[len(b.names)-1], "-"))
	})
	return docs
}

// setupHelp is `relay help [COMMAND]`: the same text as `relay COMMAND
// --help`, or as `relay --help` without a command.
func setupHelp() (*flag.FlagSet, runFunc) {
	return newFlagSet("help"), func(inv *invocation) error {
		if len(inv.args) == 0 {
			writeTopUsage(inv.stdout, inv.cmds)
			return nil
		}
		c, ok := lookup(inv.cmds, inv.args[0])
		if !ok {
			return usagef("unknown command %q (relay help lists them)", inv.args[0])
		}
		fs, _ := c.setup()
		writeHelp(inv.stdout, c, fs)
		return nil
	}
}
