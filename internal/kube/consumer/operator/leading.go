package operator

import (
	"context"
	"sync"
)

// runOnce runs the controller at most once. client-go calls
// OnStartedLeading in a goroutine of its own, so Run calls stop on its way
// out: stop waits for a controller that started, and a controller not yet
// started by then never starts.
type runOnce struct {
	mu                sync.Mutex
	started, stopping bool
	done              chan struct{} // closed when the started fn returns
}

// run calls fn unless fn ran or stop was called before.
func (r *runOnce) run(fn func()) {
	r.mu.Lock()
	if r.started || r.stopping {
		r.mu.Unlock()
		return
	}
	r.started = true
	r.done = make(chan struct{})
	r.mu.Unlock()
	defer close(r.done)
	fn()
}

// stop keeps fn from starting, calls cancel (which ends a running fn's
// context) and waits until a started fn returned.
func (r *runOnce) stop(cancel context.CancelFunc) {
	r.mu.Lock()
	r.stopping = true
	started, done := r.started, r.done
	r.mu.Unlock()
	cancel()
	if started {
		<-done
	}
}

// controller is what lead needs of connect.Controller.
type controller interface {
	// Synced is closed once the controller's caches have synced.
	Synced() <-chan struct{}
	// Run runs the controller until ctx is done.
	Run(ctx context.Context) error
}

// lead runs ctl until ctx is done, calls onSynced once its caches have
// synced, and reports a failed Run on errs. It returns when both Run and
// the wait for the caches have ended.
func lead(ctx context.Context, ctl controller, onSynced func(), errs chan<- error) {
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-ctl.Synced():
			onSynced()
		case <-ctx.Done():
		}
	}()
	defer func() { <-watched }()
	if err := ctl.Run(ctx); err != nil {
		errs <- err
	}
}
