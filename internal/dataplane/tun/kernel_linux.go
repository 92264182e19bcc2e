//go:build linux

package tun

import (
	"fmt"

	wgtun "golang.zx2c4.com/wireguard/tun"
)

// CreateKernel creates a kernel TUN device named name with the given MTU,
// through wireguard-go, which turns on the virtio-net header and, when the
// kernel supports them, TCP and UDP segmentation offloads (the returned
// device's BatchSize is then above 1). The device is created in the network
// namespace of the calling thread and is down with no address: configure it
// with netlink.NewRouteManager. Closing the device deletes the link.
func CreateKernel(name string, mtu int) (wgtun.Device, error) {
	if name == "" || len(name) > maxLinkName {
		return nil, fmt.Errorf("create tun %q: name must be 1 to %d bytes", name, maxLinkName)
	}
	if mtu < 68 || mtu > 65535 {
		return nil, fmt.Errorf("create tun %q: mtu %d outside [68, 65535]", name, mtu)
	}
	dev, err := wgtun.CreateTUN(name, mtu)
	if err != nil {
		return nil, fmt.Errorf("create tun %q (mtu %d): %w", name, mtu, err)
	}
	return dev, nil
}
