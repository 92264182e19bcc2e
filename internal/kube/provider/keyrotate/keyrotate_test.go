package keyrotate

import (
	"context"
	"crypto/rand"
	"errors"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/keys"
)

var ref = config.SecretRef{Name: "relay-key", Key: "privateKey"}

type fakeAgent struct {
	mu  sync.Mutex
	pub keys.Public
}

func (a *fakeAgent) PublicKey() keys.Public {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.pub
}

func (a *fakeAgent) set(k keys.Public) {
	a.mu.Lock()
	a.pub = k
	a.mu.Unlock()
}

func newKey(t *testing.T) keys.Private {
	t.Helper()
	var k keys.Private
	if _, err := rand.Read(k[:]); err != nil {
		t.Fatal(err)
	}
	k[0] &= 248
	k[31] = (k[31] & 127) | 64
	return k
}

// rig is a rotator over a fake clientset holding the key Secret.
type rig struct {
	t      *testing.T
	cs     *fake.Clientset
	agent  *fakeAgent
	r      *Rotator
	staged []keys.Private // the next key of every Stage call
	fail   error          // what Stage returns
}

func newRig(t *testing.T, priv, next keys.Private) *rig {
	data := map[string][]byte{ref.Key: []byte(priv.Reveal())}
	if !next.IsZero() {
		data[ref.Key+".next"] = []byte(next.Reveal())
	}
	g := &rig{t: t, agent: &fakeAgent{pub: priv.PublicKey()}}
	g.cs = fake.NewClientset(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: ref.Name, Namespace: "ns"}, Data: data})
	g.r = New(Options{Secrets: g.cs.CoreV1().Secrets("ns"), Ref: ref, Agent: g.agent, Stage: func(context.Context) error {
		_, n := g.r.Keys()
		g.staged = append(g.staged, n)
		return g.fail
	}}, priv, next)
	return g
}

func relay(annotation, acted string) *v1alpha1.Relay {
	r := &v1alpha1.Relay{ObjectMeta: metav1.ObjectMeta{Name: "provider-a", Namespace: "ns"}}
	if annotation != "" {
		r.Annotations = map[string]string{v1alpha1.RotateKeyAnnotation: annotation}
	}
	r.Status.KeyRotation = acted
	return r
}

// secret returns the Secret's data as key name -> private key.
func (g *rig) secret() map[string]keys.Private {
	g.t.Helper()
	s, err := g.cs.CoreV1().Secrets("ns").Get(context.Background(), ref.Name, metav1.GetOptions{})
	if err != nil {
		g.t.Fatal(err)
	}
	out := map[string]keys.Private{}
	for k, v := range s.Data {
		pk, err := keys.ParsePrivate(string(v))
		if err != nil {
			g.t.Fatalf("Secret data %q: %v", k, err)
		}
		out[k] = pk
	}
	return out
}

func (g *rig) sync(rel *v1alpha1.Relay) {
	g.t.Helper()
	if err := g.r.Sync(context.Background(), rel); err != nil {
		g.t.Fatalf("Sync: %v", err)
	}
}

func (g *rig) wantStatus(pub keys.Public, next keys.Public, acted string) {
	g.t.Helper()
	wantNext := ""
	if !next.IsZero() {
		wantNext = next.String()
	}
	p, n, a := g.r.Status()
	if p != pub.String() || n != wantNext || a != acted {
		g.t.Errorf("Status = (%s, %q, %q), want (%s, %q, %q)", p, n, a, pub, wantNext, acted)
	}
}

// TestAnnotationRotatesTheKey walks one rotation: a new annotation value
// stages a next key in the Secret and the relay; repeating it does nothing;
// a value that arrives meanwhile waits; once the relay switched, the
// Secret holds the new key alone, and the waiting value starts the next
// rotation.
func TestAnnotationRotatesTheKey(t *testing.T) {
	k1 := newKey(t)
	g := newRig(t, k1, keys.Private{})

	g.sync(relay("", ""))
	g.wantStatus(k1.PublicKey(), keys.Public{}, "")
	if len(g.staged) != 0 {
		t.Fatalf("staged without an annotation: %d", len(g.staged))
	}

	g.sync(relay("r1", ""))
	if len(g.staged) != 1 {
		t.Fatalf("Stage called %d times, want 1", len(g.staged))
	}
	k2 := g.staged[0]
	if k2.IsZero() || k2 == k1 {
		t.Fatal("no new key staged")
	}
	sec := g.secret()
	if sec[ref.Key] != k1 || sec[ref.Key+".next"] != k2 || len(sec) != 2 {
		t.Errorf("Secret after staging: current is k1 %v, next is the staged key %v, %d keys", sec[ref.Key] == k1, sec[ref.Key+".next"] == k2, len(sec))
	}
	if p, n := g.r.Keys(); p != k1 || n != k2 {
		t.Error("Keys does not give the running key and the staged one")
	}
	g.wantStatus(k1.PublicKey(), k2.PublicKey(), "r1")

	g.sync(relay("r1", "r1"))
	g.sync(relay("r2", "r1")) // arrives during the rotation: waits
	if len(g.staged) != 1 {
		t.Fatalf("Stage called %d times during one rotation, want 1", len(g.staged))
	}

	g.agent.set(k2.PublicKey()) // the relay switched
	g.sync(relay("r1", "r1"))
	sec = g.secret()
	if sec[ref.Key] != k2 || len(sec) != 1 {
		t.Errorf("Secret after the switch: holds the new key %v, %d keys (want 1)", sec[ref.Key] == k2, len(sec))
	}
	if p, n := g.r.Keys(); p != k2 || !n.IsZero() {
		t.Error("Keys after the switch: want the new key and nothing staged")
	}
	g.wantStatus(k2.PublicKey(), keys.Public{}, "r1")

	g.sync(relay("r2", "r1"))
	if len(g.staged) != 2 || g.staged[1] == k2 {
		t.Fatalf("the next annotation value did not start a new rotation")
	}
	g.wantStatus(k2.PublicKey(), g.staged[1].PublicKey(), "r2")
}

// TestRotationResumesAfterRestart: a relay that restarts with a next key in
// its Secret (staged before it went down, status not written) resumes that
// rotation and does not stage another for the same annotation value.
func TestRotationResumesAfterRestart(t *testing.T) {
	k1, k2 := newKey(t), newKey(t)
	g := newRig(t, k1, k2)
	g.sync(relay("r1", ""))
	if len(g.staged) != 0 {
		t.Fatalf("staged again after a restart: %d", len(g.staged))
	}
	g.wantStatus(k1.PublicKey(), k2.PublicKey(), "r1")
	g.agent.set(k2.PublicKey())
	g.sync(relay("r1", ""))
	if sec := g.secret(); sec[ref.Key] != k2 || len(sec) != 1 {
		t.Error("the resumed rotation did not finish in the Secret")
	}
}

// TestStagingFailureIsRetriedWithTheSameKey: when the relay refuses the
// staged configuration, the rotation is not recorded as done; the next Sync
// stages the same key (kept in the Secret) again.
func TestStagingFailureIsRetriedWithTheSameKey(t *testing.T) {
	k1 := newKey(t)
	g := newRig(t, k1, keys.Private{})
	g.fail = errors.New("refused")
	if err := g.r.Sync(context.Background(), relay("r1", "")); err == nil {
		t.Fatal("Sync hid the staging failure")
	}
	if _, n := g.r.Keys(); !n.IsZero() {
		t.Error("a refused next key counts as staged")
	}
	g.wantStatus(k1.PublicKey(), keys.Public{}, "")
	g.fail = nil
	g.sync(relay("r1", ""))
	if len(g.staged) != 2 || g.staged[0] != g.staged[1] {
		t.Error("the retry staged another key")
	}
	g.wantStatus(k1.PublicKey(), g.staged[1].PublicKey(), "r1")
}
