//go:build linux

package netlink

import (
	"errors"
	"fmt"
	"log/slog"

	vnl "github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// CleanupStale removes what a crashed relay may have left in the current
// network namespace, before a new TUN is created: a TUN link named
// opts.Link, our policy rules (by signature, at any priority, plus any rule
// looking up opts.Table at opts.Priority) in both families, and every route
// in opts.Table. A link with that name that is not a TUN device is someone
// else's: it is left alone and ErrStaleLinkNotTUN is returned, after the
// rules and the table have been cleaned. Finding nothing to clean is not an
// error.
func CleanupStale(opts RouteOptions) error {
	if err := opts.Validate(); err != nil {
		return fmt.Errorf("route options: %w", err)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("component", "routes", "link", opts.Link, "table", opts.Table)
	h, err := NewHandle()
	if err != nil {
		return err
	}
	defer h.Close()

	errs := []error{
		rtDeleteRules(h, opts.Table, opts.Priority, opts.FwMark),
		FlushTable(h, vnl.FAMILY_ALL, opts.Table),
	}
	link, err := h.LinkByName(opts.Link)
	var notFound vnl.LinkNotFoundError
	switch {
	case errors.As(err, &notFound):
	case err != nil:
		errs = append(errs, fmt.Errorf("find link %q: %w", opts.Link, err))
	case link.Type() != "tuntap":
		errs = append(errs, fmt.Errorf("link %q has type %q: %w", opts.Link, link.Type(), ErrStaleLinkNotTUN))
	default:
		if err := h.LinkDel(link); err != nil && !errors.Is(err, unix.ENODEV) {
			errs = append(errs, fmt.Errorf("delete stale link %q: %w", opts.Link, err))
		} else {
			log.Info("deleted stale link")
		}
	}
	return errors.Join(errs...)
}
