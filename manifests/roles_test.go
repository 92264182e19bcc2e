package manifests

import "github.com/liqo-relay/relay/build/manifestgen"

// The chart's defaults install the consumer only. The provider role needs
// components.inject.enabled and, with it, sidecar.addresses, which has no
// default (templates/validate.yaml); these are the --set assignments of
// the tests that render the webhook.
var (
	// injectRole turns the webhook on, with the provider base's address.
	injectRole = []string{"components.inject.enabled=true", "sidecar.addresses={" + manifestgen.ProviderBaseAddress + "}"}
	// bothRoles is a cluster that is consumer and provider: the operator
	// (on by default), the webhook and the grant for a consumer's operator.
	bothRoles = withInject("providerGrant.enabled=true")
)

// withInject returns injectRole followed by sets (later assignments win).
func withInject(sets ...string) []string {
	return append(append([]string{}, injectRole...), sets...)
}

// withBoth returns bothRoles followed by sets.
func withBoth(sets ...string) []string {
	return append(append([]string{}, bothRoles...), sets...)
}
