package peersync

import (
	"crypto/rand"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/keys"
)

func key(t testing.TB) keys.Private {
	t.Helper()
	var k keys.Private
	if _, err := rand.Read(k[:]); err != nil {
		t.Fatal(err)
	}
	return k
}

// baseConfig is a file configuration with one file peer (provider-z,
// 10.90.0.0/16).
func baseConfig(t testing.TB) *config.Config {
	t.Helper()
	doc := `name: provider-a
privateKey: ` + key(t).Reveal() + `
addresses: [100.80.0.1/32]
exports: [10.244.0.0/16]
peers:
  - name: provider-z
    publicKey: ` + key(t).PublicKey().String() + `
    prefixes: [10.90.0.0/16]
    paths: [{name: direct, endpoint: 192.0.2.90:51900}]
`
	c, err := config.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func relayPeer(name string, gen int64, k keys.Private, prefixes ...string) *v1alpha1.RelayPeer {
	rp := &v1alpha1.RelayPeer{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Generation: gen, UID: types.UID("uid-" + name_(name)),
			Labels: map[string]string{v1alpha1.RelayLabel: "provider-a"}},
		Spec: v1alpha1.RelayPeerSpec{
			PublicKey: k.PublicKey().String(),
			Paths: []v1alpha1.Path{
				{Name: "direct", Endpoint: "192.0.2.10:51900"},
				{Name: "consumer", Endpoint: "198.51.100.1:51900", Bias: "5ms"},
			},
		},
	}
	for _, p := range prefixes {
		rp.Spec.Prefixes = append(rp.Spec.Prefixes, v1alpha1.Prefix(p))
	}
	return rp
}

func name_(s string) string { return strings.ReplaceAll(s, "-", "") }

func peerNames(c *config.Config) []string {
	var out []string
	for _, p := range c.Peers {
		out = append(out, p.Name)
	}
	return out
}

func TestResolveAcceptsValidPeers(t *testing.T) {
	base := baseConfig(t)
	kb, kc := key(t), key(t)
	res := resolve(base, []*v1alpha1.RelayPeer{
		relayPeer("provider-c", 1, kc, "10.73.0.0/16"),
		relayPeer("provider-b", 3, kb, "10.72.0.0/16"),
	}, nil, nil)
	if got := strings.Join(peerNames(res.cfg), ","); got != "provider-z,provider-b,provider-c" {
		t.Errorf("peers %s, want the file peer then the RelayPeers in name order", got)
	}
	b, _ := res.cfg.Peer("provider-b")
	if b.PublicKey != kb.PublicKey() || len(b.Paths) != 2 || b.Paths[1].Bias.String() != "5ms" ||
		b.PersistentKeepalive != config.DefaultPersistentKeepalive {
		t.Errorf("provider-b decoded as %+v", b)
	}
	for _, n := range []string{"provider-b", "provider-c"} {
		if v := res.verdicts[n]; !v.ready || v.reason != v1alpha1.ReasonApplied {
			t.Errorf("%s verdict %+v, want ready", n, v)
		}
	}
	if res.verdicts["provider-b"].generation != 3 {
		t.Errorf("verdict generation %d, want 3", res.verdicts["provider-b"].generation)
	}
}

func TestResolveRejectsWithFieldPath(t *testing.T) {
	base := baseConfig(t)
	for _, tc := range []struct {
		name    string
		rp      *v1alpha1.RelayPeer
		allowed []netip.Prefix
		reason  string
		want    string
	}{
		{"endpoint", func() *v1alpha1.RelayPeer {
			rp := relayPeer("provider-b", 1, key(t), "10.72.0.0/16")
			rp.Spec.Paths[1].Endpoint = "no-port"
			return rp
		}(), nil, v1alpha1.ReasonInvalid, "spec.paths[1].endpoint"},
		{"overlap with file peer", relayPeer("provider-b", 1, key(t), "10.90.1.0/24"), nil, v1alpha1.ReasonInvalid,
			`spec.prefixes[0]: 10.90.1.0/24 of peer "provider-b" overlaps 10.90.0.0/16 of peer "provider-z"`},
		{"name clash with file peer", relayPeer("provider-z", 1, key(t), "10.72.0.0/16"), nil, v1alpha1.ReasonNameClash,
			`metadata.name: duplicate peer name "provider-z"`},
		{"outside allowed", relayPeer("provider-b", 1, key(t), "10.96.0.1/32"),
			[]netip.Prefix{netip.MustParsePrefix("10.72.0.0/16")}, v1alpha1.ReasonNotAllowed,
			"spec.prefixes[0]: 10.96.0.1/32 is outside allowedPeerPrefixes"},
		{"own exports", relayPeer("provider-b", 1, key(t), "10.244.1.0/24"), nil, v1alpha1.ReasonInvalid,
			"spec.prefixes[0]: 10.244.1.0/24 overlaps exports[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := resolve(base, []*v1alpha1.RelayPeer{tc.rp}, nil, tc.allowed)
			v := res.verdicts[tc.rp.Name]
			if v.ready || v.reason != tc.reason || !strings.Contains(v.message, tc.want) {
				t.Errorf("verdict %+v, want not ready, reason %s, message containing %q", v, tc.reason, tc.want)
			}
			if got := strings.Join(peerNames(res.cfg), ","); got != "provider-z" {
				t.Errorf("peers %s, want only the file's", got)
			}
		})
	}
}

func TestResolveKeepsLastAcceptedSpec(t *testing.T) {
	base := baseConfig(t)
	kb, kc := key(t), key(t)
	good := relayPeer("provider-b", 1, kb, "10.72.0.0/16")
	other := relayPeer("provider-c", 1, kc, "10.73.0.0/16")
	first := resolve(base, []*v1alpha1.RelayPeer{good, other}, nil, nil)
	bad := relayPeer("provider-b", 2, kb, "10.72.0.0/16")
	bad.Spec.Paths[0].Endpoint = "192.0.2.10"
	second := resolve(base, []*v1alpha1.RelayPeer{bad, other}, first.accepted, nil)
	v := second.verdicts["provider-b"]
	if v.ready || v.generation != 2 || !strings.Contains(v.message, "keeps running generation 1") {
		t.Errorf("verdict %+v, want generation 2 rejected and generation 1 kept", v)
	}
	if !sameConfig(first.cfg, second.cfg) {
		t.Errorf("running configuration changed after a rejected edit:\n%v\n%v", peerNames(first.cfg), peerNames(second.cfg))
	}
}

func TestResolvePrefixMoveInAnyOrder(t *testing.T) {
	base := baseConfig(t)
	kb, kc := key(t), key(t)
	// provider-b had 10.72.0.0/16 and 10.74.0.0/16; 10.74 moves to
	// provider-c. Whichever update the cache holds first, the final state
	// is accepted in one pass: b's shrink, then c's growth.
	before := resolve(base, []*v1alpha1.RelayPeer{
		relayPeer("provider-b", 1, kb, "10.72.0.0/16", "10.74.0.0/16"),
		relayPeer("provider-c", 1, kc, "10.73.0.0/16"),
	}, nil, nil)
	// Only c updated (the first event seen): c's new spec clashes with b's.
	mid := resolve(base, []*v1alpha1.RelayPeer{
		relayPeer("provider-b", 1, kb, "10.72.0.0/16", "10.74.0.0/16"),
		relayPeer("provider-c", 2, kc, "10.73.0.0/16", "10.74.0.0/16"),
	}, before.accepted, nil)
	if mid.verdicts["provider-c"].ready {
		t.Fatal("c's spec accepted while b still routes 10.74.0.0/16")
	}
	after := resolve(base, []*v1alpha1.RelayPeer{
		relayPeer("provider-b", 2, kb, "10.72.0.0/16"),
		relayPeer("provider-c", 2, kc, "10.73.0.0/16", "10.74.0.0/16"),
	}, mid.accepted, nil)
	for _, n := range []string{"provider-b", "provider-c"} {
		if v := after.verdicts[n]; !v.ready || v.generation != 2 {
			t.Errorf("%s verdict %+v, want generation 2 applied", n, v)
		}
	}
	c, _ := after.cfg.Peer("provider-c")
	if len(c.Prefixes) != 2 {
		t.Errorf("provider-c prefixes %v, want 10.73 and 10.74", c.Prefixes)
	}
	// The reverse: c is first in name order but b must shrink first; a
	// single pass in name order would reject the first and accept the
	// second.
	rev := resolve(base, []*v1alpha1.RelayPeer{
		relayPeer("provider-a2", 2, kc, "10.73.0.0/16", "10.74.0.0/16"),
		relayPeer("provider-b", 2, kb, "10.72.0.0/16"),
	}, map[string]accepted{
		"provider-b":  before.accepted["provider-b"],
		"provider-a2": {peer: func() config.Peer { p := before.accepted["provider-c"].peer; p.Name = "provider-a2"; return p }(), generation: 1},
	}, nil)
	for _, n := range []string{"provider-a2", "provider-b"} {
		if v := rev.verdicts[n]; !v.ready {
			t.Errorf("%s verdict %+v, want applied", n, v)
		}
	}
}

func TestRejectedEditKeepsWhatItRuns(t *testing.T) {
	base := baseConfig(t)
	kb, kc := key(t), key(t)
	first := resolve(base, []*v1alpha1.RelayPeer{relayPeer("provider-b", 1, kb, "10.72.0.0/16")}, nil, nil)
	// b's next generation is invalid, and c claims b's running prefix: c
	// must not take it, whatever the order.
	bad := relayPeer("provider-b", 2, kb, "10.72.0.0/16")
	bad.Spec.Paths[0].Endpoint = "no-port"
	second := resolve(base, []*v1alpha1.RelayPeer{bad, relayPeer("provider-a1", 1, kc, "10.72.0.0/16")}, first.accepted, nil)
	if got := strings.Join(peerNames(second.cfg), ","); got != "provider-z,provider-b" {
		t.Errorf("peers %s, want provider-b still running", got)
	}
	if v := second.verdicts["provider-a1"]; v.ready || !strings.Contains(v.message, "overlaps") {
		t.Errorf("provider-a1 verdict %+v, want refused for the overlap with the running provider-b", v)
	}
	if v := second.verdicts["provider-b"]; v.ready || !strings.Contains(v.message, "keeps running generation 1") {
		t.Errorf("provider-b verdict %+v", v)
	}
}

func TestLongRejectionsAreSummarized(t *testing.T) {
	base := baseConfig(t)
	var prefixes []string
	for i := range 300 {
		prefixes = append(prefixes, fmt.Sprintf("192.168.%d.%d/32", i/256, i%256))
	}
	rp := relayPeer("provider-b", 1, key(t), prefixes...)
	res := resolve(base, []*v1alpha1.RelayPeer{rp}, nil, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")})
	v := res.verdicts["provider-b"]
	if v.ready || len(v.message) > 4096 || !strings.Contains(v.message, "more problems") {
		t.Errorf("verdict of %d bytes: %.300s", len(v.message), v.message)
	}
}
