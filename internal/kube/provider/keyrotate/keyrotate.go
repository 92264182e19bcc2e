// Package keyrotate carries out in-place key rotation in Kubernetes mode:
// a new value of the relay.liqo-relay.io/rotate-key annotation on the
// Relay stages a new private key (kept in the key Secret next to the
// current one) in the running relay, and once the relay has switched to
// it the Secret keeps only the new key. The rotation itself, between the
// relays, is the agent's (docs/protocol.md, "Key rotation").
package keyrotate

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/keys"
	"github.com/liqo-relay/relay/internal/kube/keysecret"
)

// Agent is what the rotator needs of the running relay.
type Agent interface {
	// PublicKey is the relay's running public key; it changes when the
	// relay switches to its staged next key.
	PublicKey() keys.Public
}

// Options configure a Rotator.
type Options struct {
	Secrets keysecret.Patcher
	Ref     config.SecretRef
	Agent   Agent
	// Stage applies the relay's configuration with the keys Keys returns
	// now; the rotator calls it after staging a next key.
	Stage  func(ctx context.Context) error
	Logger *slog.Logger
}

// Rotator follows one relay's rotations. Its methods are safe for
// concurrent use.
type Rotator struct {
	o   Options
	log *slog.Logger

	mu         sync.Mutex
	priv, next keys.Private
	acted      string // the annotation value acted on
	known      bool   // acted was initialised from the Relay
}

// New returns a rotator for a relay started with priv and, when a rotation
// was staged before it started, next (both read from the Secret).
func New(o Options, priv, next keys.Private) *Rotator {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Rotator{o: o, log: o.Logger.With("component", "keyrotate"), priv: priv, next: next}
}

// Keys returns the private key the relay runs with and its staged next
// key (zero when none). A configuration applied to the relay must carry
// them, or a reload would undo a rotation.
func (r *Rotator) Keys() (priv, next keys.Private) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.priv, r.next
}

// Status returns what the Relay's status says of the keys: publicKey,
// nextPublicKey ("" when none is staged) and keyRotation.
func (r *Rotator) Status() (pub, next, acted string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pub = r.priv.PublicKey().String()
	if !r.next.IsZero() {
		next = r.next.PublicKey().String()
	}
	return pub, next, r.acted
}

// Sync acts on relay, the relay's Relay object: it records a switch the
// relay has made (the Secret then keeps only the new key), and starts a
// rotation when the rotate-key annotation has a value it has not acted on
// and none is running. A value that arrives during a rotation is acted on
// after it. Errors are worth a retry (the next Sync).
func (r *Rotator) Sync(ctx context.Context, relay *v1alpha1.Relay) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	want := relay.Annotations[v1alpha1.RotateKeyAnnotation]
	if !r.known {
		r.known = true
		r.acted = relay.Status.KeyRotation
		if !r.next.IsZero() {
			// Resumed from the Secret: this rotation is the one the
			// annotation asked for, even if its status was not written.
			r.acted = want
		}
	}
	if !r.next.IsZero() && r.o.Agent.PublicKey() == r.next.PublicKey() {
		if err := keysecret.Promote(ctx, r.o.Secrets, r.o.Ref, r.next); err != nil {
			return fmt.Errorf("key rotation: keeping the new key: %w", err)
		}
		r.priv, r.next = r.next, keys.Private{}
		r.log.Info("key rotation finished: the Secret holds the new key alone", "publicKey", r.priv.PublicKey().String())
	}
	if want == "" || want == r.acted || !r.next.IsZero() {
		return nil
	}
	next, err := keysecret.StageNext(ctx, r.o.Secrets, r.o.Ref)
	if err != nil {
		return fmt.Errorf("key rotation: staging a new key: %w", err)
	}
	r.next = next
	r.mu.Unlock()
	err = r.o.Stage(ctx)
	r.mu.Lock()
	if err != nil {
		// The Secret keeps the staged key: the next Sync stages it again.
		r.next = keys.Private{}
		return fmt.Errorf("key rotation: staging the new key in the relay: %w", err)
	}
	r.acted = want
	r.log.Info("key rotation staged", "annotation", want, "nextPublicKey", next.PublicKey().String())
	return nil
}
