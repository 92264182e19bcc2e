package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/vishvananda/netlink"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/liqo-relay/relay/test/liqo/tools/internal/vxlanlink"
)

// withLinks opens a netlink handle in the process's network namespace,
// runs body with the Links on it, and afterwards removes the devices the
// stand-in made there unless keep is set.
func withLinks(log *slog.Logger, keep bool, body func(*vxlanlink.Links) error) (err error) {
	h, err := netlink.NewHandle()
	if err != nil {
		return fmt.Errorf("opening netlink: %w", err)
	}
	defer h.Close()
	links := vxlanlink.New(h, log)
	defer func() {
		if keep {
			log.Info("leaving tunnel ends in place (--standin-keep-links)")
			return
		}
		removed, cerr := links.RemoveOwned()
		log.Info("removed tunnel ends", "devices", removed)
		if cerr != nil {
			err = errors.Join(err, fmt.Errorf("removing tunnel ends: %w", cerr))
		}
	}()
	return body(links)
}

// startManager runs mgr until ctx ends. A cancelled ctx is a normal stop.
func startManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.Start(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("running the manager: %w", err)
	}
	return nil
}
