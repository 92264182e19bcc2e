// Package e2e holds the end-to-end tests of liqo-relay: real relay
// processes (`relay run -c FILE`) in network namespaces, with pods behind
// two providers, a direct link between them and a path through a consumer
// namespace (see Topology). They need root and skip otherwise; `make e2e`
// runs them (test names start with TestE2E), and so does `make test`.
package e2e
