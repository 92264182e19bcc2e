package admin

import (
	"context"
	"errors"

	"github.com/liqo-relay/relay/internal/core/status"
)

// ErrUnknownPeer is wrapped by Source.Ping for a peer that is not
// configured; the server answers 404 and FetchPing wraps it again.
var ErrUnknownPeer = errors.New("unknown peer")

// Source is what the admin server shows; the agent implements it. Every
// method may be called concurrently from request goroutines and must not
// block on the data path.
type Source interface {
	// Status returns a snapshot, or an error when none can be had (the
	// relay is stopping, or did not answer before ctx was done); the server
	// answers 503 with that error. The server does not modify the snapshot.
	Status(ctx context.Context) (status.Status, error)
	// Ready reports whether the configuration is applied and the device is
	// up, and if not, why. It must not depend on peer reachability.
	Ready() (ready bool, reason string)
	// Ping probes every path of the peer once, now, and returns one result
	// per path. It returns when all probes are answered or timed out, or
	// when ctx is done. For a peer that is not configured the error wraps
	// ErrUnknownPeer.
	Ping(ctx context.Context, peer string) ([]status.PingResult, error)
}
