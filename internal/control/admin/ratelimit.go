package admin

import (
	"time"

	"golang.org/x/time/rate"
)

// The /ping rate limit. A ping sends one probe on every path of a peer; an
// operator runs it by hand, a script a few times in a row. Five at once and
// one a second after that is plenty for both, and bounds the traffic anyone
// with access to the admin port can make the relay send.
const (
	pingBurst    = 5
	pingInterval = time.Second // one more ping allowed per interval
)

// pingLimiter is the /ping token bucket; it takes time as an input.
type pingLimiter struct{ l *rate.Limiter }

func newPingLimiter(burst int, interval time.Duration) pingLimiter {
	return pingLimiter{rate.NewLimiter(rate.Every(interval), burst)}
}

// take spends one token at now if there is one. Otherwise it spends
// nothing and reports how long until there will be.
func (p pingLimiter) take(now time.Time) (ok bool, wait time.Duration) {
	r := p.l.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}
