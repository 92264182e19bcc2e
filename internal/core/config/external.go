package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"

	"go.yaml.in/yaml/v3"
)

// This file serves peers that come from another source than the
// configuration file, such as a Kubernetes RelayPeer: they are decoded with
// the file's own decoder, so that they mean exactly what a file peer means,
// and validated against the running configuration, with every problem
// reported under the caller's field path (for example "spec.paths[0]").

// DecodePeer decodes one peer from data, a YAML or JSON mapping holding a
// peer's fields without its name (a RelayPeer's spec), the way the
// configuration file's peers are decoded: the peer inherits c.Health and the
// per-peer defaults, and is named name. Problems are reported under prefix.
// It checks only what decoding checks; WithPeer validates the peer against
// the rest of the configuration.
func (c *Config) DecodePeer(name string, data []byte, prefix string) (Peer, error) {
	var errs errList
	p := DefaultPeer(c.Health)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	switch err := dec.Decode(&doc); {
	case errors.Is(err, io.EOF):
		doc = yaml.Node{Kind: yaml.MappingNode}
	case err != nil:
		errs.decodef(prefix, err.Error())
		return Peer{}, errs.err()
	}
	root := &doc
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		root = doc.Content[0]
	}
	d := &decoder{errs: &errs}
	if r := d.resolve(root); r != nil && r.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(r.Content); i += 2 {
			if r.Content[i].Value == "name" {
				errs.decodef(field(prefix, "name"), "not allowed here: the peer's name is the object's name")
			}
		}
	}
	d.peer(root, prefix, &p)
	if err := errs.err(); err != nil {
		return Peer{}, err
	}
	p.Name = name
	return p, nil
}

// WithPeer returns a copy of c with p added after the existing peers, once
// the whole result validates, and prefixes within allowed when allowed is
// not empty. Every problem that p brings is reported under prefix: its own
// fields as prefix.<field>, its name as nameField, and conflicts with the
// rest of the configuration (a prefix another peer routes, a public key
// another peer uses) under the field of p that conflicts. c itself must be
// valid. c is not modified.
func (c *Config) WithPeer(p Peer, prefix, nameField string, allowed []netip.Prefix) (*Config, error) {
	m := c.Clone()
	m.Peers = append(m.Peers, p)
	own := index("peers", len(m.Peers)-1)
	var errs errList
	m.validate(&errs)
	var out Errors
	for _, fe := range errs.errs {
		switch {
		case fe.Path == field(own, "name"):
			out = append(out, FieldError{Path: nameField, Msg: fe.Msg})
		case fe.Path == own || strings.HasPrefix(fe.Path, own+".") || strings.HasPrefix(fe.Path, own+"["):
			out = append(out, FieldError{Path: prefix + strings.TrimPrefix(fe.Path, own), Msg: fe.Msg})
		default:
			// c was valid, so p caused it: say so under p.
			out = append(out, FieldError{Path: prefix, Msg: "conflicts with the relay's configuration: " + fe.Error()})
		}
	}
	if len(allowed) > 0 {
		for i, q := range p.Prefixes {
			if q.IsValid() && !within(q, allowed) {
				out = append(out, FieldError{
					Path: index(field(prefix, "prefixes"), i),
					Msg:  fmt.Sprintf("%s is outside allowedPeerPrefixes %s", q, prefixList(allowed)),
				})
			}
		}
	}
	if len(out) > 0 {
		return nil, out
	}
	return m, nil
}

// within reports whether q lies inside one of the prefixes of list.
func within(q netip.Prefix, list []netip.Prefix) bool {
	for _, a := range list {
		if a.Addr().Is4() == q.Addr().Is4() && a.Bits() <= q.Bits() && a.Contains(q.Addr()) {
			return true
		}
	}
	return false
}

func prefixList(list []netip.Prefix) string {
	s := make([]string, len(list))
	for i, p := range list {
		s[i] = p.String()
	}
	return "[" + strings.Join(s, ", ") + "]"
}
