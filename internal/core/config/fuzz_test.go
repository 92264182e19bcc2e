package config

import (
	"os"
	"testing"
)

// FuzzParse checks that Parse never panics, and that it returns either a
// Config that validates or an error, never both or neither.
func FuzzParse(f *testing.F) {
	full, err := os.ReadFile("testdata/full.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		string(full), expand(onePeer), expand(head), "", "~", "[]", "a: &a [*a]",
		"name: a\nname: b\n", "peers: [~, {}, {paths: [~]}]",
		"x: &a [1,1,1]\ny: &b [*a,*a,*a]\npeers: *b\n",
		expand(onePeer + "    seesUs: [{real: 10.244.0.0/16, as: 10.71.0.0/16}]\n"),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if (c == nil) == (err == nil) {
			t.Fatalf("Parse returned config %v and error %v", c, err)
		}
		if c != nil {
			if err := c.Validate(); err != nil {
				t.Fatalf("parsed config does not validate: %v", err)
			}
			for _, p := range c.Peers {
				if !p.Equal(p) {
					t.Fatalf("peer %q not Equal to itself", p.Name)
				}
			}
		}
	})
}
