package config

import (
	"net/netip"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseFull(t *testing.T) {
	data, err := os.ReadFile("testdata/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := mustParse(t, string(data))
	if c.Name != "provider-a" || c.PrivateKey.Reveal() != vectorPrivate || c.PublicKey().String() != vectorPublic {
		t.Errorf("identity = %q %v %v", c.Name, c.PrivateKey, c.PublicKey())
	}
	if c.Tun.FwMark != 0x1900 || c.Tun.Table != 1900 || c.Tun.Name != "relay0" {
		t.Errorf("tun = %+v", c.Tun)
	}
	if c.Netstack.SOCKS5 != "127.0.0.1:1080" {
		t.Errorf("netstack = %+v", c.Netstack)
	}
	if len(c.Peers) != 2 {
		t.Fatalf("got %d peers, want 2", len(c.Peers))
	}
	b, ok := c.Peer("provider-b")
	if !ok {
		t.Fatal("Peer(provider-b) not found")
	}
	wantPaths := []Path{
		{Name: "direct", Endpoint: "192.0.2.10:51900", Host: "192.0.2.10", Port: 51900},
		{Name: "consumer", Endpoint: "10.70.0.9:51900", Host: "10.70.0.9", Port: 51900},
	}
	if !reflect.DeepEqual(b.Paths, wantPaths) {
		t.Errorf("paths = %+v, want %+v", b.Paths, wantPaths)
	}
	wantMap := []Mapping{{netip.MustParsePrefix("10.244.0.0/16"), netip.MustParsePrefix("10.71.0.0/16")}}
	if !reflect.DeepEqual(b.SeesUs, wantMap) {
		t.Errorf("seesUs = %+v, want %+v", b.SeesUs, wantMap)
	}
	// provider-b overrides the interval only; the rest is inherited.
	wantB := DefaultHealth()
	wantB.Interval = 50 * time.Millisecond
	if b.Health != wantB {
		t.Errorf("provider-b health = %+v, want %+v", b.Health, wantB)
	}
	cc, _ := c.Peer("provider-c")
	if cc.Health != DefaultHealth() || cc.PersistentKeepalive != DefaultPersistentKeepalive {
		t.Errorf("provider-c = %+v", cc)
	}
	if p := cc.Paths[1]; p.Host != "2001:db8::10" || p.Port != 51900 {
		t.Errorf("v6 path = %+v", p)
	}
	if p := cc.Paths[0]; p.Host != "relay-c.example.net" {
		t.Errorf("hostname path = %+v", p)
	}
	if _, ok := c.Peer("nope"); ok {
		t.Error("Peer(nope) found")
	}
}

// TestDefaultsRoundTrip checks that a minimal document gets exactly the
// documented defaults, and that spelling every default out changes nothing.
func TestDefaultsRoundTrip(t *testing.T) {
	minimal := mustParse(t, onePeer)
	want := Defaults()
	want.Name = "provider-a"
	want.PrivateKey = mustPrivate(t, vectorPrivate)
	want.Addresses = []netip.Prefix{netip.MustParsePrefix("100.80.0.1/32")}
	want.Exports = []netip.Prefix{netip.MustParsePrefix("10.244.0.0/16")}
	peer := DefaultPeer(DefaultHealth())
	peer.Name = "provider-b"
	peer.PublicKey = testKey(1)
	peer.Prefixes = []netip.Prefix{netip.MustParsePrefix("10.72.0.0/16")}
	peer.Paths = []Path{{Name: "direct", Endpoint: "192.0.2.10:51900", Host: "192.0.2.10", Port: 51900}}
	want.Peers = []Peer{peer}
	if !reflect.DeepEqual(minimal, &want) {
		t.Errorf("minimal config:\n got %+v\nwant %+v", minimal, &want)
	}

	explicit := mustParse(t, `name: provider-a
privateKey: $PRIV
addresses: [100.80.0.1/32]
exports: [10.244.0.0/16]
listenPort: 51900
mode: tun
mtu: 1280
tun: {name: relay0, table: 1900, rulePriority: 1900, fwMark: "0x1900"}
netstack: {}
admin: 127.0.0.1:9586
log: {level: info, format: text}
health:
  interval: 100ms
  idleInterval: 500ms
  detectMultiplier: 3
  upThreshold: 3
  betterMargin: 2ms
  betterMarginRatio: 0.10
  betterHold: 2s
  failbackHold: 3s
  lossPenalty: 200ms
  selector: lowest-cost
  dampening: {enabled: true, penalty: 1000, halfLife: 15s, suppress: 3500, reuse: 1500}
peers:
  - name: provider-b
    publicKey: $K1
    prefixes: [10.72.0.0/16]
    persistentKeepalive: 25s
    paths:
      - {name: direct, endpoint: 192.0.2.10:51900, bias: 0s}
    seesUs: []
    health: {}
`)
	explicit.Peers[0].SeesUs = nil // [] versus absent
	if !reflect.DeepEqual(explicit, minimal) {
		t.Errorf("explicit defaults:\n got %+v\nwant %+v", explicit, minimal)
	}
	if err := minimal.Validate(); err != nil {
		t.Errorf("Validate of a parsed config: %v", err)
	}
}

func TestParseValid(t *testing.T) {
	for _, tc := range []struct {
		name  string
		doc   string
		check func(*Config) bool
	}{
		{"no peers", head, func(c *Config) bool { return len(c.Peers) == 0 }},
		{"null peers", head + "peers:\n", func(c *Config) bool { return len(c.Peers) == 0 }},
		{"empty peers", head + "peers: []\n", func(c *Config) bool { return len(c.Peers) == 0 }},
		{"key file", "name: a\nprivateKeyFile: /etc/relay/key\naddresses: [100.80.0.1/32]\n",
			func(c *Config) bool {
				return c.PrivateKey.IsZero() && c.PrivateKeyFile == "/etc/relay/key" && c.PublicKey().IsZero()
			}},
		{"decimal fwMark", head + "tun: {fwMark: 6400}\n", func(c *Config) bool { return c.Tun.FwMark == 0x1900 }},
		{"hex fwMark", head + "tun: {fwMark: 0xFF}\n", func(c *Config) bool { return c.Tun.FwMark == 255 }},
		{"netstack ignores tun", head + "mode: netstack\ntun: {name: this-name-is-far-too-long, table: 254}\nnetstack: {socks5: 127.0.0.1:1080}\n",
			func(c *Config) bool { return c.Mode == ModeNetstack && c.Netstack.SOCKS5 == "127.0.0.1:1080" }},
		{"tun ignores netstack", head + "netstack: {socks5: nonsense}\n", func(c *Config) bool { return c.Mode == ModeTUN }},
		{"address with host bits", "name: a\nprivateKey: $PRIV\naddresses: [100.80.0.1/24, 'fd00::1/64']\n",
			func(c *Config) bool { return c.Addresses[0].String() == "100.80.0.1/24" }},
		{"listen addresses", head + "admin: {listen: ':0', tokenFile: /t}\nmode: netstack\nnetstack: {socks5: 'localhost:1080'}\n",
			func(c *Config) bool { return c.Admin == Admin{Listen: ":0", TokenFile: "/t"} }},
		{"mtu 576 in pure IPv4", head + "mtu: 576\n", func(c *Config) bool { return c.MTU == 576 }},
		{"quoted numbers", head + "listenPort: '51901'\nmtu: \"1400\"\n", func(c *Config) bool { return c.ListenPort == 51901 && c.MTU == 1400 }},
		{"keepalive disabled", onePeer + "    persistentKeepalive: 0s\n", func(c *Config) bool { return c.Peers[0].PersistentKeepalive == 0 }},
		{"keepalive bare 0", onePeer + "    persistentKeepalive: 0\n", func(c *Config) bool { return c.Peers[0].PersistentKeepalive == 0 }},
		{"dampening off with odd values", head + "health: {dampening: {enabled: false, reuse: 5000}}\n",
			func(c *Config) bool { return !c.Health.Dampening.Enabled && c.Health.Dampening.Suppress == 3500 }},
		{"naive selector", head + "health: {selector: naive}\n", func(c *Config) bool { return c.Health.Selector == SelectorNaive }},
		{"redundancy auto", head + "health: {redundancy: auto}\n", func(c *Config) bool { return c.Health.Redundancy == "auto" }},
		{"peer overrides dampening subset", onePeer + "    health: {dampening: {halfLife: 1s}}\n",
			func(c *Config) bool {
				d := c.Peers[0].Health.Dampening
				return d.HalfLife == time.Second && d.Enabled && d.Penalty == 1000 && c.Health.Dampening.HalfLife == 15*time.Second
			}},
		{"peer inherits global override", head + "health: {lossPenalty: 1s}\npeers:\n  - {name: b, publicKey: $K1, prefixes: [10.72.0.0/16], paths: [{name: d, endpoint: 'h:1'}]}\n",
			func(c *Config) bool { return c.Peers[0].Health.LossPenalty == time.Second }},
		{"seesUs real inside an address", "name: a\nprivateKey: $PRIV\naddresses: [100.80.0.1/24]\npeers:\n  - {name: b, publicKey: $K1, prefixes: [10.72.0.0/16], paths: [{name: d, endpoint: 'h:1'}], seesUs: [{real: 100.80.0.0/24, as: 100.81.0.0/24}]}\n",
			func(c *Config) bool { return len(c.Peers[0].SeesUs) == 1 }},
		{"anchors and aliases", head + "health: &h {interval: 20ms}\npeers:\n  - name: b\n    publicKey: $K1\n    prefixes: &p [10.72.0.0/16]\n    paths: [{name: d, endpoint: 'h:1'}]\n    health: *h\n",
			func(c *Config) bool { return c.Peers[0].Health.Interval == 20*time.Millisecond }},
		{"explicit document markers", "---\n" + head + "...\n", func(c *Config) bool { return c.Name == "provider-a" }},
		{"ipv6 zone endpoint", onePeer + "      - {name: link, endpoint: '[fe80::1%eth0]:51900'}\n",
			func(c *Config) bool { return c.Peers[0].Paths[1].Host == "fe80::1%eth0" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mustParse(t, tc.doc)
			if !tc.check(c) {
				t.Errorf("unexpected config %+v", c)
			}
		})
	}
}

// invalidCase is a document and the problems Parse must report for it:
// every want is a substring of some error line, and every error line
// matches some want.
type invalidCase struct {
	name string
	doc  string
	want []string
}

// invalidDocument break the document as a whole: its syntax, its shape,
// unknown and duplicate fields.
var invalidDocument = []invalidCase{
	{"empty", "", []string{"name: required", "privateKey: required", "addresses: required"}},
	{"null document", "~\n", []string{"name: required", "privateKey: required", "addresses: required"}},
	{"not a mapping", "- a\n- b\n", []string{"expected a mapping, got a list"}},
	{"syntax", "name: [a\n", []string{"yaml: line"}},
	{"two documents", head + "---\nname: b\n", []string{"expected a single YAML document"}},
	{"unknown field", head + "foo: 1\n", []string{"foo: unknown field"}},
	{"misspelt field", head + "listenport: 1\n", []string{`listenport: unknown field (did you mean "listenPort"?)`}},
	{"duplicate key", head + "name: b\n", []string{`duplicate key "name" (line 5, first at line 1)`}},
	{"non-string key", head + "[a]: 1\n", []string{"expected a field name, got a list"}},
}

// invalidIdentity break the relay's name or key.
var invalidIdentity = []invalidCase{
	{"bad name", strings.Replace(head, "provider-a", "Provider_A", 1), []string{`name: "Provider_A" is not a DNS-1123 label`}},
	{"long name", strings.Replace(head, "provider-a", strings.Repeat("a", 64), 1), []string{"is not a DNS-1123 label"}},
	{"name is a list", strings.Replace(head, "provider-a", "[a]", 1), []string{"name: expected a string, got a list"}},
	{"both keys", head + "privateKeyFile: /k\n", []string{"privateKey: privateKey and privateKeyFile are mutually exclusive"}},
	{"bad key", strings.Replace(head, "$PRIV", "abc", 1), []string{"privateKey: key is not valid base64"}},
	{"short key", strings.Replace(head, "$PRIV", "AAAA", 1), []string{"privateKey: key has 3 bytes, want 32"}},
	{"zero key", strings.Replace(head, "$PRIV", strings.Repeat("A", 43)+"=", 1), []string{"privateKey: key is all zeros"}},
}

// invalidScalars break a top-level setting: port, mode, addresses,
// exports, MTU, admin and log.
var invalidScalars = []invalidCase{
	{"port not a number", head + "listenPort: abc\n", []string{`listenPort: "abc" is not a port`}},
	{"port too big", head + "listenPort: 70000\n", []string{`listenPort: "70000" is not a port`}},
	{"port zero", head + "listenPort: 0\n", []string{"listenPort: 0 is not a port"}},
	{"mode", head + "mode: tap\n", []string{`mode: "tap" is not a mode (tun or netstack)`}},
	{"no addresses", "name: a\nprivateKey: $PRIV\naddresses: []\n", []string{"addresses: required"}},
	{"address not a prefix", "name: a\nprivateKey: $PRIV\naddresses: [100.80.0.1]\n", []string{`addresses[0]: "100.80.0.1" is not a prefix (did you mean 100.80.0.1/32?)`}},
	{"address garbage", "name: a\nprivateKey: $PRIV\naddresses: [foo, 100.80.0.1/32]\n", []string{`addresses[0]: "foo" is not a prefix (like 10.0.0.0/16)`}},
	{"addresses not a list", "name: a\nprivateKey: $PRIV\naddresses: 100.80.0.1/32\n", []string{`addresses: expected a list, got "100.80.0.1/32"`}},
	{"duplicate address", "name: a\nprivateKey: $PRIV\naddresses: [100.80.0.1/32, 100.80.0.1/32]\n", []string{"addresses[1]: 100.80.0.1/32 is a duplicate of addresses[0]"}},
	{"export host bits", "name: a\nprivateKey: $PRIV\naddresses: [100.80.0.1/32]\nexports: [10.244.1.0/16]\n", []string{"exports[0]: 10.244.1.0/16 has host bits set (did you mean 10.244.0.0/16?)"}},
	{"mtu low", head + "mtu: 500\n", []string{"mtu: 500 is out of range 576..9000"}},
	{"mtu high", head + "mtu: 9001\n", []string{"mtu: 9001 is out of range"}},
	{"mtu not int", head + "mtu: 1.5k\n", []string{`mtu: "1.5k" is not an integer`}},
	{"mtu below v6 minimum", "name: a\nprivateKey: $PRIV\naddresses: ['fd00::1/128']\nmtu: 1200\n", []string{"mtu: 1200 is below 1280, the IPv6 minimum"}},
	{"mtu v6 via peer prefix", onePeer + "    seesUs: []\n" + "  - {name: c, publicKey: $K2, prefixes: ['fd00:72::/48'], paths: [{name: d, endpoint: 'h:1'}]}\nmtu: 1000\n", []string{"mtu: 1000 is below 1280"}},
	{"admin scalar not loopback", head + "admin: 0.0.0.0:9586\n", []string{`admin.listen: "0.0.0.0:9586" is not a loopback address`, "set admin.tokenFile"}},
	{"admin all addresses", head + "admin: {listen: ':9586'}\n", []string{`admin.listen: ":9586" is not a loopback address`}},
	{"admin host name", head + "admin: {listen: 'relay.example.com:9586'}\n", []string{`admin.listen: "relay.example.com:9586" is not a loopback address`}},
	{"admin metrics same as listen", head + "admin: {listen: '127.0.0.1:9586', metricsListen: '127.0.0.1:9586'}\n", []string{`admin.metricsListen: "127.0.0.1:9586" is also admin.listen`}},
	{"admin metrics localhost alias", head + "admin: {listen: '127.0.0.1:9586', metricsListen: 'localhost:9586'}\n", []string{`admin.metricsListen: "localhost:9586" and admin.listen "127.0.0.1:9586" are the same address`}},
	{"admin metrics IPv6 localhost alias", head + "admin: {listen: 'localhost:9586', metricsListen: '[::1]:9586'}\n", []string{`admin.metricsListen: "[::1]:9586" and admin.listen "localhost:9586" are the same address`}},
	{"admin metrics mapped alias", head + "admin: {listen: '127.0.0.1:9586', metricsListen: '[::ffff:127.0.0.1]:9586'}\n", []string{`admin.metricsListen: "[::ffff:127.0.0.1]:9586" and admin.listen "127.0.0.1:9586" are the same address`}},
	{"admin metrics all addresses", head + "admin: {listen: '127.0.0.1:9586', metricsListen: '0.0.0.0:9586'}\n", []string{`admin.metricsListen: "0.0.0.0:9586" listens on every address, admin.listen "127.0.0.1:9586" among them, on the same port`}},
	{"admin metrics empty host", head + "admin: {listen: '127.0.0.1:9586', metricsListen: ':9586'}\n", []string{`admin.metricsListen: ":9586" listens on every address, admin.listen "127.0.0.1:9586" among them, on the same port`}},
	{"admin listen all addresses", head + "admin: {listen: '[::]:9586', tokenFile: /t, metricsListen: '10.0.0.1:9586'}\n", []string{`admin.metricsListen: admin.listen "[::]:9586" listens on every address, "10.0.0.1:9586" among them, on the same port`}},
	{"admin metrics bad", head + "admin: {metricsListen: 'nowhere'}\n", []string{`admin.metricsListen: "nowhere" is not host:port`}},
	{"admin unknown field", head + "admin: {token: x}\n", []string{`admin.token: unknown field`}},
	{"admin list", head + "admin: [a]\n", []string{`admin: expected a mapping, got a list`}},
	{"admin not host:port", head + "admin: \"off\"\n", []string{`admin.listen: "off" is not host:port`}},
	{"admin bad port", head + "admin: 'localhost:http'\n", []string{`admin.listen: "localhost:http" is not host:port: "http" is not a port (0..65535)`}},
	{"log level", head + "log: {level: verbose}\n", []string{`log.level: "verbose" is not a level`}},
	{"log format", head + "log: {format: xml}\n", []string{`log.format: "xml" is not a format`}},
	{"log unknown", head + "log: {colour: true}\n", []string{"log.colour: unknown field"}},
	{"log not mapping", head + "log: debug\n", []string{`log: expected a mapping, got "debug"`}},
}

// invalidTunNetstack break the tun or netstack settings.
var invalidTunNetstack = []invalidCase{
	{"tun name long", head + "tun: {name: relay0123456789ab}\n", []string{`tun.name: "relay0123456789ab" is not a Linux interface name`}},
	{"tun name slash", head + "tun: {name: a/b}\n", []string{"tun.name:"}},
	{"tun table reserved", head + "tun: {table: 254}\n", []string{"tun.table: 254 is reserved"}},
	{"tun table zero", head + "tun: {table: 0}\n", []string{"tun.table: 0 is not a routing table"}},
	{"tun table negative", head + "tun: {table: -1}\n", []string{`tun.table: "-1" is not a routing table`}},
	{"tun priority", head + "tun: {rulePriority: 32766}\n", []string{"tun.rulePriority: 32766 is out of range 1..32765"}},
	{"tun fwMark zero", head + "tun: {fwMark: 0}\n", []string{"tun.fwMark: must not be 0"}},
	{"tun fwMark bad", head + "tun: {fwMark: 0xZZ}\n", []string{`tun.fwMark: "0xZZ" is not a 32-bit mark`}},
	{"tun fwMark too big", head + "tun: {fwMark: 0x100000000}\n", []string{`tun.fwMark: "0x100000000" is not a 32-bit mark`}},
	{"tun types checked in netstack mode", head + "mode: netstack\ntun: {table: x, foo: 1}\n", []string{`tun.table: "x" is not a routing table`, "tun.foo: unknown field"}},
	{"socks5", head + "mode: netstack\nnetstack: {socks5: 1080}\n", []string{`netstack.socks5: "1080" is not host:port`}},
	{"socks5 bare v6", head + "mode: netstack\nnetstack: {socks5: '::1:1080'}\n", []string{"write IPv6 addresses in brackets"}},
}

// invalidHealth break the health (probing and selection) settings.
var invalidHealth = []invalidCase{
	{"interval small", head + "health: {interval: 5ms}\n", []string{"health.interval: 5ms is below the minimum of 10ms"}},
	{"interval not duration", head + "health: {interval: 100}\n", []string{`health.interval: "100" is not a duration (a unit is required, like 100ms or 100s)`}},
	{"idle shorter", head + "health: {interval: 1s}\n", []string{"health.idleInterval: 500ms is shorter than interval 1s"}},
	{"multiplier", head + "health: {detectMultiplier: 0}\n", []string{"health.detectMultiplier: 0 is out of range 1..255"}},
	{"multiplier high", head + "health: {detectMultiplier: 256}\n", []string{"health.detectMultiplier: 256 is out of range"}},
	{"upThreshold", head + "health: {upThreshold: 0}\n", []string{"health.upThreshold: 0 is below 1"}},
	{"negative margin", head + "health: {betterMargin: -1ms}\n", []string{"health.betterMargin: -1ms is negative"}},
	{"negative holds", head + "health: {betterHold: -1s, failbackHold: -1s, lossPenalty: -1s}\n",
		[]string{"health.betterHold: -1s is negative", "health.failbackHold: -1s is negative", "health.lossPenalty: -1s is negative"}},
	{"ratio", head + "health: {betterMarginRatio: 1.5}\n", []string{"health.betterMarginRatio: 1.5 is out of range 0..1"}},
	{"ratio nan", head + "health: {betterMarginRatio: .nan}\n", []string{`health.betterMarginRatio: ".nan" is not a finite number`}},
	{"ratio string", head + "health: {betterMarginRatio: ten}\n", []string{`health.betterMarginRatio: "ten" is not a finite number`}},
	{"selector", head + "health: {selector: fastest}\n", []string{`health.selector: "fastest" is not a selector`}},
	{"redundancy", head + "health: {redundancy: twice}\n", []string{`health.redundancy: "twice" is not a redundancy mode`}},
	{"peer redundancy", onePeer + "    health: {redundancy: always}\n", []string{`peers[0].health.redundancy: "always" is not a redundancy mode`}},
	{"dampening reuse", head + "health: {dampening: {reuse: 4000}}\n", []string{"health.dampening.reuse: 4000 is not below suppress 3500"}},
	{"dampening halfLife", head + "health: {dampening: {halfLife: 0s}}\n", []string{"health.dampening.halfLife: 0s is not positive"}},
	{"dampening penalty", head + "health: {dampening: {penalty: -1, suppress: 0}}\n",
		[]string{"health.dampening.penalty: -1 is not a positive number", "health.dampening.suppress: 0 is not a positive number"}},
	{"dampening enabled", head + "health: {dampening: {enabled: maybe}}\n", []string{`health.dampening.enabled: "maybe" is not true or false`}},
	{"dampening unknown", head + "health: {dampening: {decay: 1}}\n", []string{"health.dampening.decay: unknown field"}},
	{"health unknown", head + "health: {timeout: 1s}\n", []string{"health.timeout: unknown field"}},
}

// invalidPeers break one peer.
var invalidPeers = []invalidCase{
	{"peers not a list", head + "peers: {name: b}\n", []string{"peers: expected a list, got a mapping"}},
	{"peer null", head + "peers: [~]\n", []string{"peers[0]: expected a mapping, got null"}},
	{"peer empty", head + "peers: [{}]\n", []string{"peers[0].name: required", "peers[0].publicKey: required", "peers[0].prefixes: required", "peers[0].paths: required"}},
	{"peer unknown field", onePeer + "    foo: 1\n", []string{"peers[0].foo: unknown field"}},
	{"peer duplicate key", onePeer + "    name: c\n", []string{`peers[0]: duplicate key "name"`}},
	{"peer bad name", strings.Replace(onePeer, "provider-b", "B", 1), []string{`peers[0].name: "B" is not a DNS-1123 label`}},
	{"peer own name", strings.Replace(onePeer, "provider-b", "provider-a", 1), []string{`peers[0].name: "provider-a" is this relay's own name`}},
	{"peer bad key", strings.Replace(onePeer, "$K1", "xyz", 1), []string{"peers[0].publicKey: key is not valid base64"}},
	{"peer own key", strings.Replace(onePeer, "$K1", "$OWNPUB", 1), []string{"peers[0].publicKey: is this relay's own public key"}},
	{"peer prefix host bits", strings.Replace(onePeer, "10.72.0.0/16", "10.72.1.0/16", 1), []string{"peers[0].prefixes[0]: 10.72.1.0/16 has host bits set"}},
	{"peer prefix garbage", strings.Replace(onePeer, "10.72.0.0/16", "10.72.0.0/33", 1), []string{`peers[0].prefixes[0]: "10.72.0.0/33" is not a prefix`}},
	{"peer prefix overlaps exports", strings.Replace(onePeer, "10.72.0.0/16", "10.244.128.0/17", 1), []string{"peers[0].prefixes[0]: 10.244.128.0/17 overlaps exports[0] 10.244.0.0/16"}},
	{"peer prefix contains our address", strings.Replace(onePeer, "10.72.0.0/16", "100.80.0.0/24", 1), []string{"peers[0].prefixes[0]: 100.80.0.0/24 contains our own address addresses[0] 100.80.0.1"}},
	{"keepalive negative", onePeer + "    persistentKeepalive: -1s\n", []string{"peers[0].persistentKeepalive: -1s is not a whole number of seconds"}},
	{"keepalive fraction", onePeer + "    persistentKeepalive: 1500ms\n", []string{"peers[0].persistentKeepalive: 1.5s is not a whole number"}},
	{"keepalive huge", onePeer + "    persistentKeepalive: 20h\n", []string{"peers[0].persistentKeepalive: 20h0m0s is not a whole number of seconds in 0s..18h12m15s"}},
	{"keepalive bad", onePeer + "    persistentKeepalive: often\n", []string{`peers[0].persistentKeepalive: "often" is not a duration`}},
	{"peer health", onePeer + "    health: {interval: 1ms, selector: x}\n", []string{"peers[0].health.interval: 1ms is below", `peers[0].health.selector: "x" is not a selector`}},
	{"peer health relation", onePeer + "    health: {interval: 1s}\n", []string{"peers[0].health.idleInterval: 500ms is shorter than interval 1s"}},
	{"peer inherits bad global once", onePeer + "health: {selector: x}\n", []string{`health.selector: "x" is not a selector`}},
	{"peer health unknown", onePeer + "    health: {foo: 1}\n", []string{"peers[0].health.foo: unknown field"}},
}

// invalidPaths break one of a peer's paths.
var invalidPaths = []invalidCase{
	{"paths empty", strings.Replace(onePeer, "    paths:\n      - {name: direct, endpoint: 192.0.2.10:51900}\n", "    paths: []\n", 1), []string{"peers[0].paths: required: at least one path"}},
	{"path missing fields", onePeer + "      - {bias: 1ms}\n", []string{"peers[0].paths[1].name: required", "peers[0].paths[1].endpoint: required"}},
	{"path duplicate name", onePeer + "      - {name: direct, endpoint: 10.70.0.9:51900}\n", []string{`peers[0].paths[1].name: duplicate path name "direct" (also peers[0].paths[0])`}},
	{"path bad name", onePeer + "      - {name: Via_Consumer, endpoint: 10.70.0.9:51900}\n", []string{`peers[0].paths[1].name: "Via_Consumer" is not a DNS-1123 label`}},
	{"endpoint no port", onePeer + "      - {name: c, endpoint: foo}\n", []string{`peers[0].paths[1].endpoint: "foo" is not host:port`}},
	{"endpoint port zero", onePeer + "      - {name: c, endpoint: 'h:0'}\n", []string{`peers[0].paths[1].endpoint: "h:0" is not host:port: "0" is not a port (1..65535)`}},
	{"endpoint port big", onePeer + "      - {name: c, endpoint: 'h:65536'}\n", []string{`"65536" is not a port`}},
	{"endpoint no host", onePeer + "      - {name: c, endpoint: ':51900'}\n", []string{"the host is missing"}},
	{"endpoint bad host", onePeer + "      - {name: c, endpoint: 'a_b:1'}\n", []string{`"a_b" is neither an IP address nor a host name`}},
	{"endpoint bad ipv4", onePeer + "      - {name: c, endpoint: '1.2.3.400:1'}\n", []string{`"1.2.3.400" is neither`}},
	{"endpoint bare v6", onePeer + "      - {name: c, endpoint: '2001:db8::1:51900'}\n", []string{"write IPv6 addresses in brackets"}},
	{"endpoint v4 in brackets", onePeer + "      - {name: c, endpoint: '[192.0.2.1]:51900'}\n", []string{`"192.0.2.1" in brackets is not an IPv6 address`}},
	{"endpoint unclosed bracket", onePeer + "      - {name: c, endpoint: '[::1:51900'}\n", []string{`"[::1:51900" is not host:port`}},
	{"path bias negative", onePeer + "      - {name: c, endpoint: 'h:1', bias: -1ms}\n", []string{"peers[0].paths[1].bias: -1ms is negative"}},
	{"path unknown", onePeer + "      - {name: c, endpoint: 'h:1', weight: 1}\n", []string{"peers[0].paths[1].weight: unknown field"}},
	{"path not mapping", onePeer + "      - direct\n", []string{`peers[0].paths[1]: expected a mapping, got "direct"`}},
}

// invalidSeesUs break a peer's seesUs translations.
var invalidSeesUs = []invalidCase{
	{"seesUs lengths", onePeer + "    seesUs: [{real: 10.244.0.0/16, as: 10.71.0.0/24}]\n", []string{"peers[0].seesUs[0]: real 10.244.0.0/16 and as 10.71.0.0/24 differ in length"}},
	{"seesUs families", onePeer + "    seesUs: [{real: 10.244.0.0/16, as: 'fd00::/16'}]\n", []string{"peers[0].seesUs[0]: real 10.244.0.0/16 and as fd00::/16 are of different address families"}},
	{"seesUs real outside", onePeer + "    seesUs: [{real: 10.99.0.0/16, as: 10.71.0.0/16}]\n", []string{"peers[0].seesUs[0].real: 10.99.0.0/16 is not inside exports or addresses"}},
	{"seesUs real wider than export", onePeer + "    seesUs: [{real: 10.244.0.0/15, as: 10.70.0.0/15}]\n", []string{"peers[0].seesUs[0].real: 10.244.0.0/15 is not inside"}},
	{"seesUs overlap", onePeer + "    seesUs: [{real: 10.244.0.0/16, as: 10.71.0.0/16}, {real: 10.244.0.0/24, as: 10.71.0.0/24}]\n",
		[]string{"peers[0].seesUs[1].real: 10.244.0.0/24 overlaps peers[0].seesUs[0].real 10.244.0.0/16", "peers[0].seesUs[1].as: 10.71.0.0/24 overlaps peers[0].seesUs[0].as 10.71.0.0/16"}},
	{"seesUs missing", onePeer + "    seesUs: [{real: 10.244.0.0/16}]\n", []string{"peers[0].seesUs[0].as: required"}},
	{"seesUs host bits", onePeer + "    seesUs: [{real: 10.244.0.0/16, as: 10.71.0.1/16}]\n", []string{"peers[0].seesUs[0].as: 10.71.0.1/16 has host bits set"}},
	{"seesUs v4-mapped", onePeer + "    seesUs: [{real: 10.244.0.0/16, as: '::ffff:10.71.0.0/112'}]\n", []string{"peers[0].seesUs[0].as: ::ffff:10.71.0.0/112: IPv4-mapped IPv6 prefixes are not supported"}},
	{"seesUs unknown", onePeer + "    seesUs: [{real: 10.244.0.0/16, as: 10.71.0.0/16, to: x}]\n", []string{"peers[0].seesUs[0].to: unknown field"}},
}

// invalidBetweenPeers are peers valid alone that clash with each other.
var invalidBetweenPeers = []invalidCase{
	{"duplicate peer name", onePeer + "  - {name: provider-b, publicKey: $K2, prefixes: [10.73.0.0/16], paths: [{name: d, endpoint: 'h:1'}]}\n",
		[]string{`peers[1].name: duplicate peer name "provider-b" (also peers[0])`}},
	{"duplicate public key", onePeer + "  - {name: provider-c, publicKey: $K1, prefixes: [10.73.0.0/16], paths: [{name: d, endpoint: 'h:1'}]}\n",
		[]string{`peers[1].publicKey: public key also used by peer "provider-b" (peers[0])`}},
	{"prefix claimed twice", onePeer + "  - {name: provider-c, publicKey: $K2, prefixes: [10.73.0.0/16, 10.72.5.0/24], paths: [{name: d, endpoint: 'h:1'}]}\n",
		[]string{`peers[1].prefixes[1]: 10.72.5.0/24 of peer "provider-c" overlaps 10.72.0.0/16 of peer "provider-b" (peers[0].prefixes[0])`}},
}

// TestParseInvalid checks that each document yields exactly the listed
// problems (invalidCase), section by section.
func TestParseInvalid(t *testing.T) {
	for _, cases := range [][]invalidCase{
		invalidDocument, invalidIdentity, invalidScalars, invalidTunNetstack,
		invalidHealth, invalidPeers, invalidPaths, invalidSeesUs, invalidBetweenPeers,
	} {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				errs := parseErrors(t, tc.doc)
				checkErrors(t, errs, tc.want)
			})
		}
	}
}

func checkErrors(t *testing.T, errs Errors, want []string) {
	t.Helper()
	matched := make([]bool, len(errs))
	for _, w := range want {
		found := false
		for i, e := range errs {
			if strings.Contains(e.Error(), w) {
				found, matched[i] = true, true
			}
		}
		if !found {
			t.Errorf("no error contains %q", w)
		}
	}
	for i, e := range errs {
		if !matched[i] {
			t.Errorf("unexpected error %q", e.Error())
		}
	}
	if t.Failed() {
		t.Logf("all errors:\n%v", errs)
	}
}

// TestAllErrorsAtOnce checks that problems in unrelated places are all
// reported together, not just the first.
func TestAllErrorsAtOnce(t *testing.T) {
	errs := parseErrors(t, `name: Bad_Name
privateKey: $PRIV
privateKeyFile: /k
listenPort: abc
mode: tap
addresses: [100.80.0.1]
exports: [10.244.1.0/16]
mtu: 100
tun: {table: 255}
admin: nowhere
log: {level: loud}
health: {interval: 1ms}
colour: blue
peers:
  - name: b
    publicKey: $K1
    prefixes: [10.72.0.0/16]
    paths:
      - {name: direct, endpoint: foo}
  - name: b
    publicKey: $K1
    prefixes: [10.72.0.0/24]
    paths: []
`)
	checkErrors(t, errs, []string{
		`listenPort: "abc" is not a port`,
		`addresses[0]: "100.80.0.1" is not a prefix`,
		"colour: unknown field",
		`name: "Bad_Name" is not a DNS-1123 label`,
		"privateKey: privateKey and privateKeyFile are mutually exclusive",
		`mode: "tap" is not a mode`,
		"exports[0]: 10.244.1.0/16 has host bits set",
		"mtu: 100 is out of range",
		`admin.listen: "nowhere" is not host:port`,
		`log.level: "loud" is not a level`,
		"health.interval: 1ms is below the minimum",
		`peers[0].paths[0].endpoint: "foo" is not host:port`,
		`peers[1].name: duplicate peer name "b"`,
		`peers[1].publicKey: public key also used by peer "b"`,
		"peers[1].paths: required",
		`peers[1].prefixes[0]: 10.72.0.0/24 of peer "b" overlaps 10.72.0.0/16 of peer "b"`,
	})
	// In tun mode only: the mode is invalid here, so tun is not checked.
	for _, e := range errs {
		if strings.HasPrefix(e.Path, "tun.") {
			t.Errorf("tun checked although mode is invalid: %v", e)
		}
	}
}

func TestFieldErrorFormat(t *testing.T) {
	e := FieldError{Path: "peers[1].paths[0].endpoint", Msg: `"foo" is not host:port`}
	if got, want := e.Error(), `peers[1].paths[0].endpoint: "foo" is not host:port`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got := (FieldError{Msg: "whole"}).Error(); got != "whole" {
		t.Errorf("Error() without path = %q", got)
	}
	es := Errors{{Path: "a", Msg: "x"}, {Path: "b", Msg: "y"}}
	if got := es.Error(); got != "a: x\nb: y" {
		t.Errorf("Errors.Error() = %q", got)
	}
}

func TestTooManyErrors(t *testing.T) {
	doc := "name: a\nprivateKey: $PRIV\naddresses: [" + strings.Repeat("x, ", maxErrors+100) + "x]\n"
	errs := parseErrors(t, doc)
	if len(errs) != maxErrors+1 || !strings.Contains(errs[maxErrors].Msg, "too many problems") {
		t.Errorf("got %d errors ending in %v, want %d and a final 'too many problems'", len(errs), errs[len(errs)-1], maxErrors+1)
	}
}

// TestAdminForms checks both spellings of admin: the scalar of earlier
// versions is admin.listen, the mapping sets each server, and the
// default keeps everything on loopback.
func TestAdminForms(t *testing.T) {
	head := "name: a\nprivateKey: " + vectorPrivate + "\naddresses: [100.80.0.1/32]\n"
	for _, tc := range []struct {
		name, doc string
		want      Admin
	}{
		{"default", "", Admin{Listen: "127.0.0.1:9586"}},
		{"scalar", "admin: 127.0.0.1:9000\n", Admin{Listen: "127.0.0.1:9000"}},
		{"scalar localhost", "admin: localhost:9000\n", Admin{Listen: "localhost:9000"}},
		{"scalar IPv6 loopback", "admin: '[::1]:9000'\n", Admin{Listen: "[::1]:9000"}},
		{"metrics only outside", "admin: {metricsListen: 0.0.0.0:9587}\n", Admin{Listen: "127.0.0.1:9586", MetricsListen: "0.0.0.0:9587"}},
		{"token outside", "admin: {listen: 0.0.0.0:9586, tokenFile: /run/token}\n", Admin{Listen: "0.0.0.0:9586", TokenFile: "/run/token"}},
		{"metrics same port other loopback", "admin: {listen: 127.0.0.1:9586, metricsListen: 127.0.0.2:9586}\n", Admin{Listen: "127.0.0.1:9586", MetricsListen: "127.0.0.2:9586"}},
		{"metrics both port 0", "admin: {listen: 127.0.0.1:0, metricsListen: 0.0.0.0:0}\n", Admin{Listen: "127.0.0.1:0", MetricsListen: "0.0.0.0:0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(head + tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			if c.Admin != tc.want {
				t.Errorf("Admin = %+v, want %+v", c.Admin, tc.want)
			}
		})
	}
}
