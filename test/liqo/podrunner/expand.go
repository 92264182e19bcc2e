package podrunner

import "strings"

// Expand replaces each $(NAME) in s by lookup(NAME) and follows the rules
// of Kubernetes' variable references in command, args and env values:
// $$ is an escaped $, a reference to a name lookup does not know is kept as
// written, and a $ that starts no reference (a lone $, "$x", an unclosed
// "$(x") is kept as written.
func Expand(s string, lookup func(name string) (string, bool)) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString("$(")
				i++
				continue
			}
			name := s[i+2 : i+2+end]
			if v, ok := lookup(name); ok {
				b.WriteString(v)
			} else {
				b.WriteString("$(" + name + ")")
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// envLookup returns a lookup over env, a list of NAME=value.
func envLookup(env []string) func(string) (string, bool) {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return func(name string) (string, bool) {
		v, ok := m[name]
		return v, ok
	}
}
