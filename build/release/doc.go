// Package release builds the parts of a release that no other tool
// builds reproducibly: the packaged Helm chart, stamped with the release
// version and with every timestamp fixed, so that `make release` twice
// on one commit gives the same bytes (`helm package` dates its entries
// with the current time). It is build tooling and never ships.
package release
