package connect

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/kube/consumer/peering"
	"github.com/liqo-relay/relay/internal/kube/consumer/podmap"
)

// fakeConsumer is the consumer cluster in memory, with a stand-in for
// Liqo's IPAM (ipam fills status.ip of new IPs).
type fakeConsumer struct {
	mu      sync.Mutex
	fcs     map[string]peering.ForeignCluster
	remaps  map[string][]podmap.Remap
	pods    []podmap.Pod
	ips     map[string]*RelayIP
	nextExt netip.Addr
	fccs    map[string]*v1alpha1.ForeignClusterConnection
	writes  []string // "create-ip x", "delete-ip x", "status f", "update f"
}

func (c *fakeConsumer) ForeignCluster(_ context.Context, id string) (peering.ForeignCluster, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fc, ok := c.fcs[id]
	if !ok {
		return peering.ForeignCluster{}, fmt.Errorf("%s: %w", id, ErrUnknownCluster)
	}
	return fc, nil
}

func (c *fakeConsumer) PodRemaps(_ context.Context, fc peering.ForeignCluster) ([]podmap.Remap, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.remaps[fc.ID]), nil
}

func (c *fakeConsumer) OffloadedPods(context.Context) ([]podmap.Pod, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.pods), nil
}

func (c *fakeConsumer) RelayIPs(_ context.Context, provider string) ([]RelayIP, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []RelayIP
	for _, ip := range c.ips {
		if ip.Provider == provider {
			out = append(out, *ip)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (c *fakeConsumer) CreateRelayIP(_ context.Context, ip RelayIP) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.ips[ip.Name]; ok {
		return fmt.Errorf("IP %s already exists", ip.Name)
	}
	c.ips[ip.Name] = &ip
	c.writes = append(c.writes, "create-ip "+ip.Name)
	return nil
}

func (c *fakeConsumer) DeleteRelayIP(_ context.Context, name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	// Liqo's finalizer holds the IP until its IPAM released it: ipam()
	// removes deleting IPs.
	if ip, ok := c.ips[name]; ok && !ip.Deleting {
		ip.Deleting = true
		c.writes = append(c.writes, "delete-ip "+name)
	}
	return nil
}

// ipam does what Liqo's IPAM does between two syncs: a status.ip for every
// new IP, and release of the deleted ones.
func (c *fakeConsumer) ipam() {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, 0, len(c.ips))
	for n := range c.ips {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ip := c.ips[n]
		switch {
		case ip.Deleting:
			delete(c.ips, n)
		case !ip.Status.IsValid():
			ip.Status = c.nextExt
			c.nextExt = c.nextExt.Next()
		}
	}
}

func (c *fakeConsumer) UpdateFCC(_ context.Context, f *v1alpha1.ForeignClusterConnection) (*v1alpha1.ForeignClusterConnection, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cur, ok := c.fccs[f.Name]
	if !ok {
		return nil, errors.New("not found")
	}
	if f.DeletionTimestamp != nil && len(f.Finalizers) == 0 {
		delete(c.fccs, f.Name)
		c.writes = append(c.writes, "gone "+f.Name)
		return f, nil
	}
	cur.ObjectMeta = *f.ObjectMeta.DeepCopy()
	c.writes = append(c.writes, "update "+f.Name)
	return cur.DeepCopy(), nil
}

func (c *fakeConsumer) UpdateFCCStatus(_ context.Context, f *v1alpha1.ForeignClusterConnection) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	cur, ok := c.fccs[f.Name]
	if !ok {
		return errors.New("not found")
	}
	cur.Status = *f.Status.DeepCopy()
	c.writes = append(c.writes, "status "+f.Name)
	return nil
}

// Get and List make fakeConsumer the Lister too.
func (c *fakeConsumer) Get(name string) (*v1alpha1.ForeignClusterConnection, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.fccs[name]
	if !ok {
		return nil, false
	}
	return f.DeepCopy(), true
}

func (c *fakeConsumer) List() []*v1alpha1.ForeignClusterConnection {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*v1alpha1.ForeignClusterConnection
	for _, f := range c.fccs {
		out = append(out, f.DeepCopy())
	}
	return out
}

func (c *fakeConsumer) takeWrites() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.writes
	c.writes = nil
	return w
}

// fakeProvider is one provider cluster in memory.
type fakeProvider struct {
	mu       sync.Mutex
	id       string
	down     bool
	err      error                     // returned by Relays when set
	relays   map[string]v1alpha1.Relay // ns/name
	gateway  netip.Addr
	external podmap.Remap
	peers    map[string]*v1alpha1.RelayPeer // ns/name
	writes   []string
}

var errDown = errors.New("connection refused")

func (p *fakeProvider) Relays(_ context.Context, ns string) ([]v1alpha1.Relay, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return nil, errDown
	}
	if p.err != nil {
		return nil, p.err
	}
	var out []v1alpha1.Relay
	for _, r := range p.relays {
		if r.Namespace == ns {
			out = append(out, *r.DeepCopy())
		}
	}
	return out, nil
}

func (p *fakeProvider) GatewayIP(context.Context, string, string) (netip.Addr, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.gateway.IsValid() {
		return netip.Addr{}, fmt.Errorf("no gateway: %w", peering.ErrNotReady)
	}
	return p.gateway, nil
}

func (p *fakeProvider) ExternalRemap(context.Context, string, string) (podmap.Remap, error) {
	return p.external, nil
}

func (p *fakeProvider) RelayPeer(_ context.Context, ns, name string) (*v1alpha1.RelayPeer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return nil, errDown
	}
	rp, ok := p.peers[ns+"/"+name]
	if !ok {
		return nil, nil
	}
	return rp.DeepCopy(), nil
}

func (p *fakeProvider) ApplyRelayPeer(_ context.Context, ns, name string, labels, ann map[string]string, spec v1alpha1.RelayPeerSpec) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return errDown
	}
	rp, ok := p.peers[ns+"/"+name]
	if !ok {
		rp = &v1alpha1.RelayPeer{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{}, Annotations: map[string]string{}}}
		p.peers[ns+"/"+name] = rp
	}
	for k, v := range labels {
		rp.Labels[k] = v
	}
	for k, v := range ann {
		rp.Annotations[k] = v
	}
	rp.Spec = *spec.DeepCopy()
	rp.Generation++
	p.writes = append(p.writes, "apply "+ns+"/"+name)
	return nil
}

func (p *fakeProvider) DeleteRelayPeer(_ context.Context, ns, name string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return errDown
	}
	if _, ok := p.peers[ns+"/"+name]; ok {
		delete(p.peers, ns+"/"+name)
		p.writes = append(p.writes, "delete "+ns+"/"+name)
	}
	return nil
}

func (p *fakeProvider) peer(ns, name string) *v1alpha1.RelayPeer {
	p.mu.Lock()
	defer p.mu.Unlock()
	if rp, ok := p.peers[ns+"/"+name]; ok {
		return rp.DeepCopy()
	}
	return nil
}

func (p *fakeProvider) setPeerStatus(ns, name string, st v1alpha1.RelayPeerStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.peers[ns+"/"+name].Status = st
}

func (p *fakeProvider) takeWrites() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.writes
	p.writes = nil
	return w
}

type fakeDialer struct {
	providers map[string]*fakeProvider
	dials     []string
}

func (d *fakeDialer) Provider(_ context.Context, fc peering.ForeignCluster, override *v1alpha1.KubeconfigSecretRef) (Provider, error) {
	p, ok := d.providers[fc.ID]
	if !ok {
		return nil, fmt.Errorf("no credentials for %s", fc.ID)
	}
	via := "liqo"
	if override != nil {
		via = override.Name
	}
	d.dials = append(d.dials, fc.ID+" via "+via)
	return p, nil
}

type event struct{ typ, reason, note string }

type fakeRecorder struct {
	mu     sync.Mutex
	events []event
}

func (r *fakeRecorder) Eventf(_, _ runtime.Object, typ, reason, _, note string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, event{typ, reason, fmt.Sprintf(note, args...)})
}

func (r *fakeRecorder) has(reason string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		if e.reason == reason {
			return true
		}
	}
	return false
}

// fakeClock is a settable clock.
type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time          { return c.t }
func (c *fakeClock) Advance(d time.Duration) { c.t = c.t.Add(d) }
