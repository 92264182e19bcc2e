package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/liqotech/liqo/pkg/utils/ipc"
)

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// gatewaySide plays Liqo's gateway container with Liqo's own server code:
// wait for all named guests, then send each its start message.
func gatewaySide(t *testing.T, path string, guests ...string) <-chan error {
	t.Helper()
	l, err := ipc.CreateListenSocket(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	ch := make(chan error, 1)
	go func() {
		conns := ipc.NewGuestConnections(guests)
		if err := ipc.WaitAllGuestsConnections(conns, l); err != nil {
			ch <- err
			return
		}
		ch <- ipc.StartAllGuestsConnections(conns)
	}()
	return ch
}

func TestGuestHandshake(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leader.sock")
	done := gatewaySide(t, path, "geneve")
	conn, err := guestHandshake(context.Background(), path, "geneve", quietLog())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := <-done; err != nil {
		t.Fatalf("gateway side: %v", err)
	}
}

// The gateway container waits for every guest it was told about: with
// wireguard missing it never sends a start message, so the guest can only
// end when its context does.
func TestGuestHandshakeWaitsAndStops(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leader.sock")
	done := gatewaySide(t, path, "wireguard", "geneve")
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() {
		_, err := guestHandshake(ctx, path, "geneve", quietLog())
		res <- err
	}()
	cancel()
	if err := <-res; !errors.Is(err, context.Canceled) {
		t.Fatalf("after cancel: %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("gateway side finished without wireguard: %v", err)
	default:
	}
}

// A start message for another container is refused, as by Liqo's guests.
func TestGuestHandshakeWrongName(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leader.sock")
	l, err := ipc.CreateListenSocket(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 64)
		_, _ = c.Read(buf)
		_, _ = c.Write([]byte(ipc.ForgeStartMessage("wireguard")))
	}()
	if _, err := guestHandshake(context.Background(), path, "geneve", quietLog()); err == nil {
		t.Fatal("accepted a start message for wireguard")
	}
}
