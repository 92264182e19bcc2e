package operator

import (
	"context"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestRemoveReleasedLease: on the way out the Lease goes if no replica
// holds it, and stays while one does.
func TestRemoveReleasedLease(t *testing.T) {
	ctx := context.Background()
	holder := func(h string) *coordinationv1.Lease {
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "lease"}}
		if h != "" {
			l.Spec.HolderIdentity = &h
		}
		return l
	}
	for _, tc := range []struct {
		name  string
		lease *coordinationv1.Lease
		kept  bool
	}{
		{"released", holder(""), false},
		{"held by a standby", holder("standby-1"), true},
		{"already gone", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset()
			if tc.lease != nil {
				cs = fake.NewClientset(tc.lease)
			}
			if err := removeReleasedLease(ctx, cs, "ns", "lease"); err != nil {
				t.Fatal(err)
			}
			_, err := cs.CoordinationV1().Leases("ns").Get(ctx, "lease", metav1.GetOptions{})
			if kept := err == nil; kept != tc.kept {
				t.Fatalf("Lease kept %v, want %v (%v)", kept, tc.kept, err)
			}
		})
	}
}
