//go:build !linux

package tun

import (
	"fmt"

	wgtun "golang.zx2c4.com/wireguard/tun"
)

// CreateKernel is only implemented on Linux; elsewhere use the netstack
// device.
func CreateKernel(name string, mtu int) (wgtun.Device, error) {
	return nil, fmt.Errorf("create tun %q: %w", name, ErrUnsupported)
}
