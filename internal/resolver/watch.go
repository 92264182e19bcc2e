package resolver

import (
	"context"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/refresh"
)

// Result is where a watched name stands.
type Result struct {
	Host  string
	State refresh.State
	Addr  netip.Addr // valid when State is Resolved or Stale
	Err   error      // the last lookup's failure
}

// WatcherOptions are a Watcher's collaborators.
type WatcherOptions struct {
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// OnChange is called, from Run's goroutine or from Resolve's caller and
	// never with the Watcher's lock held, when a name's address or state
	// changes. It may block until ctx (Run's or Resolve's) is done.
	OnChange func(ctx context.Context, r Result)
	// OnLookup is called after every lookup with its result label
	// (ResultOf).
	OnLookup func(result string)
}

// Watcher keeps a set of names resolved. Names join by Resolve and leave
// by Retain; Run refreshes them.
type Watcher struct {
	s    refresh.Settings
	tmo  time.Duration
	opts WatcherOptions
	wake chan struct{}

	mu    sync.Mutex
	look  Lookuper
	names map[string]*entry
}

type entry struct {
	m        *refresh.Name
	inflight bool
}

// NewWatcher returns a Watcher that looks names up with look on the
// schedule of the dns settings s.
func NewWatcher(s config.DNS, look Lookuper, opts WatcherOptions) *Watcher {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.OnChange == nil {
		opts.OnChange = func(context.Context, Result) {}
	}
	if opts.OnLookup == nil {
		opts.OnLookup = func(string) {}
	}
	return &Watcher{
		s:    Settings(s),
		tmo:  LookupTimeout(s),
		opts: opts,
		wake: make(chan struct{}, 1),
		look: look, names: map[string]*entry{},
	}
}

// Settings are the refresh settings of the dns settings s.
func Settings(s config.DNS) refresh.Settings {
	return refresh.Settings{MinTTL: s.MinTTL, MaxTTL: s.MaxTTL, Grace: s.Grace, RetryMin: s.RetryMin, RetryMax: s.RetryMax}
}

// LookupTimeout bounds one lookup of a name: every search name, both
// families, and a TCP retry may each take dns.timeout; four of them cover
// the usual cases of a pod (search list of three) without letting a dead
// resolver hold a lookup for minutes.
func LookupTimeout(s config.DNS) time.Duration { return 4 * s.Timeout }

// SetLookuper replaces the lookup function for later lookups.
func (w *Watcher) SetLookuper(l Lookuper) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.look = l
}

// Resolve looks host up now, on the caller's goroutine (bounded by ctx and
// the lookup timeout), feeds the answer to host's schedule, watching host
// from now on, and returns where host stands.
func (w *Watcher) Resolve(ctx context.Context, host string) Result {
	w.mu.Lock()
	e := w.entry(host)
	look := w.look
	w.mu.Unlock()
	lctx, cancel := context.WithTimeout(ctx, w.tmo)
	a, err := look.Lookup(lctx, host)
	cancel()
	w.opts.OnLookup(ResultOf(err))
	w.mu.Lock()
	changed := w.feed(e, a, err)
	r := result(host, e.m)
	w.mu.Unlock()
	if changed {
		w.opts.OnChange(ctx, r)
	}
	w.poke()
	return r
}

// entry returns host's entry, creating it. w.mu is held.
func (w *Watcher) entry(host string) *entry {
	e, ok := w.names[host]
	if !ok {
		e = &entry{m: refresh.New(w.s)}
		w.names[host] = e
	}
	return e
}

// feed gives a lookup's outcome to e's schedule. w.mu is held.
func (w *Watcher) feed(e *entry, a Answer, err error) bool {
	now := w.opts.Now()
	if err != nil {
		return e.m.Fail(now, err)
	}
	return e.m.Answer(now, a.Addrs, a.TTL)
}

// Get returns where host stands; false when it is not watched.
func (w *Watcher) Get(host string) (Result, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := w.names[host]
	if !ok {
		return Result{}, false
	}
	return result(host, e.m), true
}

// Retain stops watching every name not in keep.
func (w *Watcher) Retain(keep map[string]bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for h := range w.names {
		if !keep[h] {
			delete(w.names, h)
		}
	}
}

func result(host string, m *refresh.Name) Result {
	return Result{Host: host, State: m.State(), Addr: m.Addr(), Err: m.Err()}
}

func (w *Watcher) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// lookupDone is the outcome of a background lookup.
type lookupDone struct {
	host string
	e    *entry
	a    Answer
	err  error
}

// Run refreshes the watched names until ctx is done, then waits for the
// lookups it started.
func (w *Watcher) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	done := make(chan lookupDone)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-w.wake:
		case d := <-done:
			w.opts.OnLookup(ResultOf(d.err))
			w.mu.Lock()
			d.e.inflight = false
			// A name Retain dropped meanwhile is no one's concern.
			changed := w.feed(d.e, d.a, d.err) && w.names[d.host] == d.e
			r := result(d.host, d.e.m)
			w.mu.Unlock()
			if changed {
				w.report(ctx, r, d.err)
			}
		}
		now := w.opts.Now()
		var changes []Result
		var next time.Time
		w.mu.Lock()
		for host, e := range w.names {
			if e.m.Tick(now) {
				changes = append(changes, result(host, e.m))
			}
			if e.inflight {
				continue
			}
			if e.m.Due(now) {
				e.inflight = true
				look := w.look
				wg.Go(func() {
					lctx, cancel := context.WithTimeout(ctx, w.tmo)
					a, err := look.Lookup(lctx, host)
					cancel()
					select {
					case done <- lookupDone{host, e, a, err}:
					case <-ctx.Done():
					}
				})
				continue
			}
			if n := e.m.Next(); next.IsZero() || n.Before(next) {
				next = n
			}
		}
		w.mu.Unlock()
		for _, r := range changes {
			w.report(ctx, r, r.Err)
		}
		if next.IsZero() {
			timer.Stop()
		} else {
			timer.Reset(max(next.Sub(now), time.Millisecond))
		}
	}
}

func (w *Watcher) report(ctx context.Context, r Result, err error) {
	w.opts.Logger.Info("endpoint name", "host", r.Host, "state", r.State.String(), "addr", r.Addr, "err", err)
	w.opts.OnChange(ctx, r)
}
