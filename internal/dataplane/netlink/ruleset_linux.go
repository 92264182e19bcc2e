//go:build linux

package netlink

import (
	"errors"
	"fmt"

	vnl "github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// RuleSet is a group of policy rules of one address family that the relay
// owns: the route manager's rule of a family ("not fwmark FwMark lookup
// Table"), or the Liqo integration's mark, interface and consumer rules.
// Ours recognizes a rule of the set at any priority, so that a rule the
// relay moved, or one an earlier run left, is still found. Rules that Ours
// rejects are never changed.
type RuleSet struct {
	Handle *vnl.Handle
	Family int
	Ours   func(vnl.Rule) bool
}

// List returns the family's rules in the kernel's order, by priority.
func (s RuleSet) List() ([]vnl.Rule, error) {
	rules, err := s.Handle.RuleList(s.Family)
	if err != nil {
		return nil, fmt.Errorf("list %s rules: %w", FamilyName(s.Family), err)
	}
	return rules, nil
}

// Sync makes the set's rules exactly want. listed is the family's rules as
// List returned them: Sync adds each rule of want that listed lacks
// (SameRule), then deletes each rule of the set in listed that is not one
// of want. Adding first means a packet never finds neither the old rule
// nor the new one. When an add fails Sync stops and deletes nothing, so
// the rules it would have replaced stay; every delete is tried and the
// failures are joined. A rule that is there already (EEXIST) or gone
// (ENOENT) is no failure. It returns the rules it added and deleted.
func (s RuleSet) Sync(listed []vnl.Rule, want []*vnl.Rule) (added []*vnl.Rule, deleted []vnl.Rule, err error) {
	for _, spec := range want {
		if containsRule(listed, spec) {
			continue
		}
		if err := s.Handle.RuleAdd(spec); err != nil && !errors.Is(err, unix.EEXIST) {
			return added, nil, fmt.Errorf("add %s rule at %d: %w", FamilyName(s.Family), spec.Priority, err)
		}
		added = append(added, spec)
	}
	var errs []error
	for i := range listed {
		r := listed[i]
		if !s.Ours(r) || keeps(want, r) {
			continue
		}
		if err := s.delete(r); err != nil {
			errs = append(errs, err)
			continue
		}
		deleted = append(deleted, r)
	}
	return added, deleted, errors.Join(errs...)
}

// Clear deletes every rule of the set, and every other rule extra reports
// (nil: none), at any priority.
func (s RuleSet) Clear(extra func(vnl.Rule) bool) error {
	rules, err := s.List()
	if err != nil {
		return err
	}
	var errs []error
	for _, r := range rules {
		if !s.Ours(r) && (extra == nil || !extra(r)) {
			continue
		}
		if err := s.delete(r); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// delete deletes listed rule r; a rule already gone is no failure.
func (s RuleSet) delete(r vnl.Rule) error {
	if err := s.Handle.RuleDel(&r); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("delete %s rule %q: %w", FamilyName(s.Family), r.String(), err)
	}
	return nil
}

// SameRule reports whether listed rule r is spec at spec's priority: the
// same table, mark, inversion, input interface, protocol, destination and
// source ports, which are the selectors the relay's rules use.
func SameRule(r vnl.Rule, spec *vnl.Rule) bool {
	if r.Priority != spec.Priority || r.Table != spec.Table || r.Mark != spec.Mark || r.Invert != spec.Invert ||
		r.IifName != spec.IifName || r.IPProto != spec.IPProto {
		return false
	}
	if (r.Dst == nil) != (spec.Dst == nil) || r.Dst != nil && r.Dst.String() != spec.Dst.String() {
		return false
	}
	if (r.Sport == nil) != (spec.Sport == nil) || r.Sport != nil && *r.Sport != *spec.Sport {
		return false
	}
	return true
}

func containsRule(listed []vnl.Rule, spec *vnl.Rule) bool {
	for _, r := range listed {
		if SameRule(r, spec) {
			return true
		}
	}
	return false
}

func keeps(want []*vnl.Rule, r vnl.Rule) bool {
	for _, spec := range want {
		if SameRule(r, spec) {
			return true
		}
	}
	return false
}

// Ahead returns the first of n consecutive priorities that end just before
// prio, where n rules go to be looked up ahead of a rule at prio; false
// when there is no room (they would reach below MinPriority).
func Ahead(prio, n int) (int, bool) {
	base := prio - n
	return base, base >= MinPriority
}
