package netstack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// SOCKS5Options configures the proxy ServeSOCKS5 serves.
type SOCKS5Options struct {
	// Credentials, when not nil, require every client to authenticate
	// with one of these username/password pairs (RFC 1929); nil means no
	// authentication.
	Credentials *SOCKS5Credentials
	// MaxConns caps the concurrent client connections; 0 means 256. A
	// connection over the cap is answered "no acceptable methods" and
	// closed at once.
	MaxConns int
	// MaxUDPAssociations caps the concurrent UDP ASSOCIATE requests, each
	// also a connection; 0 means 64. One over the cap gets "general
	// failure".
	MaxUDPAssociations int
}

const (
	nsDefaultSOCKSMaxConns  = 256
	nsDefaultSOCKSMaxAssocs = 64

	// Pauses after a failed Accept, as net/http.Server takes them: 5 ms,
	// doubling up to 1 s, back to the start after a success. Accept fails
	// mostly for want of file descriptors (EMFILE, ENFILE), which other
	// connections closing will free; retrying at once would spin.
	socksAcceptMinDelay = 5 * time.Millisecond
	socksAcceptMaxDelay = time.Second
	// socksRefuseTimeout bounds the write of the refusal to a connection
	// over the cap, which the accept loop does itself.
	socksRefuseTimeout = time.Second
)

func (o SOCKS5Options) withDefaults() SOCKS5Options {
	if o.MaxConns <= 0 {
		o.MaxConns = nsDefaultSOCKSMaxConns
	}
	if o.MaxUDPAssociations <= 0 {
		o.MaxUDPAssociations = nsDefaultSOCKSMaxAssocs
	}
	return o
}

// ServeSOCKS5 serves SOCKS5 (RFC 1928) on ln, as Options.SOCKS5
// configures it: CONNECT and UDP ASSOCIATE, both dialling into the mesh
// through DialContext. Domain names are accepted only when they are IP
// literals; there is no resolver.
//
// A failed Accept (EMFILE, ENFILE, ECONNABORTED, a timeout, or any other
// error but a closed listener) is logged, counted and retried after a
// pause of 5 ms doubling up to 1 s. ServeSOCKS5 returns nil when ctx is
// done, after closing ln and every connection it opened; it returns an
// error wrapping net.ErrClosed when someone else closes ln.
func (n *Netstack) ServeSOCKS5(ctx context.Context, ln net.Listener) error {
	return n.serveSOCKS5(ctx, ln, socksWait)
}

// socksWait sleeps for d, or until ctx is done; it reports whether the
// whole pause elapsed.
func socksWait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// socksNextDelay returns the pause after an Accept failure that followed a
// pause of prev (0 after a success).
func socksNextDelay(prev time.Duration) time.Duration {
	if prev == 0 {
		return socksAcceptMinDelay
	}
	return min(2*prev, socksAcceptMaxDelay)
}

// serveSOCKS5 is ServeSOCKS5 with the pause after an Accept failure taken
// by wait, which tests replace.
func (n *Netstack) serveSOCKS5(ctx context.Context, ln net.Listener, wait func(context.Context, time.Duration) bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex
		conns = map[net.Conn]struct{}{}
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() { // closes everything on ctx done; exits when Serve returns
		defer wg.Done()
		<-ctx.Done()
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		conns = nil
		mu.Unlock()
	}()
	var (
		err   error
		delay time.Duration
	)
	for {
		var c net.Conn
		c, err = ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				break
			}
			n.stats.socksAcceptErrors.Add(1)
			delay = socksNextDelay(delay)
			n.log.Warn("socks5: accept failed, retrying", "err", err, "after", delay)
			if !wait(ctx, delay) {
				break
			}
			continue
		}
		delay = 0
		if n.stats.socksConns.Add(1) > int64(n.socks.MaxConns) {
			n.stats.socksConns.Add(-1)
			n.stats.socksRefusedLimit.Add(1)
			n.log.Debug("socks5: connection refused, too many open", "client", c.RemoteAddr(), "max", n.socks.MaxConns)
			socksRefuseBusy(c)
			continue
		}
		mu.Lock()
		if conns == nil {
			mu.Unlock()
			n.stats.socksConns.Add(-1)
			c.Close()
			break
		}
		conns[c] = struct{}{}
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				// Free the place before closing, so that a client that
				// sees the close may connect again at once.
				mu.Lock()
				delete(conns, c)
				mu.Unlock()
				n.stats.socksConns.Add(-1)
				c.Close()
			}()
			if err := n.serveSOCKSConn(ctx, c); err != nil {
				n.log.Debug("socks5: connection ended", "client", c.RemoteAddr(), "err", err)
			}
		}()
	}
	stopped := ctx.Err() != nil
	cancel()
	wg.Wait()
	if stopped {
		return nil
	}
	return fmt.Errorf("socks5: accept: %w", err)
}

// socksRefuseBusy answers a connection over the cap as a server that accepts
// none of the client's methods would (VER 0xFF), then closes it.
func socksRefuseBusy(c net.Conn) {
	c.SetWriteDeadline(time.Now().Add(socksRefuseTimeout))
	c.Write([]byte{socksVersion, socksMethodNoneOK})
	c.Close()
}
