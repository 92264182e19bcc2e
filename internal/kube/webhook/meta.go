package webhook

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The labels and owner of what the controller writes: its managed-by
// label, the anchor as owner and no gateway owner (controller.go); drift
// is repaired, and an object of its names it did not write is left alone.

func sameMeta(have, want metav1.ObjectMeta) bool {
	for k, v := range want.Labels {
		if have.Labels[k] != v {
			return false
		}
	}
	for k, v := range want.Annotations {
		if have.Annotations[k] != v {
			return false
		}
	}
	return hasOwner(have.OwnerReferences, want.OwnerReferences[0]) && !slices.ContainsFunc(have.OwnerReferences, gatewayOwned)
}

func hasOwner(refs []metav1.OwnerReference, o metav1.OwnerReference) bool {
	for _, r := range refs {
		if r.UID == o.UID {
			return true
		}
	}
	return false
}

// gatewayOwned reports whether r names a Liqo gateway object, the owner
// earlier builds gave these objects: with it as a second owner, the
// garbage collector would keep them after the anchor goes.
func gatewayOwned(r metav1.OwnerReference) bool {
	for _, k := range gatewayKinds {
		if r.Kind == k.kind && r.APIVersion == k.gvr.GroupVersion().String() {
			return true
		}
	}
	return false
}

func mergeMeta(have *metav1.ObjectMeta, want metav1.ObjectMeta) {
	if have.Labels == nil {
		have.Labels = map[string]string{}
	}
	for k, v := range want.Labels {
		have.Labels[k] = v
	}
	if len(want.Annotations) > 0 && have.Annotations == nil {
		have.Annotations = map[string]string{}
	}
	for k, v := range want.Annotations {
		have.Annotations[k] = v
	}
	have.OwnerReferences = slices.DeleteFunc(have.OwnerReferences, gatewayOwned)
	if !hasOwner(have.OwnerReferences, want.OwnerReferences[0]) {
		have.OwnerReferences = append(have.OwnerReferences, want.OwnerReferences[0])
	}
}

// notOurs is the error for an object of the name the controller writes that
// it did not write (no managed-by label of its own): it is left alone, so
// that the chart's uninstall never deletes someone else's object.
func notOurs(kind string, have metav1.ObjectMeta) error {
	if have.Labels["app.kubernetes.io/managed-by"] == ManagedBy {
		return nil
	}
	return fmt.Errorf("%s %s/%s exists and was not made by %s (no app.kubernetes.io/managed-by=%s): left alone; delete or rename it to let the relay have its own",
		kind, have.Namespace, have.Name, ManagedBy, ManagedBy)
}

func wrap(err error, what string, m metav1.ObjectMeta) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s %s/%s: %w", what, m.Namespace, m.Name, err)
}
