package webhook

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// applyPatch applies RFC 6902 "add" operations to pod as the API server
// does, on its JSON form: an object member is set, "-" appends to an array.
func applyPatch(pod *corev1.Pod, ops []PatchOp) (*corev1.Pod, error) {
	raw, err := json.Marshal(pod)
	if err != nil {
		return nil, err
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	for _, op := range ops {
		if op.Op != "add" {
			return nil, fmt.Errorf("%s %s: only add is supported", op.Op, op.Path)
		}
		v, err := roundTrip(op.Value)
		if err != nil {
			return nil, err
		}
		if doc, err = add(doc, strings.Split(op.Path, "/")[1:], v); err != nil {
			return nil, fmt.Errorf("%s: %w", op.Path, err)
		}
	}
	raw, err = json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	out := &corev1.Pod{}
	return out, json.Unmarshal(raw, out)
}

func roundTrip(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	return out, json.Unmarshal(b, &out)
}

func add(doc any, path []string, v any) (any, error) {
	if len(path) == 0 {
		return v, nil
	}
	tok := strings.ReplaceAll(strings.ReplaceAll(path[0], "~1", "/"), "~0", "~")
	switch d := doc.(type) {
	case map[string]any:
		if len(path) == 1 {
			d[tok] = v
			return d, nil
		}
		child, ok := d[tok]
		if !ok {
			return nil, fmt.Errorf("no member %q", tok)
		}
		nc, err := add(child, path[1:], v)
		d[tok] = nc
		return d, err
	case []any:
		if tok == "-" && len(path) == 1 {
			return append(d, v), nil
		}
		i, err := strconv.Atoi(tok)
		if err != nil || i < 0 || i >= len(d) {
			return nil, fmt.Errorf("bad index %q", tok)
		}
		nc, err := add(d[i], path[1:], v)
		d[i] = nc
		return d, err
	}
	return nil, fmt.Errorf("cannot descend into %T at %q", doc, tok)
}
