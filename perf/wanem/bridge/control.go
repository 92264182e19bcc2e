package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/liqo-relay/relay/perf/wanem"
)

// Controller is what the control server drives; *Bridge is one.
type Controller interface {
	Set(dir string, s wanem.Settings) error
	Settings(dir string) (wanem.Settings, error)
	Stats() map[string]Stats
}

var _ Controller = (*Bridge)(nil)

// Handler serves the control API:
//
//	GET /settings          {"ab": Settings, "ba": Settings}
//	PUT /settings/{dir}    body: Settings; dir is ab or ba
//	GET /stats             {"ab": Stats, "ba": Stats}
func Handler(c Controller) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /settings", func(w http.ResponseWriter, _ *http.Request) {
		out := map[string]wanem.Settings{}
		for _, d := range []string{AB, BA} {
			s, err := c.Settings(d)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			out[d] = s
		}
		writeJSON(w, out)
	})
	mux.HandleFunc("PUT /settings/{dir}", func(w http.ResponseWriter, r *http.Request) {
		var s wanem.Settings
		dec := json.NewDecoder(io.LimitReader(r.Body, 1<<16))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			http.Error(w, "settings: "+err.Error(), http.StatusBadRequest)
			return
		}
		if err := c.Set(r.PathValue("dir"), s); err != nil {
			code := http.StatusBadRequest
			if errors.Is(err, ErrNoDirection) {
				code = http.StatusNotFound
			}
			http.Error(w, err.Error(), code)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, c.Stats())
	})
	return mux
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// Listen listens on a unix socket at path, replacing a stale socket file.
func Listen(path string) (net.Listener, error) {
	_ = os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	return ln, nil
}

// Serve serves Handler(c) on ln until ctx ends, then closes ln (which
// removes a unix socket's file).
func Serve(ctx context.Context, ln net.Listener, c Controller, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	srv := &http.Server{Handler: Handler(c), ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("control server: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("control server shutdown", "err", err)
	}
	<-done
	return nil
}

// Client talks to a Server over its unix socket.
type Client struct {
	hc *http.Client
}

// NewClient returns a client for the socket at path.
func NewClient(path string) *Client {
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}}
	return &Client{hc: &http.Client{Transport: tr, Timeout: 5 * time.Second}}
}

// Close releases idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// Settings returns both directions' settings.
func (c *Client) Settings(ctx context.Context) (map[string]wanem.Settings, error) {
	var out map[string]wanem.Settings
	return out, c.get(ctx, "/settings", &out)
}

// Stats returns both directions' counters.
func (c *Client) Stats(ctx context.Context) (map[string]Stats, error) {
	var out map[string]Stats
	return out, c.get(ctx, "/stats", &out)
}

// Set replaces one direction's settings.
func (c *Client) Set(ctx context.Context, dir string, s wanem.Settings) error {
	body, err := json.Marshal(s)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, "http://wanem/settings/"+dir, bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("wanem control: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("wanem control: set %s: %s: %s", dir, resp.Status, strings.TrimSpace(string(msg)))
	}
	return nil
}

func (c *Client) get(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://wanem"+path, nil)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("wanem control: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("wanem control: %s: %s: %s", path, resp.Status, strings.TrimSpace(string(msg)))
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("wanem control: %s: %w", path, err)
	}
	return nil
}
