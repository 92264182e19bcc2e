// Package v1alpha1 holds the liqo-relay Kubernetes API, group
// relay.liqo-relay.io, version v1alpha1:
//
//   - Relay: one per relay process, created and kept up to date by the relay
//     itself. Its status publishes the relay's public key and endpoints.
//   - RelayPeer: one per remote peer of a relay, in the relay's namespace and
//     labelled with the relay's name. Its spec is exactly a peer of the
//     relay's file format; its status is what the relay measures.
//
// The CRDs in manifests/crds are generated from these types with
// controller-gen (make generate); a test fails when they drift.
//
// +kubebuilder:object:generate=true
// +groupName=relay.liqo-relay.io
package v1alpha1
