package config

import (
	"net/netip"
	"time"

	"github.com/liqo-relay/relay/internal/core/keys"
)

// Mode selects how the relay meets the host's network.
type Mode string

const (
	// ModeTUN uses a kernel TUN device with policy routing.
	ModeTUN Mode = "tun"
	// ModeNetstack uses a userspace gVisor network stack (no privileges).
	ModeNetstack Mode = "netstack"
)

// Log levels and formats.
const (
	LogLevelDebug = "debug"
	LogLevelInfo  = "info"
	LogLevelWarn  = "warn"
	LogLevelError = "error"
	LogFormatText = "text"
	LogFormatJSON = "json"
)

// Defaults of the top-level settings.
const (
	DefaultListenPort = 51900
	DefaultMode       = ModeTUN
	// DefaultMTU is the IPv6 minimum link MTU, which fits in every path we
	// expect; see docs/config.md for the arithmetic.
	DefaultMTU                 = 1280
	DefaultTunName             = "relay0"
	DefaultTable               = 1900
	DefaultRulePriority        = 1900
	DefaultFwMark       uint32 = 0x1900
	// DefaultAdmin is the default admin.listen: loopback, so that /status
	// and /ping need no token.
	DefaultAdmin = "127.0.0.1:9586"
	// DefaultPersistentKeepalive matches the usual wg recommendation: often
	// enough to keep NAT and conntrack entries (30 s or more) alive.
	DefaultPersistentKeepalive = 25 * time.Second
)

// Config is a parsed and validated relay configuration.
type Config struct {
	// Name of this relay (its provider), a DNS-1123 label.
	Name string
	// PrivateKey is this relay's WireGuard private key, zero when
	// PrivateKeyFile is used instead. It prints as keys.Redacted.
	PrivateKey keys.Private
	// PrivateKeyFile is the path of a file holding the private key in
	// base64, empty when PrivateKey is used. The caller reads it.
	PrivateKeyFile string
	// PrivateKeySecret names the Secret that holds the private key in
	// Kubernetes mode; the relay creates it when it does not exist.
	PrivateKeySecret SecretRef
	// keyFromSecret is set once PrivateKey was read from PrivateKeySecret.
	keyFromSecret bool
	// NextPrivateKey, when set, is the key this relay rotates to in place
	// (rotation.go, docs/protocol.md "Key rotation"). It prints as keys.Redacted.
	NextPrivateKey keys.Private
	// KeyRotationDeadline is how long the relay waits, from the moment it
	// is given NextPrivateKey, for every peer to stage it before it
	// switches anyway.
	KeyRotationDeadline time.Duration
	// AllowedPeerPrefixes limits the prefixes that RelayPeers may route to
	// their peers; empty allows any prefix but our exports and addresses.
	AllowedPeerPrefixes []netip.Prefix
	// ListenPort is the UDP port for WireGuard and probes.
	ListenPort uint16
	Mode       Mode
	// Addresses are the relay's own overlay addresses, as interface
	// addresses (host bits allowed, like 100.80.0.1/24).
	Addresses []netip.Prefix
	MTU       int
	// Tun is used in ModeTUN only.
	Tun Tun
	// Liqo is the Liqo gateway integration (TUN mode); see liqo.go.
	Liqo Liqo
	// Netstack is used in ModeNetstack only.
	Netstack Netstack
	// Exports are the local prefixes that peers may reach through us.
	Exports []netip.Prefix
	// Admin configures the HTTP admin servers.
	Admin Admin
	Log   Log
	// DNS configures the resolution of endpoint host names.
	DNS DNS
	// DNSServer configures the topology-aware DNS responder (off when it
	// has no listen addresses).
	DNSServer DNSServer
	// Health holds the global health defaults; each Peer carries its
	// effective copy.
	Health Health
	Peers  []Peer
}

// Tun configures the kernel TUN device and its policy routing.
type Tun struct {
	// Name of the device, a valid Linux interface name.
	Name string
	// Table is the routing table that holds the peer prefixes.
	Table int
	// RulePriority is the priority of the policy rules.
	RulePriority int
	// FwMark marks the relay's own UDP sockets; the rules exclude it so
	// that tunnel packets never loop back into the tunnel.
	FwMark uint32
}

// Netstack configures the userspace network stack.
type Netstack struct {
	// SOCKS5 is the host:port of a local SOCKS5 proxy into the mesh, or
	// empty for none.
	SOCKS5 string
	// SOCKS5AuthFile is the path of a file of username:password lines;
	// when set the proxy requires RFC 1929 authentication. The caller
	// reads it.
	SOCKS5AuthFile string
	// SOCKS5MaxConns caps the proxy's concurrent client connections.
	SOCKS5MaxConns int
	// SOCKS5MaxUDPAssociations caps its concurrent UDP associations.
	SOCKS5MaxUDPAssociations int
	// UDPMaxFlows caps the forwarded UDP flows to exported destinations.
	UDPMaxFlows int
	// UDPIdleTimeout closes a forwarded UDP flow idle this long.
	UDPIdleTimeout time.Duration
}

// Log configures logging.
type Log struct {
	Level  string // debug, info, warn or error
	Format string // text or json
}

// Peer is another provider's relay.
type Peer struct {
	Name      string
	PublicKey keys.Public
	// NextPublicKey, when set, is the key the peer is rotating to: we
	// accept it alongside PublicKey until the peer switches (rotation.go).
	NextPublicKey keys.Public
	// Prefixes are the destinations routed to this peer, in our address
	// space.
	Prefixes []netip.Prefix
	// PersistentKeepalive is 0 when disabled.
	PersistentKeepalive time.Duration
	// Paths are in order of preference.
	Paths []Path
	// SeesUs says how this peer sees our prefixes.
	SeesUs []Mapping
	// Health is the effective health configuration of this peer: the
	// global settings with the peer's overrides applied.
	Health Health
}

// Path is one way to reach a peer.
type Path struct {
	Name string
	// Endpoint is the host:port as written.
	Endpoint string
	// Host is the endpoint's host: an IP address (without brackets) or a
	// host name that the caller resolves.
	Host string
	Port uint16
	// Bias is added to this path's cost in selection.
	Bias time.Duration
}

// Mapping translates one of our prefixes: the peer sees Real as As. The
// sender translates source addresses, the receiver translates destination
// addresses.
type Mapping struct {
	Real netip.Prefix
	As   netip.Prefix
}

// Defaults returns a configuration holding every default and nothing else:
// no name, key, addresses or peers.
func Defaults() Config {
	return Config{
		ListenPort: DefaultListenPort,
		Mode:       DefaultMode,
		MTU:        DefaultMTU,
		Tun: Tun{
			Name:         DefaultTunName,
			Table:        DefaultTable,
			RulePriority: DefaultRulePriority,
			FwMark:       DefaultFwMark,
		},
		Netstack:  DefaultNetstack(),
		Admin:     Admin{Listen: DefaultAdmin},
		Log:       Log{Level: LogLevelInfo, Format: LogFormatText},
		DNS:       DefaultDNS(),
		DNSServer: DefaultDNSServer(),
		Health:    DefaultHealth(),

		KeyRotationDeadline: DefaultKeyRotationDeadline,
	}
}

// DefaultPeer returns a peer holding the per-peer defaults, with health
// inherited from h.
func DefaultPeer(h Health) Peer {
	return Peer{PersistentKeepalive: DefaultPersistentKeepalive, Health: h}
}
