package openstacksim

import (
	"maps"
	"slices"
)

// Octavia provisioning and operating statuses.
const (
	ProvisioningActive        = "ACTIVE"
	ProvisioningError         = "ERROR"
	ProvisioningPendingCreate = "PENDING_CREATE"
	ProvisioningPendingUpdate = "PENDING_UPDATE"
	ProvisioningPendingDelete = "PENDING_DELETE"

	OperatingOnline    = "ONLINE"
	OperatingOffline   = "OFFLINE"
	OperatingError     = "ERROR"
	OperatingNoMonitor = "NO_MONITOR"
)

// IDRef is {"id": …}, how Octavia refers to related objects.
type IDRef struct {
	ID string `json:"id"`
}

// OctaviaAttributes are what Octavia keeps of every listener, pool,
// member and health monitor alike (the tags, provisioning status,
// operating status and timestamp mixins of its models). A resource's JSON
// holds them at its top level.
type OctaviaAttributes struct {
	Tags               []string `json:"tags"`
	ProvisioningStatus string   `json:"provisioning_status"`
	OperatingStatus    string   `json:"operating_status"`
	CreatedAt          string   `json:"created_at"`
	UpdatedAt          string   `json:"updated_at"`
}

// newOctaviaAttributes are the attributes of a resource created now with
// tags: PENDING_CREATE and OFFLINE.
func newOctaviaAttributes(tags []string) OctaviaAttributes {
	return OctaviaAttributes{Tags: nonNil(tags), ProvisioningStatus: ProvisioningPendingCreate,
		OperatingStatus: OperatingOffline, CreatedAt: octaviaCreatedTS}
}

// touch marks a changed resource PENDING_UPDATE.
func (a *OctaviaAttributes) touch() {
	a.ProvisioningStatus, a.UpdatedAt = ProvisioningPendingUpdate, octaviaUpdatedTS
}

// LoadBalancer is an Octavia load balancer. Listeners and Pools are
// filled in when it is shown.
type LoadBalancer struct {
	ID                 string   `json:"id"`
	Name               string   `json:"name"`
	Description        string   `json:"description"`
	ProjectID          string   `json:"project_id"`
	ProvisioningStatus string   `json:"provisioning_status"`
	OperatingStatus    string   `json:"operating_status"`
	AdminStateUp       bool     `json:"admin_state_up"`
	VipAddress         string   `json:"vip_address"`
	VipPortID          string   `json:"vip_port_id"`
	VipSubnetID        string   `json:"vip_subnet_id"`
	VipNetworkID       string   `json:"vip_network_id"`
	Provider           string   `json:"provider"`
	FlavorID           string   `json:"flavor_id"`
	AvailabilityZone   string   `json:"availability_zone"`
	Tags               []string `json:"tags"`
	Listeners          []IDRef  `json:"listeners"`
	Pools              []IDRef  `json:"pools"`
	CreatedAt          string   `json:"created_at"`
	UpdatedAt          string   `json:"updated_at"`
}

func (lb LoadBalancer) clone() LoadBalancer {
	lb.Tags, lb.Listeners, lb.Pools = slices.Clone(lb.Tags), slices.Clone(lb.Listeners), slices.Clone(lb.Pools)
	return lb
}

// Listener is an Octavia listener. LoadBalancerID is not an API
// attribute (the API shows loadbalancers:[{id}]).
type Listener struct {
	ID                     string            `json:"id"`
	LoadBalancerID         string            `json:"loadbalancer_id"`
	Name                   string            `json:"name"`
	Description            string            `json:"description"`
	ProjectID              string            `json:"project_id"`
	Protocol               string            `json:"protocol"`
	ProtocolPort           int               `json:"protocol_port"`
	DefaultPoolID          string            `json:"default_pool_id"`
	ConnectionLimit        int               `json:"connection_limit"`
	AdminStateUp           bool              `json:"admin_state_up"`
	DefaultTLSContainerRef string            `json:"default_tls_container_ref"`
	SNIContainerRefs       []string          `json:"sni_container_refs"`
	TimeoutClientData      int               `json:"timeout_client_data"`
	TimeoutMemberConnect   int               `json:"timeout_member_connect"`
	TimeoutMemberData      int               `json:"timeout_member_data"`
	TimeoutTCPInspect      int               `json:"timeout_tcp_inspect"`
	InsertHeaders          map[string]string `json:"insert_headers"`
	AllowedCIDRs           []string          `json:"allowed_cidrs"`
	OctaviaAttributes
}

func (l Listener) clone() Listener {
	l.SNIContainerRefs, l.AllowedCIDRs, l.Tags = slices.Clone(l.SNIContainerRefs), slices.Clone(l.AllowedCIDRs), slices.Clone(l.Tags)
	l.InsertHeaders = maps.Clone(l.InsertHeaders)
	return l
}

// SessionPersistence is a pool's session persistence.
type SessionPersistence struct {
	Type       string `json:"type"`
	CookieName string `json:"cookie_name,omitempty"`
}

// Pool is an Octavia pool. LoadBalancerID is not an API attribute.
type Pool struct {
	ID                 string              `json:"id"`
	LoadBalancerID     string              `json:"loadbalancer_id"`
	Name               string              `json:"name"`
	Description        string              `json:"description"`
	ProjectID          string              `json:"project_id"`
	Protocol           string              `json:"protocol"`
	LBAlgorithm        string              `json:"lb_algorithm"`
	SessionPersistence *SessionPersistence `json:"session_persistence"`
	AdminStateUp       bool                `json:"admin_state_up"`
	OctaviaAttributes
}

func (p Pool) clone() Pool {
	p.Tags = slices.Clone(p.Tags)
	if p.SessionPersistence != nil {
		sp := *p.SessionPersistence
		p.SessionPersistence = &sp
	}
	return p
}

// Member is a member of an Octavia pool. PoolID is not an API attribute.
type Member struct {
	ID             string `json:"id"`
	PoolID         string `json:"pool_id"`
	Name           string `json:"name"`
	ProjectID      string `json:"project_id"`
	Address        string `json:"address"`
	ProtocolPort   int    `json:"protocol_port"`
	SubnetID       string `json:"subnet_id"`
	Weight         int    `json:"weight"`
	Backup         bool   `json:"backup"`
	AdminStateUp   bool   `json:"admin_state_up"`
	MonitorAddress string `json:"monitor_address"`
	MonitorPort    int    `json:"monitor_port"`
	OctaviaAttributes
}

func (m Member) clone() Member {
	m.Tags = slices.Clone(m.Tags)
	return m
}

// HealthMonitor is an Octavia health monitor. PoolID is not an API
// attribute (the API shows pools:[{id}]).
type HealthMonitor struct {
	ID             string  `json:"id"`
	PoolID         string  `json:"pool_id"`
	Name           string  `json:"name"`
	ProjectID      string  `json:"project_id"`
	Type           string  `json:"type"`
	Delay          int     `json:"delay"`
	Timeout        int     `json:"timeout"`
	MaxRetries     int     `json:"max_retries"`
	MaxRetriesDown int     `json:"max_retries_down"`
	HTTPMethod     string  `json:"http_method"`
	URLPath        string  `json:"url_path"`
	ExpectedCodes  string  `json:"expected_codes"`
	DomainName     string  `json:"domain_name"`
	HTTPVersion    float64 `json:"http_version"`
	AdminStateUp   bool    `json:"admin_state_up"`
	OctaviaAttributes
}

func (h HealthMonitor) clone() HealthMonitor {
	h.Tags = slices.Clone(h.Tags)
	return h
}

// lbRec is a load balancer with its bookkeeping.
type lbRec struct {
	LoadBalancer
	// ownsVIP: the VIP port was made by Octavia and goes with the LB.
	ownsVIP bool
}

// nullIfEmpty sets m[k] to null where it is "" or 0, as Octavia shows
// unset optional attributes.
func nullIfEmpty(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		if v, ok := m[k]; ok && (v == "" || v == float64(0)) {
			m[k] = nil
		}
	}
	return m
}
