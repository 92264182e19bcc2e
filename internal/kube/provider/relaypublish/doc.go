// Package relaypublish keeps a relay's own Relay object in its namespace:
// it creates it, named after the relay, and writes its status (public key,
// endpoints, listen port, mode, version, readiness, conditions) with
// server-side apply whenever any of it changes.
//
// The endpoints come from the Relay's spec: either spec.endpoints as
// written, or the LoadBalancer ingress of the Service named in
// spec.serviceRef (an IP, or a hostname for load balancers that hand out
// names), with the Service's UDP port. The relay watches just its Relay and
// that Service, each by name (get and watch, no list), so its RBAC Role
// names no more than it uses.
package relaypublish
