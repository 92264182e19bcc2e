package main

import (
	"strings"
	"testing"
)

func TestOperatorFlagErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"operator"}, "--namespace is required"},
		{[]string{"operator", "--namespace", "x", "extra"}, `unexpected argument "extra"`},
		{[]string{"operator", "--namespace", "x", "--kubeconfig", "/nonexistent/kubeconfig"}, "kubernetes:"},
	}
	for _, tc := range cases {
		code, _, stderr := runCmd(t, "", tc.args...)
		if code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, stderr, tc.want)
		}
	}
}
