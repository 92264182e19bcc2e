// Package manifestgen produces the committed deployment files of manifests/
// from their sources, so that each has one: the kustomize bases from the
// Helm chart (helm template), and the Liqo gateway templates with the relay
// from Liqo's own examples (test/fixtures/liqo-v1.2.0). `make manifests`
// runs it (build/cmd/manifests); the tests of manifests/ check that the
// committed files equal a fresh render.
package manifestgen
