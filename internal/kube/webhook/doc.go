// Package webhook is `relay inject`: a mutating admission webhook that adds
// the relay sidecar to Liqo gateway pods (networking.liqo.io/component:
// gateway) on Pod CREATE, and a controller that gives each gateway what its
// relay needs in the tenant namespace (RoleBinding, UDP Service,
// NetworkPolicy, key Secret), owned by Liqo's gateway object so that they go
// with the peering, and reports gateway pods that lack the sidecar.
//
// Layout: sidecar.go parses and validates the sidecar file; render.go and
// mutate.go compute the relay configuration and the JSON patch of one pod
// (pure: a pod and settings in, a patch out); webhook.go serves
// AdmissionReviews; certs.go manages the serving certificate and the
// caBundle; controller.go and objects.go are the per-gateway controller;
// identity.go names relays and reads Liqo's cluster ID; servers.go serves
// the webhook, /metrics and the probes; run.go wires it all.
// docs/inject.md describes the behaviour.
package webhook
