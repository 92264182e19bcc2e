package v1alpha1

// FCCFinalizer on a ForeignClusterConnection makes its deletion wait until
// the operator has removed the RelayPeers and IPs it wrote.
const FCCFinalizer = Group + "/connection-cleanup"

// Condition types of ForeignClusterConnection status (Ready is shared).
const (
	// ConditionClustersKnown: both clusters are Liqo providers of this
	// consumer and the connection is not a duplicate.
	ConditionClustersKnown = "ClustersKnown"
	// ConditionProvidersReachable: the operator reaches both providers'
	// API servers.
	ConditionProvidersReachable = "ProvidersReachable"
	// ConditionRelaysReady: both providers' Relays publish a key and
	// endpoints.
	ConditionRelaysReady = "RelaysReady"
	// ConditionAddressesMapped: the per-pod mapping and the consumer-path
	// endpoints are computed without conflict.
	ConditionAddressesMapped = "AddressesMapped"
)

// Condition reasons of ForeignClusterConnection status.
const (
	ReasonUnknownCluster      = "UnknownCluster"
	ReasonNotProvider         = "NotAProvider"
	ReasonDuplicatePair       = "DuplicatePair"
	ReasonSameCluster         = "SameCluster"
	ReasonLiqoNotReady        = "LiqoNotReady"
	ReasonProviderUnreachable = "ProviderUnreachable"
	ReasonProviderForbidden   = "ProviderForbidden"
	ReasonRelayPeerRefused    = "RelayPeerRefused"
	ReasonTooManyPods         = "TooManyPods"
	ReasonRelayMissing        = "RelayMissing"
	ReasonRelayAmbiguous      = "RelayAmbiguous"
	ReasonRelayNotReady       = "RelayNotReady"
	ReasonAddressConflict     = "AddressConflict"
	ReasonAddressPending      = "AddressPending"
	ReasonKnown               = "Known"
	ReasonReachable           = "Reachable"
	ReasonPublished           = "Published"
	ReasonMapped              = "Mapped"
	ReasonConnected           = "Connected"
	ReasonWaiting             = "WaitingForRelays"
	ReasonOneWay              = "OneDirectionDown"
	ReasonBothDown            = "BothDirectionsDown"
	ReasonDeleting            = "Deleting"
)
