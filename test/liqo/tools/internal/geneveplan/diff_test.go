package geneveplan

import (
	"net/netip"
	"reflect"
	"testing"
)

func end(name string, vni uint32) End {
	return End{Name: name, VNI: vni, Local: addr("10.80.0.3"), Remote: addr("10.244.1.1"), Port: 6091, MTU: 1340}
}

// device is the observation of a device the stand-in made from e.
func device(e End) Device {
	return Device{
		Name: e.Name, Kind: "vxlan", Owned: true, VNI: e.VNI, Remote: e.Remote, Port: e.Port,
		MTU: e.MTU, Up: true, NoARP: e.DisableARP, Addrs: []netip.Prefix{e.LocalPrefix()},
	}
}

func TestDiff(t *testing.T) {
	a, b := end("liqo.a", 1), end("liqo.b", 2)
	f := false
	tr := true
	for _, tc := range []struct {
		name string
		want []End
		have []Device
		ch   Changes
	}{
		{"nothing", nil, nil, Changes{}},
		{"create", []End{a, b}, nil, Changes{Create: []End{a, b}}},
		{"in sync", []End{a}, []Device{device(a)}, Changes{}},
		{"delete unwanted owned", nil, []Device{device(a)}, Changes{Delete: []string{"liqo.a"}}},
		{"foreign unwanted left alone", nil, []Device{{Name: "liqo.x", Kind: "geneve"}}, Changes{}},
		{"foreign holds wanted name", []End{a}, []Device{{Name: "liqo.a", Kind: "veth"}},
			Changes{Conflicts: []Conflict{{End: a, Holder: "veth device"}}}},
		{"vxlan without alias holds wanted name", []End{a}, []Device{{Name: "liqo.a", Kind: "vxlan"}},
			Changes{Conflicts: []Conflict{{End: a, Holder: "vxlan device without the stand-in's alias"}}}},
		{"vni changed", []End{a}, []Device{device(end("liqo.a", 9))}, Changes{Delete: []string{"liqo.a"}, Create: []End{a}}},
		{"remote changed", []End{a}, []Device{func() Device { d := device(a); d.Remote = addr("172.18.0.3"); return d }()},
			Changes{Delete: []string{"liqo.a"}, Create: []End{a}}},
		{"port changed", []End{a}, []Device{func() Device { d := device(a); d.Port = 4789; return d }()},
			Changes{Delete: []string{"liqo.a"}, Create: []End{a}}},
		{"mtu changed", []End{a}, []Device{func() Device { d := device(a); d.MTU = 1450; return d }()},
			Changes{Delete: []string{"liqo.a"}, Create: []End{a}}},
		{"mtu 0 takes any", []End{func() End { e := a; e.MTU = 0; return e }()},
			[]Device{func() Device { d := device(a); d.MTU = 1450; return d }()}, Changes{}},
		// Two devices swap VNIs: both are deleted before either is made.
		{"vni swap", []End{end("liqo.a", 2), end("liqo.b", 1)}, []Device{device(a), device(b)},
			Changes{Delete: []string{"liqo.a", "liqo.b"}, Create: []End{end("liqo.a", 2), end("liqo.b", 1)}}},
		{"down", []End{a}, []Device{func() Device { d := device(a); d.Up = false; return d }()},
			Changes{Fix: []Fix{{End: a, SetUp: true}}}},
		{"address missing", []End{a}, []Device{func() Device { d := device(a); d.Addrs = nil; return d }()},
			Changes{Fix: []Fix{{End: a, AddAddrs: []netip.Prefix{a.LocalPrefix()}}}}},
		{"address changed", []End{a}, []Device{func() Device {
			d := device(a)
			d.Addrs = []netip.Prefix{netip.MustParsePrefix("10.80.0.9/32")}
			return d
		}()}, Changes{Fix: []Fix{{End: a, AddAddrs: []netip.Prefix{a.LocalPrefix()},
			DelAddrs: []netip.Prefix{netip.MustParsePrefix("10.80.0.9/32")}}}}},
		{"arp to turn off", []End{func() End { e := a; e.DisableARP = true; return e }()}, []Device{device(a)},
			Changes{Fix: []Fix{{End: func() End { e := a; e.DisableARP = true; return e }(), SetNoARP: &tr}}}},
		{"arp to turn on", []End{a}, []Device{func() Device { d := device(a); d.NoARP = true; return d }()},
			Changes{Fix: []Fix{{End: a, SetNoARP: &f}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Diff(tc.want, tc.have)
			if !reflect.DeepEqual(got, tc.ch) {
				t.Fatalf("Diff:\n got %+v\nwant %+v", got, tc.ch)
			}
			if got.Empty() != tc.ch.Empty() {
				t.Fatalf("Empty %v", got.Empty())
			}
		})
	}
}

// Applying the changes to the observation, the way the kernel would, leaves
// nothing to do: the diff converges in one step.
func TestDiffConverges(t *testing.T) {
	want := []End{end("liqo.a", 2), end("liqo.b", 1), end("liqo.c", 3)}
	have := []Device{
		device(end("liqo.a", 1)),
		func() Device { d := device(end("liqo.b", 1)); d.Up = false; d.Addrs = nil; return d }(),
		device(end("liqo.old", 7)),
		{Name: "liqo.foreign", Kind: "dummy"},
	}
	ch := Diff(want, have)
	next := apply(have, ch)
	if again := Diff(want, next); !again.Empty() {
		t.Fatalf("not converged after %v: %v", ch, again)
	}
	if len(next) != 4 { // a, b, c and the foreign dummy
		t.Fatalf("devices after apply: %+v", next)
	}
}

// apply is a naive model of the kernel carrying out ch.
func apply(have []Device, ch Changes) []Device {
	var out []Device
	for _, d := range have {
		deleted := false
		for _, n := range ch.Delete {
			deleted = deleted || d.Name == n
		}
		if !deleted {
			out = append(out, d)
		}
	}
	for _, e := range ch.Create {
		out = append(out, device(e))
	}
	for _, f := range ch.Fix {
		for i := range out {
			if out[i].Name != f.End.Name {
				continue
			}
			d := &out[i]
			var addrs []netip.Prefix
			for _, a := range d.Addrs {
				keep := true
				for _, del := range f.DelAddrs {
					keep = keep && a != del
				}
				if keep {
					addrs = append(addrs, a)
				}
			}
			d.Addrs = append(addrs, f.AddAddrs...)
			if f.SetNoARP != nil {
				d.NoARP = *f.SetNoARP
			}
			d.Up = d.Up || f.SetUp
		}
	}
	return out
}

func TestCheckName(t *testing.T) {
	for name, ok := range map[string]bool{
		"liqo.abcdefghij":  true,
		"liqo.a":           true,
		"liqo.":            false,
		"eth0":             false,
		"liqo.abcdefghijk": false, // 16 bytes
		"liqo.a/b":         false,
		"liqo.a b":         false,
	} {
		if err := CheckName(name); (err == nil) != ok {
			t.Errorf("CheckName(%q) = %v", name, err)
		}
	}
	if !IsCandidate("liqo.x") || IsCandidate("eth0") {
		t.Error("IsCandidate")
	}
}

func TestChangesString(t *testing.T) {
	ch := Changes{Delete: []string{"liqo.a"}, Create: []End{end("liqo.b", 1)}, Fix: []Fix{{End: end("liqo.c", 2)}},
		Conflicts: []Conflict{{End: end("liqo.d", 3), Holder: "veth device"}}}
	if got, want := ch.String(), "delete liqo.a; create liqo.b; fix liqo.c; 1 conflicts"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
	if (Changes{}).String() != "no changes" {
		t.Fatal("empty String")
	}
}
