package wanem

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Settings is what one direction of a link does to the frames crossing it.
// The zero value is a perfect wire: no delay, no loss, no limit.
type Settings struct {
	// Delay is added to every frame; Jitter spreads it uniformly over
	// [Delay-Jitter, Delay+Jitter] (clamped at zero), without reordering.
	Delay  Duration `json:"delay"`
	Jitter Duration `json:"jitter"`
	// Loss drops each frame independently with this probability (0..1).
	Loss float64 `json:"loss"`
	// Burst, when set, adds bursty loss from a Gilbert-Elliott channel.
	Burst *GilbertElliott `json:"burst,omitempty"`
	// Rate limits the direction to this many bits per second (Ethernet
	// frame bytes, no preamble or gap); 0 is unlimited.
	Rate Rate `json:"rate"`
	// Backlog bounds the frames waiting for the rate limiter, as time at
	// Rate: a frame that would wait longer is dropped (a tail-drop queue).
	// 0 means DefaultBacklog.
	Backlog Duration `json:"backlog"`
	// Cut drops every frame: the link is down.
	Cut bool `json:"cut"`
}

// DefaultBacklog is the default rate-limiter queue: 50 ms at the link
// rate, in the range of a WAN router's buffer, enough for TCP to fill the
// pipe without turning the limiter into bufferbloat that hides the delay
// under test.
const DefaultBacklog = 50 * time.Millisecond

// GilbertElliott is the two-state bursty loss channel: a Good and a Bad
// state, P the probability per frame of moving Good→Bad and R of moving
// Bad→Good; a frame is lost with probability LossGood in Good and LossBad
// in Bad. The mean burst (time in Bad) is 1/R frames; with LossGood=0 and
// LossBad=1 the long-run loss is P/(P+R).
type GilbertElliott struct {
	P        float64 `json:"p"`
	R        float64 `json:"r"`
	LossGood float64 `json:"lossGood"`
	LossBad  float64 `json:"lossBad"`
}

// Validate reports every problem with s at once.
func (s Settings) Validate() error {
	var errs []error
	if s.Delay < 0 || s.Jitter < 0 || s.Backlog < 0 {
		errs = append(errs, errors.New("delay, jitter and backlog must not be negative"))
	}
	if s.Jitter > s.Delay {
		errs = append(errs, fmt.Errorf("jitter %v exceeds delay %v", time.Duration(s.Jitter), time.Duration(s.Delay)))
	}
	if !prob(s.Loss) {
		errs = append(errs, fmt.Errorf("loss %v is not a probability", s.Loss))
	}
	if b := s.Burst; b != nil {
		for _, f := range []struct {
			name string
			v    float64
		}{{"p", b.P}, {"r", b.R}, {"lossGood", b.LossGood}, {"lossBad", b.LossBad}} {
			if !prob(f.v) {
				errs = append(errs, fmt.Errorf("burst.%s %v is not a probability", f.name, f.v))
			}
		}
		if b.R == 0 && b.P > 0 {
			errs = append(errs, errors.New("burst.r is 0: the bad state would never end"))
		}
	}
	return errors.Join(errs...)
}

func prob(p float64) bool { return p >= 0 && p <= 1 }

// Duration is a time.Duration written as Go duration text ("10ms") in JSON.
type Duration time.Duration

// MarshalText writes d as Go duration text.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads Go duration text; "0" is zero.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Rate is a bit rate in bits per second, written like tc does: "100mbit",
// "1gbit", "500kbit", "64000bit" or a bare number of bits per second.
type Rate uint64

var rateUnits = []struct {
	suffix string
	mult   uint64
}{{"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}, {"bit", 1}}

// ParseRate reads a rate like "100mbit"; "0" and "" are unlimited.
func ParseRate(s string) (Rate, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return 0, nil
	}
	mult := uint64(1)
	for _, u := range rateUnits {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("rate %q: want a number with an optional gbit, mbit, kbit or bit", s)
	}
	return Rate(v * float64(mult)), nil
}

// String writes r in the largest unit that keeps it whole.
func (r Rate) String() string {
	if r == 0 {
		return "0"
	}
	for _, u := range rateUnits {
		if uint64(r)%u.mult == 0 {
			return strconv.FormatUint(uint64(r)/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatUint(uint64(r), 10) + "bit"
}

// MarshalText writes r as String does.
func (r Rate) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText reads r as ParseRate does.
func (r *Rate) UnmarshalText(b []byte) error {
	v, err := ParseRate(string(b))
	if err != nil {
		return err
	}
	*r = v
	return nil
}
