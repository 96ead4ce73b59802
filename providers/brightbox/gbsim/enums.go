package gbsim

import (
	"fmt"
	"slices"
	"strings"
)

// The API's enumerations, as gobrightbox's enums packages list them:
// gobrightbox refuses any other value (the empty string included) in an
// answer, and the simulator refuses any other in a request.
var (
	LoadBalancerStatuses = []string{"creating", "active", "deleting", "deleted", "failing", "failed"}
	ServerStatuses       = []string{"creating", "active", "inactive", "deleting", "deleted", "failed", "unavailable"}
	CloudIPStatuses      = []string{"mapped", "unmapped"}
	CloudIPModes         = []string{"nat", "route"}
	BalancingPolicies    = []string{"least-connections", "round-robin", "source-address"}
	ListenerProtocols    = []string{"tcp", "http", "https"}
	HealthcheckTypes     = []string{"tcp", "http"}
	ProxyProtocols       = []string{"v1", "v2", "v2-ssl", "v2-ssl-cn"}
	TransportProtocols   = []string{"tcp", "udp"}
	ServerTypeStatuses   = []string{"experimental", "available", "deprecated"}
	StorageTypes         = []string{"local", "network"}
	AccountStatuses      = []string{"pending", "active", "overdue", "warning", "suspended", "terminated", "closed", "deleted"}
	VolumeStatuses       = []string{"creating", "attached", "detached", "deleting", "deleted", "failed"}
	FilesystemTypes      = []string{"xfs", "ext4"}
	VolumeSourceTypes    = []string{"image", "volume", "raw"}
)

// Server statuses.
const (
	StatusCreating    = "creating"
	StatusActive      = "active"
	StatusInactive    = "inactive"
	StatusDeleting    = "deleting"
	StatusDeleted     = "deleted"
	StatusFailed      = "failed"
	StatusUnavailable = "unavailable"
)

// Load balancer statuses (creating, active, deleting and deleted are the
// server's words too).
const (
	LBStatusFailing = "failing"
	LBStatusFailed  = "failed"
)

// Volume statuses (creating, deleting, deleted and failed are the
// server's words too).
const (
	VolumeAttached = "attached"
	VolumeDetached = "detached"
)

// ACME domain statuses. The SDK keeps them as plain strings; the existing
// CCM waits for "valid".
const (
	ACMEPending = "pending"
	ACMEValid   = "valid"
	ACMEInvalid = "invalid"
)

// enumError is nil when value is one of allowed, else the API's complaint
// about field.
func enumError(field, value string, allowed []string) error {
	if slices.Contains(allowed, value) {
		return nil
	}
	return fmt.Errorf("%s: %q is not one of %s", field, value, strings.Join(allowed, ", "))
}
