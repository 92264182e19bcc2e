// Package resolver keeps the path endpoints given as host names resolved:
// it looks names up with miekg/dns (the hosts file first, then the
// resolvers of resolv.conf or the configured ones, over UDP with TCP when
// an answer is truncated), and a Watcher refreshes every watched name on
// the schedule that internal/core/refresh decides, reporting each change of
// address or state to its owner.
//
// The Watcher's goroutine is owned by whoever calls Run; it ends with
// Run's context and waits for its lookups.
package resolver
