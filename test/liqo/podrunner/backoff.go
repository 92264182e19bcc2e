package podrunner

import "time"

// The crash-loop back-off, the kubelet's values: restarting a crashing
// container at once, then after 10 s doubling to 5 min, spares the node a
// busy loop without keeping a fixed container down for long. A container
// that ran for backoffReset has recovered and starts the sequence over.
const (
	backoffInitial = 10 * time.Second
	backoffMax     = 5 * time.Minute
	backoffReset   = 10 * time.Minute
)

// Backoff is a container's restart back-off. Its zero value restarts at
// once.
type Backoff struct {
	// Level counts the restarts since the container last ran for
	// backoffReset.
	Level int
}

// Delay is how long after the container's exit its next start waits.
func (b Backoff) Delay() time.Duration {
	if b.Level == 0 {
		return 0
	}
	d := backoffInitial
	for i := 1; i < b.Level && d < backoffMax; i++ {
		d *= 2
	}
	return min(d, backoffMax)
}

// Exited returns the back-off after a run that lasted ran, before the
// restart it delays.
func (b Backoff) Exited(ran time.Duration) Backoff {
	if ran >= backoffReset {
		return Backoff{}
	}
	return b
}

// Restarted returns the back-off after a restart.
func (b Backoff) Restarted() Backoff { return Backoff{Level: b.Level + 1} }
