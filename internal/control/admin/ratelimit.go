package admin

import (
	"sync"
	"time"
)

// The /ping rate limit. A ping sends one probe on every path of a peer; an
// operator runs it by hand, a script a few times in a row. Five at once and
// one a second after that is plenty for both, and bounds the traffic anyone
// with access to the admin port can make the relay send.
const (
	pingBurst    = 5
	pingInterval = time.Second // one more ping allowed per interval
)

// tokenBucket is a rate limiter that takes time as an input. It is safe
// for concurrent use.
type tokenBucket struct {
	burst    float64
	interval time.Duration

	mu     sync.Mutex
	tokens float64
	last   time.Time // zero until the first take
}

func newTokenBucket(burst int, interval time.Duration) *tokenBucket {
	return &tokenBucket{burst: float64(burst), interval: interval, tokens: float64(burst)}
}

// take spends one token at now if there is one. Otherwise it reports how
// long until there will be.
func (b *tokenBucket) take(now time.Time) (ok bool, wait time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.last.IsZero() && now.After(b.last) {
		b.tokens += float64(now.Sub(b.last)) / float64(b.interval)
		b.tokens = min(b.tokens, b.burst)
	}
	if b.last.IsZero() || now.After(b.last) {
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) * float64(b.interval))
}
