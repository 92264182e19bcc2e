package image

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	line int
	cmd  string // upper case: FROM, RUN, ...
	args string
}

// stage is the instructions from one FROM to the next.
type stage struct {
	from  string
	instr []instruction
}

// parseDockerfile splits a Dockerfile into stages. It handles what our
// Dockerfile uses: comments, parser directives, backslash continuations
// (with comment lines inside them), and one instruction per logical line.
func parseDockerfile(src string) ([]stage, error) {
	var stages []stage
	var cur strings.Builder
	start := 0
	flush := func() error {
		text := strings.TrimSpace(cur.String())
		cur.Reset()
		if text == "" {
			return nil
		}
		cmd, args, _ := strings.Cut(text, " ")
		in := instruction{line: start, cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)}
		if in.cmd == "FROM" {
			stages = append(stages, stage{from: in.args})
			return nil
		}
		if len(stages) == 0 {
			if in.cmd == "ARG" {
				return nil // global ARGs before the first FROM
			}
			return fmt.Errorf("line %d: %s before FROM", in.line, in.cmd)
		}
		stages[len(stages)-1].instr = append(stages[len(stages)-1].instr, in)
		return nil
	}
	for i, raw := range strings.Split(src, "\n") {
		line := strings.TrimSpace(raw)
		if strings.HasPrefix(line, "#") || (line == "" && cur.Len() == 0) {
			continue
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		if cont, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(cont + " ")
			continue
		}
		cur.WriteString(line)
		if err := flush(); err != nil {
			return nil, err
		}
	}
	if cur.Len() != 0 {
		return nil, fmt.Errorf("line %d: continuation at end of file", start)
	}
	return stages, nil
}

// keyValues parses `k=v k2="v 2"` (LABEL, ENV).
func keyValues(s string) (map[string]string, error) {
	out := map[string]string{}
	re := regexp.MustCompile(`^\s*([^=\s]+)=("((?:[^"\\]|\\.)*)"|(\S*))`)
	for strings.TrimSpace(s) != "" {
		m := re.FindStringSubmatch(s)
		if m == nil {
			return nil, fmt.Errorf("not key=value: %q", s)
		}
		v := m[4]
		if strings.HasPrefix(m[2], `"`) {
			v = m[3]
		}
		out[m[1]] = v
		s = s[len(m[0]):]
	}
	return out, nil
}

// execForm decodes the JSON (exec) form of ENTRYPOINT or CMD: the shell
// form would need a shell the image does not have.
func execForm(in instruction) ([]string, error) {
	var v []string
	if err := json.Unmarshal([]byte(in.args), &v); err != nil {
		return nil, fmt.Errorf("line %d: %s %s: not the exec (JSON) form: %w", in.line, in.cmd, in.args, err)
	}
	return v, nil
}

// TestDockerfileMatchesBuilder parses the repository's Dockerfile and
// checks that its image is the one build/cmd/image makes: the same go
// build command and static environment, an empty base with only the
// binary, the same user, entrypoint, command, env, working directory and
// labels.
func TestDockerfileMatchesBuilder(t *testing.T) {
	src, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	stages, err := parseDockerfile(string(src))
	if err != nil {
		t.Fatalf("Dockerfile: %v", err)
	}
	if len(stages) != 2 {
		t.Fatalf("Dockerfile has %d stages, want 2 (build, image)", len(stages))
	}
	build, final := stages[0], stages[1]

	checkBuildStage(t, build)

	if final.from != "scratch" {
		t.Errorf("final stage FROM %q, want scratch (an empty base, as build/cmd/image)", final.from)
	}
	got := map[string][]instruction{}
	for _, in := range final.instr {
		got[in.cmd] = append(got[in.cmd], in)
	}
	for cmd, ins := range got {
		switch cmd {
		case "ARG", "LABEL", "COPY", "ENV", "WORKDIR", "USER", "ENTRYPOINT", "CMD":
			if cmd != "ARG" && cmd != "LABEL" && len(ins) != 1 {
				t.Errorf("final stage has %d %s instructions, want 1", len(ins), cmd)
			}
		default:
			t.Errorf("line %d: %s in the final stage: build/cmd/image has no equivalent", ins[0].line, cmd)
		}
	}
	one := func(cmd string) instruction {
		if len(got[cmd]) == 0 {
			t.Fatalf("final stage has no %s", cmd)
		}
		return got[cmd][0]
	}

	if f := strings.Fields(one("COPY").args); len(f) != 3 || f[0] != "--from=build" || f[1] != "/out/relay" || f[2] != BinaryPath {
		t.Errorf("COPY %s, want --from=build /out/relay %s", one("COPY").args, BinaryPath)
	}
	if u := one("USER").args; u != User {
		t.Errorf("USER %s, builder's %s", u, User)
	}
	if w := one("WORKDIR").args; w != WorkingDir {
		t.Errorf("WORKDIR %s, builder's %s", w, WorkingDir)
	}
	for _, c := range []struct {
		cmd  string
		want []string
	}{{"ENTRYPOINT", Entrypoint()}, {"CMD", Cmd()}} {
		v, err := execForm(one(c.cmd))
		if err != nil {
			t.Error(err)
		} else if !reflect.DeepEqual(v, c.want) {
			t.Errorf("%s %q, builder's %q", c.cmd, v, c.want)
		}
	}
	env, err := keyValues(one("ENV").args)
	if err != nil {
		t.Errorf("ENV: %v", err)
	}
	var envList []string
	for k, v := range env {
		envList = append(envList, k+"="+v)
	}
	if !reflect.DeepEqual(envList, Env()) {
		t.Errorf("ENV %q, builder's %q", envList, Env())
	}

	args := map[string]bool{}
	for _, in := range got["ARG"] {
		n, _, _ := strings.Cut(in.args, "=")
		args[n] = true
	}
	labels := map[string]string{}
	for _, in := range got["LABEL"] {
		kv, err := keyValues(in.args)
		if err != nil {
			t.Errorf("line %d: LABEL: %v", in.line, err)
		}
		for k, v := range kv {
			labels[k] = v
		}
	}
	// The build arguments stand for the version and revision.
	want := Labels("$VERSION", "$REVISION")
	if !reflect.DeepEqual(labels, want) {
		t.Errorf("LABELs %v, builder's %v", labels, want)
	}
	for _, a := range []string{"VERSION", "REVISION"} {
		if !args[a] {
			t.Errorf("final stage lacks ARG %s, which its labels use", a)
		}
	}
}

// checkBuildStage checks that the build stage compiles as compile does:
// the same go build arguments, cgo off, for the target platform, with a Go
// of the go.mod's release.
func checkBuildStage(t *testing.T, build stage) {
	t.Helper()
	goMod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(goMod)
	if m == nil {
		t.Fatal("go.mod: no go directive")
	}
	if !regexp.MustCompile(`(^|\s)golang:` + regexp.QuoteMeta(string(m[1])) + `(\s|$)`).MatchString(build.from) {
		t.Errorf("build stage FROM %q, want golang:%s (go.mod's release)", build.from, m[1])
	}
	var run string
	for _, in := range build.instr {
		if in.cmd == "RUN" && strings.Contains(in.args, "go build") {
			run = strings.Join(strings.Fields(in.args), " ")
		}
	}
	if run == "" {
		t.Fatal("build stage: no RUN with go build")
	}
	var quoted []string
	for _, a := range GoBuildArgs("$VERSION", "$REVISION", "$BUILD_DATE", "/out/relay") {
		if strings.Contains(a, " ") {
			a = `"` + a + `"`
		}
		quoted = append(quoted, a)
	}
	if want := "go " + strings.Join(quoted, " "); !strings.Contains(run, want) {
		t.Errorf("build stage runs %q, want it to run %q (compile.go's GoBuildArgs)", run, want)
	}
	for _, e := range []string{"CGO_ENABLED=0", "GOOS=$TARGETOS", "GOARCH=$TARGETARCH"} {
		if !strings.Contains(run, e+" ") {
			t.Errorf("build stage runs %q without %s (compile.go's GoBuildEnv)", run, e)
		}
	}
	if len(GoBuildEnv(Platforms()[0])) != 3 {
		t.Errorf("GoBuildEnv has %q: update the Dockerfile and this test", GoBuildEnv(Platforms()[0]))
	}
}

// TestDockerfileParser checks the parser on the forms the Dockerfile uses.
func TestDockerfileParser(t *testing.T) {
	src := "# syntax=docker/dockerfile:1\nARG G=1\nFROM golang:1.26 AS build\nRUN a \\\n  # inner comment\n  b\n\nFROM scratch\nLABEL a=\"x y\" \\\n  b=$V\nCMD [\"run\", \"-c\", \"/f\"]\n"
	stages, err := parseDockerfile(src)
	if err != nil {
		t.Fatal(err)
	}
	if len(stages) != 2 || stages[0].from != "golang:1.26 AS build" || stages[1].from != "scratch" {
		t.Fatalf("stages %+v", stages)
	}
	if in := stages[0].instr; len(in) != 1 || in[0].cmd != "RUN" || strings.Join(strings.Fields(in[0].args), " ") != "a b" || in[0].line != 4 {
		t.Errorf("build stage %+v, want RUN a b at line 4", in)
	}
	kv, err := keyValues(stages[1].instr[0].args)
	if err != nil || !reflect.DeepEqual(kv, map[string]string{"a": "x y", "b": "$V"}) {
		t.Errorf("LABEL parsed as %v (%v)", kv, err)
	}
	if v, err := execForm(stages[1].instr[1]); err != nil || !reflect.DeepEqual(v, []string{"run", "-c", "/f"}) {
		t.Errorf("CMD parsed as %q (%v)", v, err)
	}
	if _, err := execForm(instruction{cmd: "CMD", args: "relay run"}); err == nil {
		t.Error("the shell form of CMD was accepted")
	}
	if _, err := parseDockerfile("RUN x\n"); err == nil {
		t.Error("RUN before FROM was accepted")
	}
}
