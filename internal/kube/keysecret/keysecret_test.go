package keysecret

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/keys"
)

type fakeSecrets struct {
	objs      map[string]*corev1.Secret
	createErr error
	onCreate  func() // runs before a create (a racing replica)
	creates   int
}

func (f *fakeSecrets) Get(_ context.Context, name string, _ metav1.GetOptions) (*corev1.Secret, error) {
	s, ok := f.objs[name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
	}
	return s.DeepCopy(), nil
}

func (f *fakeSecrets) Create(_ context.Context, s *corev1.Secret, _ metav1.CreateOptions) (*corev1.Secret, error) {
	if f.onCreate != nil {
		f.onCreate()
	}
	if f.createErr != nil {
		return nil, f.createErr
	}
	if _, ok := f.objs[s.Name]; ok {
		return nil, apierrors.NewAlreadyExists(schema.GroupResource{Resource: "secrets"}, s.Name)
	}
	f.creates++
	f.objs[s.Name] = s.DeepCopy()
	return s, nil
}

var ref = config.SecretRef{Name: "relay-key", Key: config.DefaultSecretKey}

func TestCreatesThenReuses(t *testing.T) {
	f := &fakeSecrets{objs: map[string]*corev1.Secret{}}
	k1, created, err := Load(context.Background(), f, ref, "provider-a")
	if err != nil || !created || k1.IsZero() {
		t.Fatalf("first Load = %v, created %v, err %v", k1.IsZero(), created, err)
	}
	s := f.objs["relay-key"]
	if s.Labels[ManagedByLabel] != "liqo-relay" || s.Labels["relay.liqo-relay.io/relay"] != "provider-a" {
		t.Errorf("labels %v", s.Labels)
	}
	k2, created, err := Load(context.Background(), f, ref, "provider-a")
	if err != nil || created || k2 != k1 {
		t.Errorf("second Load: same key %v, created %v, err %v", k2 == k1, created, err)
	}
	if f.creates != 1 {
		t.Errorf("%d creates, want 1", f.creates)
	}
	if b := k1.Reveal(); b[len(b)-1] != '=' {
		t.Errorf("stored key is not wg's base64: %q", b)
	}
}

func TestRaceUsesTheWinner(t *testing.T) {
	f := &fakeSecrets{objs: map[string]*corev1.Secret{}}
	winner, err := keys.ParsePrivate("yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=")
	if err != nil {
		t.Fatal(err)
	}
	f.onCreate = func() {
		f.onCreate = nil
		f.objs["relay-key"] = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "relay-key"},
			Data: map[string][]byte{"privateKey": []byte(winner.Reveal() + "\n")}}
	}
	k, created, err := Load(context.Background(), f, ref, "provider-a")
	if err != nil || created || k != winner {
		t.Errorf("Load after losing the race: winner's key %v, created %v, err %v", k == winner, created, err)
	}
}

func TestErrorsNameTheSecret(t *testing.T) {
	f := &fakeSecrets{objs: map[string]*corev1.Secret{
		"relay-key": {ObjectMeta: metav1.ObjectMeta{Name: "relay-key"}, Data: map[string][]byte{"other": []byte("x")}},
	}}
	if _, _, err := Load(context.Background(), f, ref, "a"); err == nil || err.Error() != `privateKeySecret: Secret relay-key has no key "privateKey"` {
		t.Errorf("missing key: %v", err)
	}
	f.objs["relay-key"].Data["privateKey"] = []byte("not a key")
	if _, _, err := Load(context.Background(), f, ref, "a"); err == nil {
		t.Error("a bad key was accepted")
	}
	f = &fakeSecrets{objs: map[string]*corev1.Secret{}, createErr: apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "relay-key", errors.New("RBAC"))}
	if _, _, err := Load(context.Background(), f, ref, "a"); err == nil || !apierrors.IsForbidden(errors.Unwrap(err)) {
		t.Errorf("forbidden create: %v", err)
	}
}
