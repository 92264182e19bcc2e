package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"github.com/liqotech/liqo/pkg/utils/ipc"
)

// defaultIPCSocket is where Liqo's gateway container listens for its guests
// (pkg/gateway/concurrent): an emptyDir shared by the pod's containers.
const defaultIPCSocket = "/ipc/leader.sock"

// guestHandshake is the guest side of Liqo's gateway IPC, with Liqo's own
// code: connect to the gateway container's socket, send our container name,
// and wait for "Start <name>", which the gateway container sends once its
// pod is the active replica. It returns the connection, which the caller
// keeps open until it exits, as Liqo's guests do.
//
// ipc.Connect retries for at most 30 s and does not see ctx; the wait for
// the start message ends when ctx does.
func guestHandshake(ctx context.Context, path, name string, log *slog.Logger) (net.Conn, error) {
	log.Info("connecting to the gateway container", "socket", path, "container", name)
	conn, err := ipc.Connect(path, name)
	if err != nil {
		return nil, fmt.Errorf("connecting to the gateway container at %s: %w", path, err)
	}
	done := make(chan error, 1)
	go func() { done <- ipc.WaitForStart(name, conn) }()
	select {
	case err := <-done:
		if err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("waiting for the gateway container's start message: %w", err)
		}
		log.Info("gateway container says start")
		return conn, nil
	case <-ctx.Done():
		_ = conn.Close() // ends the read in the goroutine
		<-done
		return nil, ctx.Err()
	}
}
