package geneveplan

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// Device is what the kernel shows of one device whose name IsCandidate.
type Device struct {
	Name string
	Kind string // the link type, "vxlan", "geneve", "veth", ...
	// Owned is true for a vxlan device carrying the stand-in's alias: only
	// those are ever changed or deleted.
	Owned  bool
	VNI    uint32
	Remote netip.Addr
	Port   uint16
	MTU    int
	Up     bool
	NoARP  bool
	Addrs  []netip.Prefix // without link-local addresses
}

// Fix brings an owned device with the right tunnel parameters to the
// wanted address, ARP and up state.
type Fix struct {
	End      End
	AddAddrs []netip.Prefix
	DelAddrs []netip.Prefix
	SetNoARP *bool // nil: leave as is
	SetUp    bool
}

// Conflict is a wanted name held by a device that is not the stand-in's.
type Conflict struct {
	End    End
	Holder string // what holds the name, for the message
}

func (c Conflict) String() string {
	return fmt.Sprintf("device %s wanted for %s is a %s not made by the stand-in: left alone", c.End.Name, c.End.Tunnel, c.Holder)
}

// Changes turn the observed devices into the wanted ones. Apply Delete
// first, then Create, then Fix: a VNI moving between names must be freed
// before it is taken again.
type Changes struct {
	Delete    []string // owned devices to remove, also the old half of a re-creation
	Create    []End    // fully configured on creation
	Fix       []Fix
	Conflicts []Conflict
}

// Empty reports whether nothing needs doing.
func (c Changes) Empty() bool {
	return len(c.Delete) == 0 && len(c.Create) == 0 && len(c.Fix) == 0 && len(c.Conflicts) == 0
}

func (c Changes) String() string {
	var parts []string
	if len(c.Delete) > 0 {
		parts = append(parts, "delete "+strings.Join(c.Delete, ","))
	}
	if len(c.Create) > 0 {
		names := make([]string, len(c.Create))
		for i, e := range c.Create {
			names[i] = e.Name
		}
		parts = append(parts, "create "+strings.Join(names, ","))
	}
	if len(c.Fix) > 0 {
		names := make([]string, len(c.Fix))
		for i, f := range c.Fix {
			names[i] = f.End.Name
		}
		parts = append(parts, "fix "+strings.Join(names, ","))
	}
	if len(c.Conflicts) > 0 {
		parts = append(parts, fmt.Sprintf("%d conflicts", len(c.Conflicts)))
	}
	if len(parts) == 0 {
		return "no changes"
	}
	return strings.Join(parts, "; ")
}

// Diff compares the wanted ends with the observed devices. A device is
// re-created when its VNI, remote, port or MTU differ (as Liqo re-creates a
// geneve device), and fixed in place for address, ARP and up state. Owned
// devices nobody wants are deleted; devices that are not owned are never
// touched, and one holding a wanted name is a Conflict.
func Diff(want []End, have []Device) Changes {
	var ch Changes
	byName := make(map[string]*Device, len(have))
	for i := range have {
		byName[have[i].Name] = &have[i]
	}
	wanted := make(map[string]bool, len(want))
	for _, e := range want {
		wanted[e.Name] = true
		d, ok := byName[e.Name]
		switch {
		case !ok:
			ch.Create = append(ch.Create, e)
		case !d.Owned:
			ch.Conflicts = append(ch.Conflicts, Conflict{End: e, Holder: holder(d)})
		case d.VNI != e.VNI || d.Remote != e.Remote || d.Port != e.Port || (e.MTU != 0 && d.MTU != e.MTU):
			ch.Delete = append(ch.Delete, d.Name)
			ch.Create = append(ch.Create, e)
		default:
			if f, need := fix(e, d); need {
				ch.Fix = append(ch.Fix, f)
			}
		}
	}
	for i := range have {
		if d := &have[i]; d.Owned && !wanted[d.Name] {
			ch.Delete = append(ch.Delete, d.Name)
		}
	}
	slices.Sort(ch.Delete)
	return ch
}

func holder(d *Device) string {
	if d.Kind == "vxlan" {
		return "vxlan device without the stand-in's alias"
	}
	return d.Kind + " device"
}

func fix(e End, d *Device) (Fix, bool) {
	f := Fix{End: e}
	want := e.LocalPrefix()
	if !slices.Contains(d.Addrs, want) {
		f.AddAddrs = append(f.AddAddrs, want)
	}
	for _, a := range d.Addrs {
		if a != want {
			f.DelAddrs = append(f.DelAddrs, a)
		}
	}
	if d.NoARP != e.DisableARP {
		v := e.DisableARP
		f.SetNoARP = &v
	}
	f.SetUp = !d.Up
	need := len(f.AddAddrs) > 0 || len(f.DelAddrs) > 0 || f.SetNoARP != nil || f.SetUp
	return f, need
}
