package keysecret

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/keys"
)

// A key rotation keeps the next private key in the same Secret, under the
// data key NextKey(ref), from the moment it is staged until the relay has
// switched to it; then it replaces the current key and NextKey goes
// (docs/kubernetes.md, "Keys"). A relay that restarts meanwhile finds the
// rotation in the Secret and resumes it.

// Patcher is what a rotation needs of the Secrets: Secrets and patches,
// which change the Secret without a read-modify-write race.
type Patcher interface {
	Secrets
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*corev1.Secret, error)
}

// NextKey is the data key of the staged next private key.
func NextKey(ref config.SecretRef) string { return ref.Key + ".next" }

// LoadNext returns the staged next private key of Secret ref, if any.
func LoadNext(ctx context.Context, secrets Secrets, ref config.SecretRef) (keys.Private, bool, error) {
	s, err := secrets.Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return keys.Private{}, false, fmt.Errorf("privateKeySecret: reading Secret %s: %w", ref.Name, err)
	}
	if _, ok := s.Data[NextKey(ref)]; !ok {
		return keys.Private{}, false, nil
	}
	k, err := fromSecret(s, config.SecretRef{Name: ref.Name, Key: NextKey(ref)})
	return k, err == nil, err
}

// StageNext returns the next private key of Secret ref, generating it and
// adding it to the Secret when none is staged yet.
func StageNext(ctx context.Context, secrets Patcher, ref config.SecretRef) (keys.Private, error) {
	if k, ok, err := LoadNext(ctx, secrets, ref); err != nil || ok {
		return k, err
	}
	k, err := generate()
	if err != nil {
		return k, err
	}
	if err := patchData(ctx, secrets, ref, map[string]*string{NextKey(ref): ptr(k.Reveal())}); err != nil {
		return keys.Private{}, err
	}
	return k, nil
}

// Promote makes k, the next key the relay switched to, the Secret's key,
// and removes the staged one, in one patch.
func Promote(ctx context.Context, secrets Patcher, ref config.SecretRef, k keys.Private) error {
	return patchData(ctx, secrets, ref, map[string]*string{ref.Key: ptr(k.Reveal()), NextKey(ref): nil})
}

func ptr(s string) *string { return &s }

// patchData merge-patches the Secret's stringData-like data: a nil value
// removes the key. The values are sent as data (base64 by encoding/json).
func patchData(ctx context.Context, secrets Patcher, ref config.SecretRef, data map[string]*string) error {
	enc := map[string]any{}
	for k, v := range data {
		if v == nil {
			enc[k] = nil
			continue
		}
		enc[k] = []byte(*v)
	}
	body, err := json.Marshal(map[string]any{"data": enc})
	if err != nil {
		return fmt.Errorf("privateKeySecret: encoding a patch: %w", err)
	}
	if _, err := secrets.Patch(ctx, ref.Name, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("privateKeySecret: Secret %s is gone: %w", ref.Name, err)
		}
		return fmt.Errorf("privateKeySecret: updating Secret %s: %w", ref.Name, err)
	}
	return nil
}

// generate returns a new private key, clamped like wg genkey.
func generate() (keys.Private, error) {
	k, err := keys.NewPrivate()
	if err != nil {
		return keys.Private{}, fmt.Errorf("generating a private key: %w", err)
	}
	return k, nil
}
