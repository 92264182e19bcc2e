package agent

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Run serves until ctx is done, then removes everything the relay created
// (devices, routes, rules, sockets) and returns. Readiness drops first.
func (a *Agent) Run(ctx context.Context) error {
	if !a.running.CompareAndSwap(false, true) {
		return errors.New("agent: Run called twice")
	}
	defer close(a.stopped)
	defer a.shutdown()
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := a.admin.start(actx); err != nil {
		return err // names the server and its address
	}
	stop := a.startServices(ctx)
	defer stop()
	a.ready.Store(true)
	a.log.Info("relay up", "name", a.cfg.Name, "mode", a.cfg.Mode, "listenPort", a.cfg.ListenPort, "peers", len(a.cfg.Peers))
	a.serve(ctx)
	return nil
}

// startServices starts the goroutines beside the owner loop: the SOCKS5
// proxy, the DNS watcher and the DNS responder, each until ctx is done.
// stop ends them and returns once they all have.
func (a *Agent) startServices(ctx context.Context) (stop func()) {
	var wg sync.WaitGroup
	sctx, scancel := context.WithCancel(ctx)
	if a.socks != nil {
		wg.Go(func() {
			if err := a.dp.proxy.Serve(sctx, a.socks); err != nil && sctx.Err() == nil {
				a.log.Error("SOCKS5 proxy stopped", "err", err)
			}
		})
		a.log.Info("SOCKS5 proxy into the mesh", "addr", a.socks.Addr().String())
	}
	wctx, wcancel := context.WithCancel(ctx) // the Watcher ends with it
	wg.Go(func() { a.dns.Run(wctx) })
	if a.dnsSrv != nil {
		wg.Go(func() {
			if err := a.dnsSrv.Run(wctx); err != nil {
				a.log.Error("DNS responder stopped", "err", err)
			}
		})
	}
	return func() {
		wcancel()
		scancel()
		wg.Wait()
	}
}

// serve is the owner loop: one select over probe replies, reloads, calls,
// housekeeping and the monitor's deadline, each followed by a step. It
// returns, readiness dropped, when ctx is done.
func (a *Agent) serve(ctx context.Context) {
	timer := time.NewTimer(0) // the first step at once
	defer timer.Stop()
	house := time.NewTicker(housekeepingInterval)
	defer house.Stop()
	lastRules := a.clock.Now()
	var plan wakePlan // when the timer is due; only a timer wake is measured against it
	for {
		var late time.Duration
		timerWake := false
		select {
		case <-ctx.Done():
			a.ready.Store(false)
			return
		case r := <-a.replyc:
			a.onReply(r)
		case req := <-a.reloadc:
			req.done <- a.reload(req)
		case fn := <-a.callc:
			fn()
		case <-house.C:
			a.wakes.house.Add(1)
			now := a.clock.Now()
			a.housekeep(now)
			if now.Sub(lastRules) >= rulesCheckInterval {
				lastRules = now
				a.checkRules()
			}
		case <-timer.C:
			late, timerWake = plan.late(a.clock.Now()), true
			a.wakes.timer.Add(1)
		}
		a.drainReplies()
		now := a.clock.Now()
		if timerWake {
			a.reportLateness(late, now)
		}
		a.step(now)
		// The sleep counts from the end of the step: its own work is time
		// the relay ran, not lateness (wakePlan). Since Go 1.23 Reset and
		// Stop leave no stale tick in timer.C.
		armed := a.clock.Now()
		if d, ok := sleepFor(armed, a.eng.NextDeadline()); ok {
			timer.Reset(d)
			plan.arm(armed, d)
		} else {
			timer.Stop()
			plan = wakePlan{}
		}
	}
}

// sleepFor returns how long the owner loop may sleep before the monitor's
// next deadline, and false when there is none (no paths): then only
// events, requests and housekeeping wake it.
func sleepFor(now, deadline time.Time) (time.Duration, bool) {
	if deadline.IsZero() {
		return 0, false
	}
	return min(max(deadline.Sub(now), minTimer), maxTimer), true
}

const (
	// housekeepingInterval paces passive evidence, counters and metrics.
	// It matches the default probe interval: finer would cost CPU for
	// nothing, coarser would delay passive evidence past one probe.
	housekeepingInterval = 100 * time.Millisecond
	// rulesCheckInterval paces the repair of our policy rules when another
	// agent (Liqo's route monitor) rewrites them.
	rulesCheckInterval = time.Second
	// minTimer and maxTimer bound the owner loop's sleep: never spin, never
	// oversleep a deadline by more than the housekeeping interval.
	minTimer = time.Millisecond
	maxTimer = housekeepingInterval
)

// drainReplies handles every reply already queued before the machines
// step: when the owner goroutine was held up (a loaded machine), the
// replies that arrived meanwhile must count before any deadline does, or a
// healthy path would be declared down for our own delay.
func (a *Agent) drainReplies() {
	for {
		select {
		case r := <-a.replyc:
			a.onReply(r)
		default:
			return
		}
	}
}

// shutdown tears the data plane down. It runs once, on Run's way out.
func (a *Agent) shutdown() {
	a.closeMu.Lock()
	defer a.closeMu.Unlock()
	if a.closed {
		return
	}
	a.closed = true
	a.ready.Store(false)
	a.admin.close()
	if a.dnsSrv != nil {
		a.dnsSrv.Close() // Run's server has stopped it already
	}
	if a.socks != nil {
		_ = a.socks.Close() // Run's SOCKS5 server has closed it already
	}
	if err := a.dp.close(); err != nil {
		a.log.Error("cleaning up", "err", err)
	}
	a.log.Info("relay stopped")
}

// Close releases an agent that was built but never Run.
func (a *Agent) Close() {
	if a.running.Load() {
		return
	}
	a.shutdown()
}

// errNotRunning is returned by calls into an agent whose Run has ended.
var errNotRunning = errors.New("agent: not running")

// do runs fn in the owner goroutine and waits for it.
func (a *Agent) do(ctx context.Context, fn func()) error {
	done := make(chan struct{})
	call := func() { fn(); close(done) }
	select {
	case a.callc <- call:
	case <-ctx.Done():
		return ctx.Err()
	case <-a.stopped:
		return errNotRunning
	}
	<-done
	return nil
}
