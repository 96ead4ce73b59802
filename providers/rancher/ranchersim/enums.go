package ranchersim

// States of hosts, stacks and services, as Cattle writes them.
const (
	StateRegistering      = "registering"
	StateInactive         = "inactive"
	StateActivating       = "activating"
	StateActive           = "active"
	StateDeactivating     = "deactivating"
	StateUpdatingActive   = "updating-active"
	StateUpdatingInactive = "updating-inactive"
	StateUpgrading        = "upgrading"
	StateUpgraded         = "upgraded"
	StateFinishingUpgrade = "finishing-upgrade"
	StateRollingBack      = "rolling-back"
	StateCancelingUpgrade = "canceling-upgrade"
	StateCanceledUpgrade  = "canceled-upgrade"
	StateRestarting       = "restarting"
	StateRemoving         = "removing"
	StateRemoved          = "removed"
	// StateDisconnected and StateReconnecting are a host whose agent lost
	// its connection to the server, and one whose agent is coming back.
	StateDisconnected = "disconnected"
	StateReconnecting = "reconnecting"
)

// HostStates are the states a test may put a host in (SetHostState).
var HostStates = []string{StateActive, StateInactive, StateDisconnected, StateReconnecting, StateActivating, StateDeactivating}

// ServiceStates are the states a service may be seeded in.
var ServiceStates = []string{StateRegistering, StateInactive, StateActivating, StateActive, StateDeactivating,
	StateUpdatingActive, StateUpdatingInactive, StateUpgrading, StateUpgraded, StateFinishingUpgrade,
	StateRollingBack, StateRestarting, StateCancelingUpgrade, StateCanceledUpgrade, StateRemoving, StateRemoved}

// Kinds of services.
const (
	KindLoadBalancer = "loadBalancerService"
	KindExternal     = "externalService"
)

// Protocols are the protocols of a load balancer's port rule (the
// portRule schema's options).
var Protocols = []string{"http", "tcp", "https", "tls", "sni", "udp"}

// Health states of services.
const (
	HealthHealthy      = "healthy"
	HealthInitializing = "initializing"
	HealthDegraded     = "degraded"
	HealthUnhealthy    = "unhealthy"
)
