package podrunner

import "testing"

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "a", "EMPTY": "", "B": "$(A)"}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"$(A)", "a"},
		{"x$(A)y$(A)", "xaya"},
		{"$(EMPTY)|", "|"},
		{"$(MISSING)", "$(MISSING)"},
		{"$$(A)", "$(A)"},
		{"$$$(A)", "$a"},
		{"$$", "$"},
		{"$", "$"},
		{"a$", "a$"},
		{"$x", "$x"},
		{"$(A", "$(A"},
		{"$(", "$("},
		{"$()", "$()"},
		{"$(B)", "$(A)"}, // no recursion
		{"100$$ and $(A)", "100$ and a"},
	} {
		if got := Expand(tc.in, lookup); got != tc.want {
			t.Errorf("Expand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
