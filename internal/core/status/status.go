package status

import (
	"encoding/json"
	"fmt"
	"time"
)

// Status is the document served at /status and printed by
// `relay status --json`. The JSON field names are a stable interface;
// docs/status.md describes every field. The admin server never encodes
// its slices as null.
type Status struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	Mode      string `json:"mode"` // "tun" or "netstack"
	PublicKey string `json:"publicKey"`
	// KeyRotation is set while a next key is staged (docs/protocol.md,
	// "Key rotation").
	KeyRotation      *KeyRotation `json:"keyRotation,omitempty"`
	ListenPort       int          `json:"listenPort"`
	UptimeSeconds    float64      `json:"uptimeSeconds"`
	ConfigGeneration int          `json:"configGeneration"`
	Peers            []PeerStatus `json:"peers"`
	Events           []Event      `json:"events"` // recent path switches, oldest first
}

// KeyRotation is a staged rotation of the relay's own key.
type KeyRotation struct {
	NextPublicKey string `json:"nextPublicKey"`
	Since         Time   `json:"since"`
	Deadline      Time   `json:"deadline"` // the switch happens then at the latest
	// Staged are the peers that proved they accept the next key, Waiting
	// those that have not yet.
	Staged  []string `json:"staged"`
	Waiting []string `json:"waiting"`
}

// PeerStatus is one peer (another provider's relay).
type PeerStatus struct {
	Name      string `json:"name"`
	PublicKey string `json:"publicKey"`
	// NextPublicKey is the key the peer rotates to, while it is staged.
	NextPublicKey string       `json:"nextPublicKey,omitempty"`
	ActivePath    string       `json:"activePath"` // "" when no path is usable
	Reachable     bool         `json:"reachable"`
	Prefixes      []string     `json:"prefixes"`
	LastHandshake Time         `json:"lastHandshake"` // "" before the first handshake
	RxBytes       uint64       `json:"rxBytes"`
	TxBytes       uint64       `json:"txBytes"`
	Paths         []PathStatus `json:"paths"`
}

// PathStatus is one path to a peer.
type PathStatus struct {
	Name       string    `json:"name"`
	Endpoint   string    `json:"endpoint"` // configured address
	Address    string    `json:"address"`  // the endpoint as resolved, "" while it has no address
	DNSError   string    `json:"dnsError"` // the endpoint name's last lookup failure, "" after a success
	Observed   string    `json:"observed"` // address the peer's packets come from, "" if none yet
	State      PathState `json:"state"`
	RTTMs      float64   `json:"rttMs"`
	JitterMs   float64   `json:"jitterMs"`
	Loss       float64   `json:"loss"` // 0 to 1
	LastChange Time      `json:"lastChange"`
	Bias       float64   `json:"bias"`    // configured bias in ms, added to the path's cost when ranking
	Penalty    float64   `json:"penalty"` // flap-dampening figure of merit (RFC 2439); decays over time
}

// Event is one change of a peer's active path.
type Event struct {
	At     Time   `json:"at"`
	Peer   string `json:"peer"`
	From   string `json:"from"` // "" when there was no active path
	To     string `json:"to"`   // "" when no path is left
	Reason string `json:"reason"`
}

// PathState is the health state of a path.
type PathState string

// Path states.
const (
	PathUp       PathState = "up"
	PathDown     PathState = "down"
	PathDampened PathState = "dampened" // answering again, but held back until it proves stable
	// The endpoint is a host name without an address: the first lookup is
	// under way (resolving), or lookups fail and no address is left
	// (unresolved, with DNSError).
	PathResolving  PathState = "resolving"
	PathUnresolved PathState = "unresolved"
)

// PingResult is the outcome of probing one path on demand (/ping).
type PingResult struct {
	Path  string  `json:"path"`
	RTTMs float64 `json:"rttMs"`
	OK    bool    `json:"ok"`
	Error string  `json:"error"`
}

// Time is a timestamp that encodes as an RFC 3339 string in UTC (with
// fractional seconds only when present), and the zero time as "".
type Time struct{ time.Time }

// At wraps t; it is shorthand for Time{t}.
func At(t time.Time) Time { return Time{t} }

// MarshalJSON implements json.Marshaler.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte(`""`), nil
	}
	return json.Marshal(t.UTC().Format(time.RFC3339Nano))
}

// UnmarshalJSON implements json.Unmarshaler; it accepts "" as the zero time.
func (t *Time) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("timestamp: %w", err)
	}
	if s == "" {
		*t = Time{}
		return nil
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("timestamp: %w", err)
	}
	*t = Time{v}
	return nil
}
