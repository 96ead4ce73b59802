package skeletonsim

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Instance statuses.
const (
	StatusRunning = "running"
	StatusStopped = "stopped"
)

// Load balancer statuses.
const (
	StatusProvisioning = "provisioning"
	StatusActive       = "active"
	StatusError        = "error"
)

// Instance is a virtual machine.
type Instance struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Type        string `json:"type"`
	Region      string `json:"region"`
	Zone        string `json:"zone"`
	Status      string `json:"status"`
	PrivateIPv4 string `json:"private_ipv4"`
	PublicIPv4  string `json:"public_ipv4"`
	PublicIPv6  string `json:"public_ipv6"`
}

// LoadBalancer is a load balancer: the spec a client writes plus the fields
// the cloud manages.
type LoadBalancer struct {
	ID string `json:"id"`
	LoadBalancerSpec
	Status       string `json:"status"`
	ErrorMessage string `json:"error_message,omitempty"`
	IPv4         string `json:"ipv4,omitempty"`
}

// LoadBalancerSpec is the mutable part of a load balancer: the body of POST
// and PUT.
type LoadBalancerSpec struct {
	Name          string      `json:"name"`
	Algorithm     string      `json:"algorithm"`
	Listeners     []Listener  `json:"listeners"`
	HealthCheck   HealthCheck `json:"health_check"`
	ProxyProtocol bool        `json:"proxy_protocol"`
	Members       []string    `json:"members"`
	Tags          []string    `json:"tags"`
}

// Listener forwards Port on the load balancer to TargetPort on every member.
type Listener struct {
	Protocol   string `json:"protocol"`
	Port       int    `json:"port"`
	TargetPort int    `json:"target_port"`
}

// HealthCheck is how the load balancer probes members.
type HealthCheck struct {
	Protocol        string `json:"protocol"`
	Port            int    `json:"port"`
	Path            string `json:"path,omitempty"`
	IntervalSeconds int    `json:"interval_seconds"`
}

// Route sends traffic for DestinationCIDR to an instance.
type Route struct {
	ID               string   `json:"id"`
	DestinationCIDR  string   `json:"destination_cidr"`
	TargetInstanceID string   `json:"target_instance_id"`
	Tags             []string `json:"tags"`
}

// Snapshot is the whole simulated cloud, each list sorted by ID.
type Snapshot struct {
	Instances     []Instance     `json:"instances"`
	LoadBalancers []LoadBalancer `json:"load_balancers"`
	Routes        []Route        `json:"routes"`
}

// state is the cloud's data. The Server's mutex guards it.
type state struct {
	seq           map[string]int // ID prefix -> last number handed out
	nextIP        netip.Addr     // next load-balancer address
	hosts         int            // instances given addresses by LaunchInstance
	instances     map[string]*Instance
	loadBalancers map[string]*lbRecord
	routes        map[string]*Route
	// provisioning settles provisioning load balancers.
	provisioning *simkit.Lifecycle
}

// lbRecord is a stored load balancer.
type lbRecord struct {
	lb LoadBalancer
}

func newState(provisioningReads int) *state {
	return &state{
		provisioning:  simkit.NewLifecycle(provisioningReads),
		seq:           map[string]int{},
		nextIP:        netip.MustParseAddr("198.18.0.1"), // RFC 2544 benchmarking range
		instances:     map[string]*Instance{},
		loadBalancers: map[string]*lbRecord{},
		routes:        map[string]*Route{},
	}
}

// newID returns the next ID with prefix, e.g. "lb-000003". IDs sort in
// creation order.
func (st *state) newID(prefix string) string {
	st.seq[prefix]++
	return fmt.Sprintf("%s-%06d", prefix, st.seq[prefix])
}

// activate makes a provisioning load balancer active and gives it an address.
func (st *state) activate(rec *lbRecord) {
	if rec.lb.Status != StatusProvisioning {
		return
	}
	rec.lb.Status = StatusActive
	if rec.lb.IPv4 == "" {
		rec.lb.IPv4 = st.nextLBAddress()
	}
}

// nextLBAddress hands out the next load-balancer address.
func (st *state) nextLBAddress() string {
	addr := st.nextIP
	st.nextIP = st.nextIP.Next()
	return addr.String()
}

func (st *state) snapshot() Snapshot {
	snap := Snapshot{
		Instances:     []Instance{},
		LoadBalancers: []LoadBalancer{},
		Routes:        []Route{},
	}
	for _, id := range slices.Sorted(maps.Keys(st.instances)) {
		snap.Instances = append(snap.Instances, *st.instances[id])
	}
	for _, id := range slices.Sorted(maps.Keys(st.loadBalancers)) {
		snap.LoadBalancers = append(snap.LoadBalancers, st.loadBalancers[id].lb.clone())
	}
	for _, id := range slices.Sorted(maps.Keys(st.routes)) {
		snap.Routes = append(snap.Routes, st.routes[id].clone())
	}
	return snap
}

func (lb LoadBalancer) clone() LoadBalancer {
	lb.Listeners = slices.Clone(lb.Listeners)
	lb.Members = slices.Clone(lb.Members)
	lb.Tags = slices.Clone(lb.Tags)
	return lb
}

func (r Route) clone() Route {
	r.Tags = slices.Clone(r.Tags)
	return r
}

// sortedValues returns m's values ordered by key.
func sortedValues[V any](m map[string]V) []V {
	out := make([]V, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}
