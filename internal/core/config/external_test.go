package config

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestDecodePeerMatchesFilePeer(t *testing.T) {
	c := mustParse(t, onePeer+`    persistentKeepalive: 10s
    seesUs: [{real: 10.244.0.0/16, as: 10.71.0.0/16}]
    health: {interval: 50ms}
`)
	spec := expand(`{"publicKey":"$K1","prefixes":["10.72.0.0/16"],"persistentKeepalive":"10s",
"paths":[{"name":"direct","endpoint":"192.0.2.10:51900"}],
"seesUs":[{"real":"10.244.0.0/16","as":"10.71.0.0/16"}],"health":{"interval":"50ms"}}`)
	base := c.Clone()
	base.Peers = nil
	p, err := base.DecodePeer("provider-b", []byte(spec), "spec")
	if err != nil {
		t.Fatal(err)
	}
	if !p.Equal(c.Peers[0]) {
		t.Errorf("decoded peer\n%+v\nwant the file's\n%+v", p, c.Peers[0])
	}
}

func TestDecodePeerInheritsDefaults(t *testing.T) {
	c := mustParse(t, head+"health: {interval: 40ms}\n")
	p, err := c.DecodePeer("b", []byte(expand(`{"publicKey":"$K1"}`)), "spec")
	if err != nil {
		t.Fatal(err)
	}
	if p.Health.Interval != 40*time.Millisecond || p.PersistentKeepalive != DefaultPersistentKeepalive {
		t.Errorf("peer health interval %v keepalive %v, want the relay's 40ms and the default keepalive",
			p.Health.Interval, p.PersistentKeepalive)
	}
}

func TestDecodePeerErrors(t *testing.T) {
	c := mustParse(t, head)
	for _, tc := range []struct{ name, spec, want string }{
		{"unknown field", `{"publicKey":"$K1","pathz":[]}`, "spec.pathz: unknown field"},
		{"name", `{"publicKey":"$K1","name":"x"}`, "spec.name: not allowed here"},
		{"bad duration", `{"publicKey":"$K1","health":{"interval":"fast"}}`, "spec.health.interval"},
		{"not a mapping", `[1]`, "spec: expected a mapping"},
		{"syntax", `{`, "spec:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.DecodePeer("b", []byte(expand(tc.spec)), "spec")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("DecodePeer(%s) = %v, want an error containing %q", tc.spec, err, tc.want)
			}
		})
	}
}

func TestWithPeer(t *testing.T) {
	c := mustParse(t, onePeer)
	peer := func(name string, key byte, prefixes ...string) Peer {
		p := DefaultPeer(c.Health)
		p.Name, p.PublicKey = name, testKey(key)
		for _, s := range prefixes {
			p.Prefixes = append(p.Prefixes, netip.MustParsePrefix(s))
		}
		p.Paths = []Path{{Name: "direct", Endpoint: "192.0.2.20:51900", Host: "192.0.2.20", Port: 51900}}
		return p
	}
	allowed := []netip.Prefix{netip.MustParsePrefix("10.64.0.0/10")}
	for _, tc := range []struct {
		name    string
		p       Peer
		allowed []netip.Prefix
		want    []string // each must appear in the error; none means valid
	}{
		{"valid", peer("c", 2, "10.73.0.0/16"), allowed, nil},
		{"valid without allowed list", peer("c", 2, "172.16.0.0/12"), nil, nil},
		{"name clash", peer("provider-b", 2, "10.73.0.0/16"), nil, []string{`metadata.name: duplicate peer name "provider-b"`}},
		{"key clash", peer("c", 1, "10.73.0.0/16"), nil, []string{"spec.publicKey: public key also used by peer \"provider-b\""}},
		{"prefix overlaps a file peer", peer("c", 2, "10.72.1.0/24"), nil, []string{`spec.prefixes[0]: 10.72.1.0/24 of peer "c" overlaps 10.72.0.0/16 of peer "provider-b"`}},
		{"prefix overlaps exports", peer("c", 2, "10.244.0.0/24"), nil, []string{"spec.prefixes[0]: 10.244.0.0/24 overlaps exports[0]"}},
		{"prefix holds our address", peer("c", 2, "100.80.0.0/16"), nil, []string{"spec.prefixes[0]: 100.80.0.0/16 contains our own address"}},
		{"outside allowed", peer("c", 2, "10.73.0.0/16", "10.200.0.1/32"), allowed, []string{"spec.prefixes[1]: 10.200.0.1/32 is outside allowedPeerPrefixes [10.64.0.0/10]"}},
		{"bad endpoint", func() Peer { p := peer("c", 2, "10.73.0.0/16"); p.Paths[0].Endpoint = "nope"; return p }(), nil, []string{"spec.paths[0].endpoint"}},
		{"no paths", func() Peer { p := peer("c", 2, "10.73.0.0/16"); p.Paths = nil; return p }(), nil, []string{"spec.paths: required"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := c.Clone()
			m, err := c.WithPeer(tc.p, "spec", "metadata.name", tc.allowed)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("WithPeer: %v", err)
				}
				if len(m.Peers) != 2 || m.Peers[1].Name != tc.p.Name {
					t.Errorf("merged peers %v, want provider-b then %s", m.Peers, tc.p.Name)
				}
			} else {
				var errs Errors
				if !errors.As(err, &errs) {
					t.Fatalf("WithPeer error %v is not an Errors", err)
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("WithPeer error:\n%v\nwant it to contain %q", err, w)
					}
				}
				if strings.Contains(err.Error(), "peers[1]") {
					t.Errorf("error names the merged list's index, not the object's fields:\n%v", err)
				}
			}
			if len(c.Peers) != len(before.Peers) || !c.Peers[0].Equal(before.Peers[0]) {
				t.Error("WithPeer modified its receiver")
			}
		})
	}
}

func TestKubernetesFields(t *testing.T) {
	c := mustParse(t, `name: provider-a
privateKeySecret: {name: relay-key}
addresses: [100.80.0.1/32]
allowedPeerPrefixes: [10.64.0.0/10, fd00::/8]
`)
	if c.PrivateKeySecret != (SecretRef{Name: "relay-key", Key: DefaultSecretKey}) {
		t.Errorf("privateKeySecret %+v", c.PrivateKeySecret)
	}
	if len(c.AllowedPeerPrefixes) != 2 || !c.AllowsPrefix(netip.MustParsePrefix("10.72.0.0/16")) || c.AllowsPrefix(netip.MustParsePrefix("10.0.0.0/16")) {
		t.Errorf("allowedPeerPrefixes %v", c.AllowedPeerPrefixes)
	}
	c.SetKeyFromSecret(testPrivate(9))
	if err := c.Validate(); err != nil {
		t.Errorf("config with the key read from its Secret: %v", err)
	}
	for _, tc := range []struct{ doc, want string }{
		{"name: a\nprivateKeySecret: {name: Bad_Name}\naddresses: [100.80.0.1/32]\n", `privateKeySecret.name: "Bad_Name" is not a valid Secret name`},
		{"name: a\nprivateKeySecret: {name: k, key: 'a/b'}\naddresses: [100.80.0.1/32]\n", "privateKeySecret.key"},
		{"name: a\nprivateKeySecret: {name: k}\nprivateKey: $PRIV\naddresses: [100.80.0.1/32]\n", "privateKeySecret: privateKeySecret excludes privateKey"},
		{"name: a\nprivateKeySecret: {name: k}\nallowedPeerPrefixes: [10.64.0.1/10]\naddresses: [100.80.0.1/32]\n", "allowedPeerPrefixes[0]: 10.64.0.1/10 has host bits set"},
		{"name: a\naddresses: [100.80.0.1/32]\n", "privateKey: required (or privateKeyFile, or privateKeySecret"},
	} {
		errs := parseErrors(t, tc.doc)
		if !strings.Contains(errs.Error(), tc.want) {
			t.Errorf("%s: errors\n%v\nwant %q", tc.doc, errs, tc.want)
		}
	}
}
