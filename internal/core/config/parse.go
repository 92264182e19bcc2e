package config

import (
	"bytes"
	"errors"
	"io"

	"go.yaml.in/yaml/v3"
)

// Parse decodes a YAML configuration strictly, applies the defaults and
// validates the result. On failure it returns a nil Config and an Errors
// value holding every problem found.
func Parse(data []byte) (*Config, error) {
	var errs errList
	c, ok := decode(data, &errs)
	if ok {
		c.validate(&errs)
	}
	if err := errs.err(); err != nil {
		return nil, err
	}
	return c, nil
}

// decode builds a Config from data, recording decoding problems. It returns
// false when the document could not be read as YAML at all, so that
// semantic checks would only add noise.
func decode(data []byte, errs *errList) (*Config, bool) {
	c := Defaults()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return &c, true // empty document: validate reports what is missing
		}
		errs.decodef("", err.Error())
		return &c, false
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		errs.decodef("", "expected a single YAML document")
		return &c, false
	}
	root := &doc
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		root = doc.Content[0]
	}
	d := &decoder{errs: errs}
	r := d.resolve(root)
	switch {
	case isNull(r):
		return &c, true
	case r.Kind != yaml.MappingNode:
		errs.decodef("", "expected a mapping, got "+describe(r))
		return &c, false
	}
	d.config(r, &c)
	return &c, !d.exhausted
}

func (d *decoder) config(n *yaml.Node, c *Config) {
	m := d.fields(n, "",
		"name", "privateKey", "privateKeyFile", "listenPort", "mode",
		"addresses", "mtu", "tun", "netstack", "exports", "admin", "log",
		"health", "peers", "privateKeySecret", "allowedPeerPrefixes", "liqo",
		"nextPrivateKey", "keyRotationDeadline", "dns", "dnsServer")
	if m == nil {
		return
	}
	d.setString(m, "", "name", &c.Name)
	d.kubernetesFields(m, c)
	d.setPrivateKey(m, "", "privateKey", &c.PrivateKey)
	d.setString(m, "", "privateKeyFile", &c.PrivateKeyFile)
	d.rotationFields(m, c)
	d.setPort(m, "", "listenPort", &c.ListenPort)
	var mode string
	if m["mode"] != nil {
		d.setString(m, "", "mode", &mode)
		c.Mode = Mode(mode)
	}
	d.setPrefixes(m, "", "addresses", &c.Addresses)
	d.setInt(m, "", "mtu", &c.MTU)
	if n := m["tun"]; n != nil {
		if t := d.fields(n, "tun", "name", "table", "rulePriority", "fwMark"); t != nil {
			d.setString(t, "tun", "name", &c.Tun.Name)
			d.setTable(t, "tun", "table", &c.Tun.Table)
			d.setInt(t, "tun", "rulePriority", &c.Tun.RulePriority)
			d.setMark(t, "tun", "fwMark", &c.Tun.FwMark)
		}
	}
	if n := m["netstack"]; n != nil {
		d.netstack(n, &c.Netstack)
	}
	d.liqo(m, c)
	d.setPrefixes(m, "", "exports", &c.Exports)
	d.admin(m, &c.Admin)
	if n := m["log"]; n != nil {
		if t := d.fields(n, "log", "level", "format"); t != nil {
			d.setString(t, "log", "level", &c.Log.Level)
			d.setString(t, "log", "format", &c.Log.Format)
		}
	}
	if n := m["dns"]; n != nil {
		d.dns(n, &c.DNS)
	}
	if n := m["dnsServer"]; n != nil {
		d.dnsServer(n, &c.DNSServer)
	}
	// Global health first: the peers inherit it.
	if n := m["health"]; n != nil {
		d.health(n, "health", &c.Health)
	}
	if n := m["peers"]; n != nil {
		if elems := d.list(n, "peers"); elems != nil {
			c.Peers = make([]Peer, len(elems))
			for i, e := range elems {
				c.Peers[i] = DefaultPeer(c.Health)
				d.peer(e, index("peers", i), &c.Peers[i])
			}
		}
	}
}

// health applies the fields present in n on top of *h.
func (d *decoder) health(n *yaml.Node, path string, h *Health) {
	m := d.fields(n, path,
		"interval", "idleInterval", "detectMultiplier", "upThreshold",
		"betterMargin", "betterMarginRatio", "betterHold", "failbackHold",
		"lossPenalty", "selector", "dampening", "redundancy")
	if m == nil {
		return
	}
	d.setDuration(m, path, "interval", &h.Interval)
	d.setDuration(m, path, "idleInterval", &h.IdleInterval)
	d.setInt(m, path, "detectMultiplier", &h.DetectMultiplier)
	d.setInt(m, path, "upThreshold", &h.UpThreshold)
	d.setDuration(m, path, "betterMargin", &h.BetterMargin)
	d.setFloat(m, path, "betterMarginRatio", &h.BetterMarginRatio)
	d.setDuration(m, path, "betterHold", &h.BetterHold)
	d.setDuration(m, path, "failbackHold", &h.FailbackHold)
	d.setDuration(m, path, "lossPenalty", &h.LossPenalty)
	d.setString(m, path, "selector", (*string)(&h.Selector))
	d.setString(m, path, "redundancy", (*string)(&h.Redundancy))
	if n := m["dampening"]; n != nil {
		dp := field(path, "dampening")
		if t := d.fields(n, dp, "enabled", "penalty", "halfLife", "suppress", "reuse"); t != nil {
			dm := &h.Dampening
			d.setBool(t, dp, "enabled", &dm.Enabled)
			d.setFloat(t, dp, "penalty", &dm.Penalty)
			d.setDuration(t, dp, "halfLife", &dm.HalfLife)
			d.setFloat(t, dp, "suppress", &dm.Suppress)
			d.setFloat(t, dp, "reuse", &dm.Reuse)
		}
	}
}

func (d *decoder) peer(n *yaml.Node, path string, p *Peer) {
	m := d.fields(n, path,
		"name", "publicKey", "prefixes", "persistentKeepalive", "paths",
		"seesUs", "health", "nextPublicKey")
	if m == nil {
		return
	}
	d.setString(m, path, "name", &p.Name)
	d.setPublicKey(m, path, "publicKey", &p.PublicKey)
	d.setPublicKey(m, path, "nextPublicKey", &p.NextPublicKey)
	d.setPrefixes(m, path, "prefixes", &p.Prefixes)
	d.setDuration(m, path, "persistentKeepalive", &p.PersistentKeepalive)
	if n := m["paths"]; n != nil {
		pp := field(path, "paths")
		if elems := d.list(n, pp); elems != nil {
			p.Paths = make([]Path, len(elems))
			for i, e := range elems {
				d.path(e, index(pp, i), &p.Paths[i])
			}
		}
	}
	if n := m["seesUs"]; n != nil {
		sp := field(path, "seesUs")
		if elems := d.list(n, sp); elems != nil {
			p.SeesUs = make([]Mapping, len(elems))
			for i, e := range elems {
				ep := index(sp, i)
				if t := d.fields(e, ep, "real", "as"); t != nil {
					d.setPrefix(t, ep, "real", &p.SeesUs[i].Real)
					d.setPrefix(t, ep, "as", &p.SeesUs[i].As)
				}
			}
		}
	}
	if n := m["health"]; n != nil {
		d.health(n, field(path, "health"), &p.Health)
	}
}

func (d *decoder) path(n *yaml.Node, path string, p *Path) {
	m := d.fields(n, path, "name", "endpoint", "bias")
	if m == nil {
		return
	}
	d.setString(m, path, "name", &p.Name)
	d.setString(m, path, "endpoint", &p.Endpoint)
	if p.Endpoint != "" {
		if host, port, msg := splitHostPort(p.Endpoint, false); msg == "" {
			p.Host, p.Port = host, port
		}
	}
	d.setDuration(m, path, "bias", &p.Bias)
}
