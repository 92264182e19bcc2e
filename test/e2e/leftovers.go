package e2e

import (
	"os/exec"
	"strings"
	"testing"
)

// leftovers lists what a TUN relay leaves in its namespace: the device,
// policy rules at its priority, routes in its table, processes.
func leftovers(t *testing.T, s *Side) []string {
	t.Helper()
	var left []string
	if out, err := s.NS.Output("ip", "link", "show", "relay0"); err == nil {
		left = append(left, "interface: "+strings.TrimSpace(out))
	}
	if out := strings.TrimSpace(s.NS.Run(t, "ip", "rule", "show", "priority", "1900")); out != "" {
		left = append(left, "rules: "+out)
	}
	if out := table(t, s); out != "" {
		left = append(left, "routes: "+out)
	}
	if out := strings.TrimSpace(s.NS.Run(t, "ip", "-6", "rule", "show", "priority", "1900")); out != "" {
		left = append(left, "v6 rules: "+out)
	}
	// From outside: inside, `ip netns pids` would list itself.
	if out, err := exec.Command("ip", "netns", "pids", s.NS.Name).Output(); err == nil && strings.TrimSpace(string(out)) != "" {
		left = append(left, "processes: "+strings.TrimSpace(string(out)))
	}
	return left
}

// table returns the routes in the relay's table, "" when the kernel has
// no such table (it never had a route, or all are gone).
func table(t *testing.T, s *Side) string {
	t.Helper()
	out, err := s.NS.Output("ip", "route", "show", "table", "1900")
	if err != nil {
		if strings.Contains(out, "does not exist") {
			return ""
		}
		t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// rules returns the policy rules at the relay's priority.
func rules(t *testing.T, s *Side) string {
	t.Helper()
	return strings.TrimSpace(s.NS.Run(t, "ip", "rule", "show", "priority", "1900"))
}
