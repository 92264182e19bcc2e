// Package layoutcheck holds the tests that keep the tree readable: no Go
// file over fileLimit lines and no function over funcLimit lines except the
// flat tables it names, comments that say what code does rather than its
// history, and docs/architecture.md listing every package of the
// repository. The package itself has no code beyond what its tests share.
package layoutcheck
