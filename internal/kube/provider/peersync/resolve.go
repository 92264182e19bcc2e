package peersync

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/core/config"
)

// accepted is the spec of a RelayPeer that the relay runs.
type accepted struct {
	peer       config.Peer
	generation int64
}

// verdict is what sync decided about one RelayPeer's current spec: the
// Ready condition's status, reason and message.
type verdict struct {
	generation int64
	ready      bool
	reason     string
	message    string
}

// resolution is the outcome of resolve: the configuration to run, the
// specs it holds and the verdict on every RelayPeer.
type resolution struct {
	cfg      *config.Config
	accepted map[string]accepted
	verdicts map[string]verdict
}

// resolve computes the peer set from the file configuration base and the
// RelayPeers objs. A RelayPeer's current spec is accepted when it validates
// against base and the peers accepted so far; the objects are tried in name
// order, repeatedly until nothing more can be accepted, so that a prefix
// moved from one RelayPeer to another is accepted whatever order the two
// updates arrive in. A RelayPeer whose current spec is rejected keeps its
// previously accepted spec (prev) when that still fits, so a bad edit
// leaves the running peer as it was. resolve is pure: no I/O, no clock.
func resolve(base *config.Config, objs []*v1alpha1.RelayPeer, prev map[string]accepted, allowed []netip.Prefix) resolution {
	res := resolution{
		cfg:      base.Clone(),
		accepted: make(map[string]accepted, len(objs)),
		verdicts: make(map[string]verdict, len(objs)),
	}
	objs = slices.Clone(objs)
	slices.SortFunc(objs, func(a, b *v1alpha1.RelayPeer) int { return strings.Compare(a.Name, b.Name) })

	// The specs the relay runs stay first: a rejected edit must not let
	// another RelayPeer take what the running spec holds. They are kept as
	// long as they still fit the base (a file reload can push them out).
	for _, o := range objs {
		old, ok := prev[o.Name]
		if !ok {
			continue
		}
		if m, err := res.cfg.WithPeer(old.peer, "spec", "metadata.name", allowed); err == nil {
			res.cfg = m
			res.accepted[o.Name] = old
			if old.generation == o.Generation {
				res.verdicts[o.Name] = verdict{generation: o.Generation, ready: true,
					reason: v1alpha1.ReasonApplied, message: "spec applied to the relay"}
			}
		}
	}
	type candidate struct {
		obj       *v1alpha1.RelayPeer
		peer      config.Peer
		decodeErr error // the spec alone is bad: no round can fix it
		err       error // the last reason it did not fit
	}
	var pending []candidate
	for _, o := range objs {
		if _, done := res.verdicts[o.Name]; done {
			continue
		}
		p, err := decode(base, o)
		pending = append(pending, candidate{obj: o, peer: p, decodeErr: err, err: err})
	}
	for progress := true; progress && len(pending) > 0; {
		progress = false
		rest := pending[:0]
		for _, c := range pending {
			if c.decodeErr == nil {
				// The new spec replaces the running one of the same object.
				m, err := without(res.cfg, len(base.Peers), c.obj.Name).WithPeer(c.peer, "spec", "metadata.name", allowed)
				if err == nil {
					res.cfg = m
					res.accepted[c.obj.Name] = accepted{peer: c.peer, generation: c.obj.Generation}
					res.verdicts[c.obj.Name] = verdict{generation: c.obj.Generation, ready: true,
						reason: v1alpha1.ReasonApplied, message: "spec applied to the relay"}
					progress = true
					continue
				}
				c.err = err
			}
			rest = append(rest, c)
		}
		pending = rest
	}
	for _, c := range pending {
		v := verdict{generation: c.obj.Generation, reason: reasonFor(c.err),
			message: "spec rejected, nothing of it applied: " + summarize(c.err)}
		if old, ok := res.accepted[c.obj.Name]; ok {
			v.message = fmt.Sprintf("generation %d rejected, the relay keeps running generation %d: %s",
				c.obj.Generation, old.generation, summarize(c.err))
		}
		res.verdicts[c.obj.Name] = v
	}
	// Run the file peers first and the RelayPeers in name order, whatever
	// order they were accepted in, so that the same set is the same
	// configuration. Validity does not depend on the order.
	n := len(base.Peers)
	slices.SortFunc(res.cfg.Peers[n:], func(a, b config.Peer) int { return strings.Compare(a.Name, b.Name) })
	return res
}

// without returns c without the RelayPeer-made peer called name, looking
// only past the file's n peers (c itself when there is none): a RelayPeer
// never replaces a file peer.
func without(c *config.Config, n int, name string) *config.Config {
	i := slices.IndexFunc(c.Peers[n:], func(p config.Peer) bool { return p.Name == name })
	if i < 0 {
		return c
	}
	i += n
	d := c.Clone()
	d.Peers = slices.Delete(d.Peers, i, i+1)
	return d
}

// maxProblems bounds the problems a condition message lists: the API
// server refuses condition messages over 32 KiB, and a person reads the
// first few anyway.
const maxProblems = 20

// summarize renders err's problems, at most maxProblems of them.
func summarize(err error) string {
	var es config.Errors
	if !errors.As(err, &es) || len(es) <= maxProblems {
		return err.Error()
	}
	return fmt.Sprintf("%v\n... and %d more problems", es[:maxProblems], len(es)-maxProblems)
}

// decode turns a RelayPeer's spec into a config.Peer with the file's
// decoder, so that it means exactly what a file peer means.
func decode(base *config.Config, o *v1alpha1.RelayPeer) (config.Peer, error) {
	data, err := json.Marshal(o.Spec)
	if err != nil {
		return config.Peer{}, fmt.Errorf("spec: %w", err)
	}
	return base.DecodePeer(o.Name, data, "spec")
}

// reasonFor names the Ready=False reason of a rejection.
func reasonFor(err error) string {
	s := err.Error()
	switch {
	case strings.Contains(s, "outside allowedPeerPrefixes"):
		return v1alpha1.ReasonNotAllowed
	case strings.Contains(s, "metadata.name: duplicate peer name"):
		return v1alpha1.ReasonNameClash
	default:
		return v1alpha1.ReasonInvalid
	}
}
