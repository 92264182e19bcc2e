package agent

import "net"

// AdminAddr returns the address the admin server listens on (the port
// actually bound when the configured one is 0), or nil before Run has
// started it and when the admin server is disabled.
func (a *Agent) AdminAddr() net.Addr {
	if p := a.adminAddr.Load(); p != nil {
		return *p
	}
	return nil
}
