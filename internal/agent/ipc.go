package agent

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/keys"
	"github.com/liqo-relay/relay/internal/dataplane/conn/multipath"
)

// This file renders wireguard-go's UAPI ("wg set" protocol) for the parts of
// the configuration that WireGuard owns: keys, port, mark, peers and their
// allowed IPs. The endpoint of every peer is the logical one of our Bind, so
// the path is chosen on each send and roaming never overrides it.

func hexKey(k keys.Public) string { return hex.EncodeToString(k[:]) }

// deviceUAPI renders the device-wide settings.
// Its result holds the private key: never log it.
func deviceUAPI(key keys.Private, port uint16, fwmark uint32) string {
	var b strings.Builder
	fmt.Fprintf(&b, "private_key=%s\nlisten_port=%d\n", key.Hex(), port)
	if fwmark != 0 {
		fmt.Fprintf(&b, "fwmark=%d\n", fwmark)
	}
	return b.String()
}

// peerUAPI renders one peer, added or updated in place. The keepalive is
// left out until the peer has a working path (see keepaliveUAPI): setting it
// on an up device sends a handshake at once, which would go nowhere.
func peerUAPI(p *config.Peer, keepalive bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "public_key=%s\n", hexKey(p.PublicKey))
	fmt.Fprintf(&b, "endpoint=%s\n", multipath.EndpointString(p.Name))
	if keepalive {
		fmt.Fprintf(&b, "persistent_keepalive_interval=%d\n", int(p.PersistentKeepalive.Seconds()))
	}
	b.WriteString("replace_allowed_ips=true\n")
	for _, pfx := range p.Prefixes {
		fmt.Fprintf(&b, "allowed_ip=%s\n", pfx)
	}
	return b.String()
}

// keepaliveUAPI turns a peer's persistent keepalive on. wireguard-go sends a
// keepalive at once, which starts a handshake when there is no session.
func keepaliveUAPI(p *config.Peer) string {
	return fmt.Sprintf("public_key=%s\npersistent_keepalive_interval=%d\n", hexKey(p.PublicKey), int(p.PersistentKeepalive.Seconds()))
}

// removePeerUAPI renders the removal of a peer.
func removePeerUAPI(key keys.Public) string {
	return fmt.Sprintf("public_key=%s\nremove=true\n", hexKey(key))
}
