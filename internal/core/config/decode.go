package config

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/liqo-relay/relay/internal/core/keys"
)

// maxNodes bounds the YAML nodes the decoder visits, counting every visit
// through an alias, so that an alias bomb cannot make Parse run for long. A
// peer with a few paths and prefixes is about 50 nodes, so thousands of
// peers stay below it.
const maxNodes = 1 << 18

// decoder walks a yaml.Node tree, reporting every problem with its path.
type decoder struct {
	errs   *errList
	visits int
	// exhausted is set once maxNodes is reached; from then on every node
	// reads as null and one error has been recorded.
	exhausted bool
}

// resolve follows aliases and counts the visit.
func (d *decoder) resolve(n *yaml.Node) *yaml.Node {
	for hops := 0; n != nil && n.Kind == yaml.AliasNode; hops++ {
		if hops > 100 {
			return nil
		}
		n = n.Alias
	}
	if d.exhausted {
		return nil
	}
	d.visits++
	if d.visits > maxNodes {
		d.exhausted = true
		d.errs.decodef("", fmt.Sprintf("document too large: more than %d nodes (including aliases)", maxNodes))
		return nil
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// describe names what a node is, for "expected X, got Y" messages.
func describe(n *yaml.Node) string {
	switch {
	case isNull(n):
		return "null"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	default:
		return strconv.Quote(n.Value)
	}
}

// fields checks that n is a mapping with string keys among known, each at
// most once, and returns the non-null values by key. It returns nil when n
// is not a mapping.
func (d *decoder) fields(n *yaml.Node, path string, known ...string) map[string]*yaml.Node {
	n = d.resolve(n)
	if n == nil {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.errs.decodef(path, "expected a mapping, got "+describe(n))
		return nil
	}
	m := make(map[string]*yaml.Node, len(n.Content)/2)
	firstLine := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := d.resolve(n.Content[i])
		if k == nil {
			continue
		}
		if k.Kind != yaml.ScalarNode {
			d.errs.decodef(path, "expected a field name, got "+describe(k))
			continue
		}
		name := k.Value
		if line, dup := firstLine[name]; dup {
			d.errs.add(path, fmt.Sprintf("duplicate key %q (line %d, first at line %d)", name, k.Line, line))
			continue
		}
		firstLine[name] = k.Line
		if !contains(known, name) {
			d.errs.decodef(field(path, name), "unknown field"+suggest(name, known))
			continue
		}
		if v := d.resolve(n.Content[i+1]); !isNull(v) {
			m[name] = v
		}
	}
	return m
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// suggest returns a hint for a misspelt field name: a known name that
// differs only in case or in '-'/'_'.
func suggest(name string, known []string) string {
	norm := func(s string) string {
		return strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(s))
	}
	for _, k := range known {
		if norm(k) == norm(name) {
			return fmt.Sprintf(" (did you mean %q?)", k)
		}
	}
	return ""
}

// list checks that n is a sequence and returns its elements (aliases
// resolved), or nil when it is not.
func (d *decoder) list(n *yaml.Node, path string) []*yaml.Node {
	if n.Kind != yaml.SequenceNode {
		d.errs.decodef(path, "expected a list, got "+describe(n))
		return nil
	}
	out := make([]*yaml.Node, 0, len(n.Content))
	for _, e := range n.Content {
		if e = d.resolve(e); e == nil {
			if d.exhausted {
				return nil
			}
			e = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
		}
		out = append(out, e)
	}
	return out
}

// scalar returns the text of a scalar node, or reports that the node is
// not a scalar.
func (d *decoder) scalar(n *yaml.Node, path, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		d.errs.decodef(path, "expected "+what+", got "+describe(n))
		return "", false
	}
	return n.Value, true
}

// The set* helpers decode m[name], if present, into *dst. They leave *dst
// alone when the field is absent or invalid.

func (d *decoder) setString(m map[string]*yaml.Node, parent, name string, dst *string) {
	if n := m[name]; n != nil {
		if s, ok := d.scalar(n, field(parent, name), "a string"); ok {
			*dst = s
		}
	}
}

// setScalar decodes m[name], if present, as a scalar described by what and
// converts it with parse, which returns the value or a message saying what
// is wrong with s. It leaves *dst alone when the field is absent or invalid.
func setScalar[T any](d *decoder, m map[string]*yaml.Node, parent, name, what string, dst *T, parse func(s string) (T, string)) {
	n := m[name]
	if n == nil {
		return
	}
	path := field(parent, name)
	s, ok := d.scalar(n, path, what)
	if !ok {
		return
	}
	v, msg := parse(s)
	if msg != "" {
		d.errs.decodef(path, msg)
		return
	}
	*dst = v
}

func (d *decoder) setInt(m map[string]*yaml.Node, parent, name string, dst *int) {
	setScalar(d, m, parent, name, "an integer", dst, func(s string) (int, string) {
		v, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return 0, fmt.Sprintf("%q is not an integer", s)
		}
		return int(v), ""
	})
}

// setTable decodes a routing table number (an unsigned 32-bit integer).
func (d *decoder) setTable(m map[string]*yaml.Node, parent, name string, dst *int) {
	setScalar(d, m, parent, name, "an integer", dst, func(s string) (int, string) {
		v, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return 0, fmt.Sprintf("%q is not a routing table (1..4294967295)", s)
		}
		return int(v), ""
	})
}

// setMark decodes a 32-bit firewall mark, decimal or 0x hex.
func (d *decoder) setMark(m map[string]*yaml.Node, parent, name string, dst *uint32) {
	setScalar(d, m, parent, name, "an integer", dst, func(s string) (uint32, string) {
		base, digits := 10, s
		if len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") {
			base, digits = 16, s[2:]
		}
		v, err := strconv.ParseUint(digits, base, 32)
		if err != nil || strings.HasPrefix(digits, "+") {
			return 0, fmt.Sprintf("%q is not a 32-bit mark (decimal or 0x hex)", s)
		}
		return uint32(v), ""
	})
}

func (d *decoder) setPort(m map[string]*yaml.Node, parent, name string, dst *uint16) {
	setScalar(d, m, parent, name, "a port", dst, func(s string) (uint16, string) {
		v, err := strconv.ParseUint(s, 10, 16)
		if err != nil {
			return 0, fmt.Sprintf("%q is not a port (1..65535)", s)
		}
		return uint16(v), ""
	})
}

func (d *decoder) setDuration(m map[string]*yaml.Node, parent, name string, dst *time.Duration) {
	setScalar(d, m, parent, name, "a duration", dst, func(s string) (time.Duration, string) {
		v, err := time.ParseDuration(s)
		if err != nil {
			hint := "like 100ms or 25s"
			if _, err := strconv.ParseFloat(s, 64); err == nil {
				hint = fmt.Sprintf("a unit is required, like %sms or %ss", s, s)
			}
			return 0, fmt.Sprintf("%q is not a duration (%s)", s, hint)
		}
		return v, ""
	})
}

func (d *decoder) setFloat(m map[string]*yaml.Node, parent, name string, dst *float64) {
	setScalar(d, m, parent, name, "a number", dst, func(s string) (float64, string) {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v != v || v > 1e300 || v < -1e300 {
			return 0, fmt.Sprintf("%q is not a finite number", s)
		}
		return v, ""
	})
}

func (d *decoder) setBool(m map[string]*yaml.Node, parent, name string, dst *bool) {
	setScalar(d, m, parent, name, "true or false", dst, func(s string) (bool, string) {
		switch strings.ToLower(s) {
		case "true":
			return true, ""
		case "false":
			return false, ""
		}
		return false, fmt.Sprintf("%q is not true or false", s)
	})
}

func (d *decoder) setPublicKey(m map[string]*yaml.Node, parent, name string, dst *keys.Public) {
	setKey(d, m, parent, name, dst, keys.ParsePublic)
}

func (d *decoder) setPrivateKey(m map[string]*yaml.Node, parent, name string, dst *keys.Private) {
	setKey(d, m, parent, name, dst, keys.ParsePrivate)
}

// setKey decodes a base64 key with parse, whose errors never quote the
// input (it may be a private key); an all-zero key is refused.
func setKey[K keys.Public | keys.Private](d *decoder, m map[string]*yaml.Node, parent, name string, dst *K, parse func(string) (K, error)) {
	setScalar(d, m, parent, name, "a base64 key", dst, func(s string) (K, string) {
		k, err := parse(s)
		if err != nil {
			return K{}, err.Error()
		}
		if k == (K{}) {
			return K{}, "key is all zeros"
		}
		return k, ""
	})
}

// prefix decodes one prefix; an invalid one is reported and returned as the
// zero Prefix, so that list indexes stay those of the document.
func (d *decoder) prefix(n *yaml.Node, path string) netip.Prefix {
	s, ok := d.scalar(n, path, "a prefix")
	if !ok {
		return netip.Prefix{}
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		hint := " (like 10.0.0.0/16)"
		if a, err := netip.ParseAddr(s); err == nil {
			hint = fmt.Sprintf(" (did you mean %s/%d?)", s, a.BitLen())
		}
		d.errs.decodef(path, fmt.Sprintf("%q is not a prefix%s", s, hint))
		return netip.Prefix{}
	}
	return p
}

func (d *decoder) setPrefix(m map[string]*yaml.Node, parent, name string, dst *netip.Prefix) {
	if n := m[name]; n != nil {
		*dst = d.prefix(n, field(parent, name))
	}
}

func (d *decoder) setPrefixes(m map[string]*yaml.Node, parent, name string, dst *[]netip.Prefix) {
	n := m[name]
	if n == nil {
		return
	}
	path := field(parent, name)
	elems := d.list(n, path)
	if elems == nil {
		return
	}
	out := make([]netip.Prefix, len(elems))
	for i, e := range elems {
		out[i] = d.prefix(e, index(path, i))
	}
	*dst = out
}
