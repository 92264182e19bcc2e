package operator

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Lease timing when Options leave it zero: client-go's usual values.
const (
	defaultLeaseDuration = 15 * time.Second
	defaultRenewDeadline = 10 * time.Second
	defaultRetryPeriod   = 2 * time.Second
)

// elect runs fn while this replica holds the Lease; the election runs in a
// goroutine of wg until ctx is done. Losing the Lease reports ErrLostLease
// (the controller is never restarted in the same process).
func elect(ctx context.Context, wg *sync.WaitGroup, o Options, core kubernetes.Interface, log *slog.Logger, fn func(context.Context), errs chan<- error) error {
	id := identity(o.Identity, os.Hostname, time.Now())
	le, err := leaderelection.NewLeaderElector(leaseConfig(o, core, id, leaderelection.LeaderCallbacks{
		OnStartedLeading: func(ctx context.Context) {
			log.Info("leading", "lease", o.Namespace+"/"+o.LeaseName, "identity", id)
			fn(ctx)
		},
		OnStoppedLeading: func() {
			if ctx.Err() == nil {
				errs <- fmt.Errorf("%w %s/%s", ErrLostLease, o.Namespace, o.LeaseName)
			}
		},
		OnNewLeader: func(who string) {
			if who != id {
				log.Info("standing by", "leader", who)
			}
		},
	}))
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	wg.Go(func() {
		le.Run(ctx) // returns when ctx is done or the Lease is lost
		if ctx.Err() != nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaseRemoveTimeout)
			defer cancel()
			if err := removeReleasedLease(rctx, core, o.Namespace, o.LeaseName); err != nil {
				log.Warn("removing the released Lease on the way out", "lease", o.Namespace+"/"+o.LeaseName, "err", err)
			}
		}
	})
	return nil
}

// leaseRemoveTimeout bounds the Lease's removal on the way out.
const leaseRemoveTimeout = 5 * time.Second

// removeReleasedLease deletes the Lease ns/name if no replica holds it
// (the last leader released it on its way out), and only that version of
// it: a standby that took it over in between keeps it, and removes it on
// its own way out. So when every replica stops (helm uninstall), no Lease
// is left behind.
func removeReleasedLease(ctx context.Context, core kubernetes.Interface, ns, name string) error {
	api := core.CoordinationV1().Leases(ns)
	l, err := api.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	case l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "":
		return nil
	}
	rv := l.ResourceVersion
	err = api.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// identity is this replica's name in the Lease: given, or hostname_nanos
// so that two replicas on one host still differ.
func identity(given string, hostname func() (string, error), now time.Time) string {
	if given != "" {
		return given
	}
	host, _ := hostname()
	return fmt.Sprintf("%s_%d", host, now.UnixNano())
}

// leaseConfig is the election of o's Lease, o.Namespace/o.LeaseName, as
// id, with o's timing or the defaults. It releases the Lease on the way
// out, so that a standby takes over at once.
func leaseConfig(o Options, core kubernetes.Interface, id string, cb leaderelection.LeaderCallbacks) leaderelection.LeaderElectionConfig {
	or := func(d, def time.Duration) time.Duration {
		if d == 0 {
			return def
		}
		return d
	}
	return leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: o.Namespace, Name: o.LeaseName},
			Client:     core.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: id},
		},
		LeaseDuration:   or(o.LeaseDuration, defaultLeaseDuration),
		RenewDeadline:   or(o.RenewDeadline, defaultRenewDeadline),
		RetryPeriod:     or(o.RetryPeriod, defaultRetryPeriod),
		ReleaseOnCancel: true,
		Name:            o.LeaseName,
		Callbacks:       cb,
	}
}
