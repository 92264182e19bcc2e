package peersync

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/core/status"
)

// writeStatuses writes the status of every RelayPeer whose status had a
// transition, or whose measurements changed and were last written at least
// StatusRefresh ago.
func (c *Controller) writeStatuses(ctx context.Context) {
	rs, err := c.o.Agent.Status(ctx)
	if err != nil {
		c.log.Debug("relay status unavailable", "err", err)
		return
	}
	peers := make(map[string]*status.PeerStatus, len(rs.Peers))
	for i := range rs.Peers {
		peers[rs.Peers[i].Name] = &rs.Peers[i]
	}
	now := c.o.Now()
	jobs := c.statusJobs(peers, now)
	if now.Before(c.retryAt) {
		return // backing off after failed writes
	}
	c.applyStatuses(ctx, jobs, now)
}

// statusJob is one RelayPeer status to write.
type statusJob struct {
	name string
	uid  string
	st   v1alpha1.RelayPeerStatus
}

// statusJobs computes, at now, the statuses to write from the relay's view
// of its peers (by name), and forgets what was written for RelayPeers that
// are gone.
func (c *Controller) statusJobs(peers map[string]*status.PeerStatus, now time.Time) []statusJob {
	c.mu.Lock()
	defer c.mu.Unlock()
	var jobs []statusJob
	live := make(map[string]bool)
	for _, o := range c.objects() {
		live[o.Name] = true
		v, ok := c.verdicts[o.Name]
		if !ok {
			continue // not synced yet
		}
		prev, seen := c.written[o.Name]
		if !seen || prev.uid != string(o.UID) {
			prev = written{status: o.Status, uid: string(o.UID)}
		}
		var ps *status.PeerStatus
		acc, run := c.accepted[o.Name]
		if run {
			ps = peers[o.Name]
		}
		next := desiredStatus(prev.status, v, ps, now)
		for i := range next.Paths {
			if p := findPath(acc.peer, next.Paths[i].Name); p != nil {
				next.Paths[i].Endpoint = p.Endpoint
			}
		}
		if seen && prev.uid == string(o.UID) && !transition(prev.status, next) &&
			(!measured(prev.status, next) || now.Sub(prev.at) < StatusRefresh) {
			continue
		}
		jobs = append(jobs, statusJob{name: o.Name, uid: string(o.UID), st: next})
	}
	for name := range c.written {
		if !live[name] {
			delete(c.written, name)
		}
	}
	return jobs
}

// applyStatuses writes jobs in order. A RelayPeer deleted meanwhile is
// skipped; a status the API server refuses is remembered as written, so it
// is tried again only when it changes; any other failure ends the round
// and backs off (1 s doubling to 30 s), logged once per streak.
func (c *Controller) applyStatuses(ctx context.Context, jobs []statusJob, now time.Time) {
	for _, j := range jobs {
		err := c.o.API.ApplyRelayPeerStatus(ctx, c.o.Namespace, j.name, j.st)
		switch {
		case err == nil:
			if c.o.Writes != nil {
				c.o.Writes.Inc()
			}
			c.wrote(j, now)
			if c.failures > 0 {
				c.log.Info("RelayPeer status writes work again", "after", c.failures)
				c.failures = 0
			}
		case apierrors.IsNotFound(err), errors.Is(err, context.Canceled):
		case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
			c.log.Warn("RelayPeer status refused by the API server", "relaypeer", j.name, "err", err)
			c.wrote(j, now)
		default:
			if c.failures == 0 {
				c.log.Warn("writing RelayPeer status failed; backing off", "relaypeer", j.name, "err", err)
			}
			c.failures++
			c.retryAt = now.Add(min(time.Second<<min(c.failures-1, 5), 30*time.Second))
			return
		}
	}
}

// wrote records j as written at now.
func (c *Controller) wrote(j statusJob, now time.Time) {
	c.mu.Lock()
	c.written[j.name] = written{status: j.st, at: now, uid: j.uid}
	c.mu.Unlock()
}
