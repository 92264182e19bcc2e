// Package vxlanlink is the kernel side of the geneve stand-in: it observes
// the `liqo.*` devices of one network namespace and carries out the changes
// geneveplan decides, making each tunnel end as a vxlan device.
//
// The stand-in marks what it makes with the device alias OwnerAlias and
// never changes or deletes a device without it, so it cannot disturb
// devices others made under Liqo's prefix.
package vxlanlink
