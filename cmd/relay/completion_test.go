package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// completionScript runs `relay completion SHELL` and writes the script to
// a file.
func completionScript(t *testing.T, shell string) (text, path string) {
	t.Helper()
	code, out, stderr := runCmd(t, "", "completion", shell)
	if code != 0 || stderr != "" || out == "" {
		t.Fatalf("completion %s: exit %d, stderr %q", shell, code, stderr)
	}
	path = filepath.Join(t.TempDir(), "relay."+shell)
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return out, path
}

// pingFlags are the names of ping's flags, as help lists them.
func pingFlags(t *testing.T) []string {
	t.Helper()
	c, _ := lookup(commands, "ping")
	fs, _ := c.setup()
	var names []string
	for _, f := range flagDocs(fs) {
		names = append(names, f.names...)
	}
	if len(names) < 8 {
		t.Fatalf("ping has flags %q, want at least --admin, -c, --config, --count, --json, --timeout, --token-file, --help", names)
	}
	return names
}

// TestBashCompletion: the script parses, and completing in bash offers the
// commands, ping's flags and completion's shells.
func TestBashCompletion(t *testing.T) {
	text, path := completionScript(t, "bash")
	for _, c := range commands {
		if !strings.Contains(text, c.name) {
			t.Errorf("the bash script does not mention %s", c.name)
		}
	}
	if out, err := exec.Command("bash", "-n", path).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
	// complete WORDS... prints what the script offers for the last word.
	script := `source "$1"; shift
complete_words() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _relay; echo "${COMPREPLY[*]}"; }
complete_words relay ""
complete_words relay ping -
complete_words relay completion ""
complete_words relay ping --admin ""
`
	out, err := exec.Command("bash", "-c", script, "bash", path).Output()
	if err != nil {
		t.Fatalf("running the completion: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("completion printed %q, want 4 lines", out)
	}
	if got, want := lines[0], strings.Join(commandNames(commands), " "); got != want {
		t.Errorf("relay <TAB> offers %q, want %q", got, want)
	}
	for _, f := range pingFlags(t) {
		if !strings.Contains(" "+lines[1]+" ", " "+f+" ") {
			t.Errorf("relay ping -<TAB> offers %q, without %s", lines[1], f)
		}
	}
	if lines[2] != "bash fish zsh" {
		t.Errorf("relay completion <TAB> offers %q, want bash fish zsh", lines[2])
	}
	if lines[3] != "" {
		t.Errorf("relay ping --admin <TAB> offers %q, want nothing (files, by complete -o default)", lines[3])
	}
}

// TestZshAndFishCompletion: each script names every command and every
// flag of ping, and parses where the shell is installed.
func TestZshAndFishCompletion(t *testing.T) {
	for _, tc := range []struct {
		shell string
		check []string       // the shell's command to parse without running
		flag  *regexp.Regexp // %s: a flag's name without its dashes
	}{
		{"zsh", []string{"zsh", "-n"}, regexp.MustCompile(`['{,]-{1,2}%s[\[,}]`)},
		{"fish", []string{"fish", "--no-execute"}, regexp.MustCompile(` -[sl] %s `)},
	} {
		text, path := completionScript(t, tc.shell)
		for _, c := range commands {
			if !strings.Contains(text, "'"+c.name+":") && !strings.Contains(text, "-a "+c.name+" ") {
				t.Errorf("the %s script does not offer %s", tc.shell, c.name)
			}
		}
		ping := pingSection(tc.shell, text)
		for _, f := range pingFlags(t) {
			re := regexp.MustCompile(strings.ReplaceAll(tc.flag.String(), "%s", regexp.QuoteMeta(strings.TrimLeft(f, "-"))))
			if !re.MatchString(ping) {
				t.Errorf("the %s script has no %s for ping's %s", tc.shell, re, f)
			}
		}
		if _, err := exec.LookPath(tc.check[0]); err != nil {
			t.Logf("%s is not installed: its script is not parsed", tc.shell)
			continue
		}
		if out, err := exec.Command(tc.check[0], append(tc.check[1:], path)...).CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", strings.Join(tc.check, " "), err, out)
		}
	}
}

// pingSection is the part of a zsh or fish script that completes ping.
func pingSection(shell, text string) string {
	if shell == "zsh" {
		_, after, _ := strings.Cut(text, "\tping)\n")
		before, _, _ := strings.Cut(after, ";;")
		return before
	}
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "'__fish_seen_subcommand_from ping'") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}
