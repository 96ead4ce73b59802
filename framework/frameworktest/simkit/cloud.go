package simkit

import (
	"fmt"
	"strings"
	"time"
)

// Cloud is a running simulated cloud as the tools that drive every cloud
// alike see it: the conformance suite (through frameworktest.SimCloud),
// and the end-to-end suite, the demo and the benchmarks (through
// internal/cluster). Each simulator's Cloud type implements it, mostly
// with what its Server and Base already have, and its StartCloud starts
// one; registering a cloud with those tools is then one line.
type Cloud interface {
	// AddInstance creates a running instance called name and returns its
	// cloud ID (the providerID without the scheme).
	AddInstance(name string) (id string)
	// DeleteInstance removes an instance.
	DeleteInstance(id string)
	// ShutdownInstance powers an instance off without deleting it.
	ShutdownInstance(id string)
	// Inject adds a fault; one without a Body gets the cloud's error
	// body.
	Inject(f Fault) (remove func())
	// Writes counts the mutating requests the cloud has served so far.
	Writes() int
	// LoadBalancers lists the cloud's load balancers, provider-neutrally.
	LoadBalancers() []LoadBalancer
	// Advance settles every pending asynchronous resource (a load
	// balancer being provisioned...).
	Advance()
	// Routes are the cloud's pod-network routes: destination CIDR to the
	// target instance's cloud ID; nil for a cloud without routes.
	Routes() map[string]string

	// URL is the API's base URL; its /_sim/state and /_sim/stats show
	// what the cloud holds and serves.
	URL() string
	// Env is what a cloud-controller-manager needs in its environment to
	// reach the cloud (endpoint, credentials); nil for a cloud configured
	// by CloudConfig alone.
	Env() map[string]string
	// CloudConfig is the --cloud-config file a cloud-controller-manager
	// needs, "" for a cloud configured by environment variables only.
	CloudConfig() string
	// Stats counts the API requests served, by operation.
	Stats() map[string]int
	// SetLatency changes the delay added to every API request.
	SetLatency(d time.Duration)
	// Close stops serving.
	Close()
	// A second account on the same URL (OtherAccount): the node-deletion
	// guard's cases point a provider at it.
	Accounts
}

// A simulator's Cloud type is its Server with the provider-neutral
// methods on top: URL, Stats, SetLatency, Close, Inject, Writes and
// Advance are the Server's (Base's), and the simulator writes
// AddInstance, DeleteInstance, ShutdownInstance, LoadBalancers and Env,
// embedding NoCloudConfig and NoRoutes for a cloud that has neither:
//
//	type Cloud struct {
//		*Server
//		simkit.NoCloudConfig
//		simkit.NoRoutes
//	}
//
//	func (s *Server) Cloud() *Cloud { return &Cloud{Server: s} }
//
//	func StartCloud(c simkit.Common) *Cloud { return simkit.Started(New(Options{Common: c})).Cloud() }

// NoCloudConfig is the CloudConfig of a Cloud configured by environment
// variables only, for its Cloud type to embed.
type NoCloudConfig struct{}

// CloudConfig is "": the cloud is configured by its environment.
func (NoCloudConfig) CloudConfig() string { return "" }

// NoRoutes is the Routes of a Cloud without a route API, for its Cloud
// type to embed.
type NoRoutes struct{}

// Routes is nil: the cloud has no route API.
func (NoRoutes) Routes() map[string]string { return nil }

// Started starts s (a simulator's Server) on a loopback port and returns
// it: the body of a StartCloud.
func Started[S interface{ Start() }](s S) S {
	s.Start()
	return s
}

// LoadBalancer is a cloud load balancer in a form every simulator can
// produce.
type LoadBalancer struct {
	ID   string
	Name string
	// Listeners as "<PROTO>:<port>->:<nodePort>" (FormatListener),
	// sorted.
	Listeners []string
	// Members are the instance IDs behind the load balancer, sorted.
	// Load balancers of one list with the same members may share the
	// slice (a thousand load balancers of 5,000 nodes each): read-only.
	Members []string
	// Addresses are where clients reach the load balancer, as a Service's
	// status.loadBalancer.ingress would name them (IPs and hostnames),
	// sorted; empty while it has none.
	Addresses []string
}

// CompanionLister is a simulated cloud whose load balancers need other
// resources that a cloud-controller-manager creates and deletes with
// them: a floating IP, a cloud IP, a security group, a firewall policy, a
// server group, a backend service... A reliability check compares it
// before and after a run: a companion that serves no load balancer is a
// leak.
type CompanionLister interface {
	// Companions lists every resource of the kinds the cloud's load
	// balancers use, as "<kind>/<id>" (e.g. "floatingip/1f0c..."), each
	// with the ID of the load balancer (as LoadBalancers gives it) that it
	// serves, "" when it serves none.
	Companions() map[string]string
}

// CompanionNamer is a CompanionLister that also gives each companion's
// name as the cloud holds it. A CCM names a companion after its load
// balancer (the Service's default load-balancer name is in both), so a
// reliability check can tell whose a companion is when no load balancer
// uses it: one a create made before it failed, kept while its Service is
// refused (an invalid annotation) and adopted when the Service is valid
// again.
type CompanionNamer interface {
	CompanionLister
	// CompanionNames gives each companion of Companions its name, ""
	// for one without.
	CompanionNames() map[string]string
}

// FormatListener writes a listener as LoadBalancer.Listeners holds it:
// "<PROTO>:<port>->:<nodePort>", the protocol in upper case, e.g.
// "TCP:80->:30080".
func FormatListener(protocol string, port, nodePort int) string {
	return fmt.Sprintf("%s:%d->:%d", strings.ToUpper(protocol), port, nodePort)
}

// Credentials point a provider at one account of a simulated cloud: the
// settings of its environment to change and, for a cloud whose
// credentials are in the cloud config, the cloud config to use instead.
type Credentials struct {
	// Env are settings to set over the cloud's Env.
	Env map[string]string
	// CloudConfig, when not "", replaces the cloud's CloudConfig.
	CloudConfig string
}

// Accounts is a Cloud that serves a second account beside its own (a
// DigitalOcean team, an OpenStack project, a Brightbox account, a Triton
// account, a Rancher environment), on the same URL (Base.AddAccount).
type Accounts interface {
	// OtherAccount returns valid credentials of another account of the
	// cloud, which hold instances of their own and see none of this
	// account's. The first call creates the account; later ones return
	// the same credentials.
	OtherAccount() Credentials
}
