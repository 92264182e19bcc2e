package connect

import (
	"crypto/sha256"
	"encoding/hex"
	"net/netip"
	"strings"

	"github.com/liqo-relay/relay/api/v1alpha1"
)

// Labels and annotations on what the operator writes.
const (
	// LabelConsumer on a RelayPeer names the consumer cluster whose
	// operator wrote it: several consumers connecting the same two
	// providers write different RelayPeers.
	LabelConsumer = v1alpha1.Group + "/consumer"
	// LabelPeerCluster on a RelayPeer names the provider it leads to.
	LabelPeerCluster = v1alpha1.Group + "/peer-cluster"
	// LabelProvider on an IP in the consumer names the provider whose
	// relay it gives a consumer-path endpoint.
	LabelProvider = v1alpha1.Group + "/provider"
	// AnnotationConnection on a RelayPeer names the FCC it comes from.
	AnnotationConnection = v1alpha1.Group + "/connection"
	// LabelManagedBy marks objects the operator created.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedBy is the value of LabelManagedBy.
	ManagedBy = "liqo-relay-operator"
)

// maxLabel is the length limit of a DNS-1123 label: a RelayPeer's name
// is a relay peer name, which must be one (docs/config.md).
const maxLabel = 63

// PeerName is the name of the RelayPeer that consumer's operator writes in
// one provider for provider peer: "<consumer>-<peer>", shortened with a
// hash of both when longer than a DNS label.
func PeerName(consumer, peer string) string {
	return shorten(consumer+"-"+peer, maxLabel)
}

// RelayIPName is the name of the IP the operator creates in the consumer
// for provider's relay whose pod the consumer sees at addr. The address is
// part of the name: spec.ip is immutable, so a new pod address is a new IP.
func RelayIPName(provider string, addr netip.Addr) string {
	a := strings.NewReplacer(".", "-", ":", "-").Replace(addr.String())
	return shorten("liqo-relay-"+provider+"-"+a, 253)
}

func shorten(s string, max int) string {
	s = strings.ToLower(s)
	if len(s) <= max {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	h := hex.EncodeToString(sum[:])[:10]
	head := strings.TrimRight(s[:max-len(h)-1], "-.")
	return head + "-" + h
}
