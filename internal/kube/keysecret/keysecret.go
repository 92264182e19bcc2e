// Package keysecret keeps a relay's WireGuard private key in a Kubernetes
// Secret: the relay reads it when the Secret exists, and otherwise generates
// a key and creates the Secret, so that the private key never leaves the
// cluster and no person handles it.
package keysecret

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/keys"
)

// Secrets is what the package needs of the API server.
type Secrets interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Secret, error)
	Create(ctx context.Context, s *corev1.Secret, opts metav1.CreateOptions) (*corev1.Secret, error)
}

// ManagedByLabel marks the Secrets the relay created.
const ManagedByLabel = "app.kubernetes.io/managed-by"

// RelayLabel names the relay whose key a Secret holds.
const RelayLabel = "relay.liqo-relay.io/relay"

// Load returns the private key held in Secret ref, creating the Secret with
// a new key when it does not exist. created reports that it did. Two relays
// racing to create it both end with the one that won.
func Load(ctx context.Context, secrets Secrets, ref config.SecretRef, relay string) (k keys.Private, created bool, err error) {
	s, err := secrets.Get(ctx, ref.Name, metav1.GetOptions{})
	switch {
	case err == nil:
		k, err := fromSecret(s, ref)
		return k, false, err
	case !apierrors.IsNotFound(err):
		return k, false, fmt.Errorf("privateKeySecret: reading Secret %s: %w", ref.Name, err)
	}
	if k, err = generate(); err != nil {
		return k, false, err
	}
	s = &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: ref.Name,
			Labels: map[string]string{
				ManagedByLabel: "liqo-relay",
				RelayLabel:     relay,
			},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{ref.Key: []byte(k.Reveal())},
	}
	switch _, err := secrets.Create(ctx, s, metav1.CreateOptions{}); {
	case err == nil:
		return k, true, nil
	case apierrors.IsAlreadyExists(err):
		// Another replica created it first: use that one.
		s, err := secrets.Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return keys.Private{}, false, fmt.Errorf("privateKeySecret: reading Secret %s: %w", ref.Name, err)
		}
		k, err := fromSecret(s, ref)
		return k, false, err
	default:
		return keys.Private{}, false, fmt.Errorf("privateKeySecret: creating Secret %s: %w", ref.Name, err)
	}
}

func fromSecret(s *corev1.Secret, ref config.SecretRef) (keys.Private, error) {
	data, ok := s.Data[ref.Key]
	if !ok {
		return keys.Private{}, fmt.Errorf("privateKeySecret: Secret %s has no key %q", ref.Name, ref.Key)
	}
	k, err := keys.ParsePrivate(strings.TrimSpace(string(data)))
	if err != nil {
		return keys.Private{}, fmt.Errorf("privateKeySecret: Secret %s key %q: %w", ref.Name, ref.Key, err)
	}
	return k, nil
}
