package main

import (
	"flag"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// base64Key matches a WireGuard key as genkey prints it.
var base64Key = regexp.MustCompile(`[A-Za-z0-9+/]{43}=`)

// TestEveryCommandHelps: --help, -h and `relay help NAME` print the same
// help on stdout and exit 0: the sentence, the usage, the flags and an
// example; never a key.
func TestEveryCommandHelps(t *testing.T) {
	for _, c := range commands {
		fs, _ := c.setup()
		for _, args := range [][]string{{c.name, "--help"}, {c.name, "-h"}, {"help", c.name}} {
			code, out, stderr := runCmd(t, "", args...)
			if code != 0 || stderr != "" {
				t.Errorf("relay %s: exit %d, stderr %q; want 0 and nothing", strings.Join(args, " "), code, stderr)
			}
			for _, want := range []string{c.summary, "Usage:\n  relay " + c.name, "Flags:", "--help", "Examples:\n"} {
				if !strings.Contains(out, want) {
					t.Errorf("relay %s: stdout lacks %q:\n%s", strings.Join(args, " "), want, out)
				}
			}
			if _, ex, _ := strings.Cut(out, "Examples:\n"); !strings.Contains(ex, "relay "+c.name) {
				t.Errorf("relay %s: no example runs relay %s:\n%s", strings.Join(args, " "), c.name, out)
			}
			fs.VisitAll(func(f *flag.Flag) {
				if !regexp.MustCompile(`-` + regexp.QuoteMeta(f.Name) + `\b`).MatchString(out) {
					t.Errorf("relay %s: the help does not list -%s", strings.Join(args, " "), f.Name)
				}
			})
			if k := base64Key.FindString(out); k != "" {
				t.Errorf("relay %s printed a key: %s", strings.Join(args, " "), k)
			}
		}
	}
}

// TestHelpShowsDefaults: a flag's default is shown unless it is the zero
// value, and a shorthand shares its long flag's line.
func TestHelpShowsDefaults(t *testing.T) {
	_, out, _ := runCmd(t, "", "ping", "--help")
	for _, want := range []string{"--count N", "(default 1)", "--timeout D", "(default 2s)", "-c, --config FILE"} {
		if !strings.Contains(out, want) {
			t.Errorf("ping --help lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "shorthand for") || strings.Contains(out, "(default false)") {
		t.Errorf("ping --help shows a shorthand apart, or a zero default:\n%s", out)
	}
}

// TestTopUsageListsEveryCommand: relay --help names every command with its
// sentence, on stdout; without a command, the same goes to stderr, exit 2.
func TestTopUsageListsEveryCommand(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		code, out, _ := runCmd(t, "", args...)
		if code != 0 {
			t.Errorf("relay %s: exit %d", args[0], code)
		}
		for _, c := range commands {
			if !regexp.MustCompile(`(?m)^  ` + c.name + ` +` + regexp.QuoteMeta(c.summary) + `$`).MatchString(out) {
				t.Errorf("relay %s: no line for %s with its sentence:\n%s", args[0], c.name, out)
			}
		}
	}
	if code, out, stderr := runCmd(t, ""); code != 2 || out != "" || !strings.Contains(stderr, "Commands:") {
		t.Errorf("relay: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

// TestWrongCommandLines: a wrong flag or argument prints the error and the
// command's usage on stderr, nothing on stdout, and exits 2.
func TestWrongCommandLines(t *testing.T) {
	type tc struct {
		args []string
		want string
	}
	var cases []tc
	for _, c := range commands {
		cases = append(cases, tc{[]string{c.name, "--no-such-flag"}, "flag provided but not defined: -no-such-flag"})
	}
	cases = append(cases,
		tc{[]string{"genkey", "extra"}, `unexpected argument "extra"`},
		tc{[]string{"pubkey", "extra"}, `unexpected argument "extra"`},
		tc{[]string{"version", "extra"}, `unexpected argument "extra"`},
		tc{[]string{"ping"}, "missing PEER"},
		tc{[]string{"ping", "a", "b"}, `unexpected argument "b"`},
		tc{[]string{"ping", "a", "--count", "0"}, "--count 0: want 1 or more"},
		tc{[]string{"ping", "a", "--count", "many"}, `invalid value "many" for flag -count`},
		tc{[]string{"ping", "a", "--timeout", "3s"}, "--timeout 3s: want more than 0 and at most 2s"},
		tc{[]string{"ping", "a", "--timeout", "0s"}, "--timeout 0s: want more than 0"},
		tc{[]string{"completion"}, "missing bash|zsh|fish"},
		tc{[]string{"completion", "tcsh"}, `unknown shell "tcsh"`},
		tc{[]string{"help", "nope"}, `unknown command "nope"`},
		tc{[]string{"check"}, "-c FILE is required"},
	)
	for _, tc := range cases {
		code, out, stderr := runCmd(t, "", tc.args...)
		name := tc.args[0]
		if code != 2 || out != "" {
			t.Errorf("relay %s: exit %d, stdout %q; want 2 and nothing", strings.Join(tc.args, " "), code, out)
		}
		if !strings.HasPrefix(stderr, "relay "+name+": ") || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "Usage:\n  relay "+name) {
			t.Errorf("relay %s: stderr %q; want the error %q and the usage", strings.Join(tc.args, " "), stderr, tc.want)
		}
	}
}

func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		pos  []string
		n    int
	}{
		{[]string{"peer", "--count", "3"}, []string{"peer"}, 3},
		{[]string{"--count", "3", "peer"}, []string{"peer"}, 3},
		{[]string{"a", "--count=2", "b"}, []string{"a", "b"}, 2},
		{[]string{"--", "--count", "4"}, []string{"--count", "4"}, 1},
		{[]string{"a", "--", "-b"}, []string{"a", "-b"}, 1},
		{nil, nil, 1},
	} {
		fs := newFlagSet("t")
		n := fs.Int("count", 1, "")
		pos, err := parseArgs(fs, tc.args)
		if err != nil || !reflect.DeepEqual(pos, tc.pos) || *n != tc.n {
			t.Errorf("parseArgs(%q) = %q, %v, count %d; want %q, count %d", tc.args, pos, err, *n, tc.pos, tc.n)
		}
	}
}
