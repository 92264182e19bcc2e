//go:build !linux

package udpbind

import "golang.zx2c4.com/wireguard/conn"

// New returns wireguard-go's standard bind: this package's own is Linux
// only.
func New() conn.Bind { return conn.NewStdNetBind() }
