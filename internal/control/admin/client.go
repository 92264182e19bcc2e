package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/liqo-relay/relay/internal/core/status"
)

// ErrNoRelay is wrapped by FetchStatus and FetchPing when nothing answers on
// the admin address.
var ErrNoRelay = errors.New("no relay answering")

const (
	// maxResponse bounds what the client reads from the admin server.
	maxResponse = 16 << 20
	// defaultTimeout applies when the caller's context has no deadline, so
	// a wedged relay cannot hang the command forever. It exceeds the
	// server's own bound on a ping (pingTimeout).
	defaultTimeout = 15 * time.Second
)

// ErrRateLimited is wrapped by FetchPing when the relay refuses a ping
// because too many came in a short time.
var ErrRateLimited = errors.New("too many pings")

// Client talks to the admin server of a running relay.
type Client struct {
	// Addr is "host:port" or an http:// URL.
	Addr string
	// Token, when not empty, is sent as "Authorization: Bearer TOKEN".
	Token string
}

// FetchStatus asks the relay at addr ("host:port" or an http:// URL) for its
// status, without a token. See Client.Status.
func FetchStatus(ctx context.Context, addr string) (status.Status, error) {
	return Client{Addr: addr}.Status(ctx)
}

// FetchPing asks the relay at addr to probe every path of peer now, without
// a token. See Client.Ping.
func FetchPing(ctx context.Context, addr, peer string) ([]status.PingResult, error) {
	return Client{Addr: addr}.Ping(ctx, peer)
}

// Status asks the relay for its status. Without a deadline on ctx it gives
// up after 15 s. When nothing listens there the error reads "no relay
// answering on ADDR: is it running? (--admin)" and wraps ErrNoRelay and the
// dial error; a missing or wrong token wraps ErrUnauthorized.
func (c Client) Status(ctx context.Context) (status.Status, error) {
	var s status.Status
	addr := c.Addr
	body, err := c.get(ctx, "/status", nil)
	if err != nil {
		return status.Status{}, err
	}
	if err := json.Unmarshal(body, &s); err != nil {
		return status.Status{}, fmt.Errorf("decoding status from %s: %w", addr, err)
	}
	return s, nil
}

// Ping asks the relay to probe every path of peer now. For a peer the relay
// does not know the error wraps ErrUnknownPeer; when the relay's rate limit
// refuses it, ErrRateLimited.
func (c Client) Ping(ctx context.Context, peer string) ([]status.PingResult, error) {
	return c.PingWithin(ctx, peer, 0)
}

// PingWithin is Ping with the relay waiting at most timeout for the
// answers (0: MaxPingWait); a path that has not answered by then reads
// "timeout". A timeout above MaxPingWait is refused by the relay.
func (c Client) PingWithin(ctx context.Context, peer string, timeout time.Duration) ([]status.PingResult, error) {
	addr := c.Addr
	q := url.Values{"peer": {peer}}
	if timeout > 0 {
		q.Set("timeout", timeout.String())
	}
	body, err := c.get(ctx, "/ping", q)
	if err != nil {
		return nil, err
	}
	var r []status.PingResult
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("decoding ping results from %s: %w", addr, err)
	}
	return r, nil
}

// noRelayError is the error for an admin address where nothing answers.
type noRelayError struct {
	addr string
	err  error
}

func (e *noRelayError) Error() string {
	return fmt.Sprintf("no relay answering on %s: is it running? (--admin)", e.addr)
}

func (e *noRelayError) Unwrap() []error { return []error{ErrNoRelay, e.err} }

// get performs GET path on the admin server and returns the body of a 200
// answer; other answers become errors carrying the server's message.
func (c Client) get(ctx context.Context, path string, q url.Values) ([]byte, error) {
	addr := c.Addr
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultTimeout)
		defer cancel()
	}
	base := addr
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("admin address %q: want host:port", addr)
	}
	u.Path = path
	u.RawQuery = q.Encode()

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("admin request: %w", err)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	// A private transport: no proxy from the environment (the admin
	// address is local), and no idle connections left behind.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return nil, &noRelayError{addr: addr, err: err}
		}
		return nil, fmt.Errorf("admin request to %s: %w", addr, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return nil, fmt.Errorf("reading %s from %s: %w", path, addr, err)
	}
	if resp.StatusCode == http.StatusOK {
		return body, nil
	}

	msg := strings.TrimSpace(string(body))
	var eb errorBody
	if json.Unmarshal(body, &eb) == nil && eb.Error != "" {
		msg = eb.Error
	}
	// A JSON error body tells "no such peer" from "no such endpoint" (an
	// older relay), which answers 404 in plain text.
	switch {
	case resp.StatusCode == http.StatusNotFound && path == "/ping" && eb.Error != "":
		return nil, fmt.Errorf("relay at %s: %w %q", addr, ErrUnknownPeer, q.Get("peer"))
	case resp.StatusCode == http.StatusUnauthorized:
		return nil, fmt.Errorf("relay at %s: %s: %w", addr, path, ErrUnauthorized)
	case resp.StatusCode == http.StatusTooManyRequests:
		return nil, fmt.Errorf("relay at %s: %w: retry in %s s", addr, ErrRateLimited, resp.Header.Get("Retry-After"))
	}
	return nil, fmt.Errorf("relay at %s: %s %s: %s", addr, path, resp.Status, msg)
}
