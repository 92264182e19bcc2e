//go:build linux

package tun_test

import (
	"testing"

	"github.com/liqo-relay/relay/internal/dataplane/tun"
)

func TestCreateKernelRejectsBadArguments(t *testing.T) {
	for _, c := range []struct {
		name string
		mtu  int
	}{{"", 1420}, {"name-longer-than15", 1420}, {"relay0", 0}, {"relay0", 70000}} {
		if dev, err := tun.CreateKernel(c.name, c.mtu); err == nil {
			dev.Close()
			t.Errorf("CreateKernel(%q, %d) succeeded", c.name, c.mtu)
		}
	}
}
