package cluster

import (
	"time"

	"github.com/ccmkit/ccmkit/examples/skeleton"
	"github.com/ccmkit/ccmkit/examples/skeleton/skeletonsim"
	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
	"github.com/ccmkit/ccmkit/providers/brightbox"
	"github.com/ccmkit/ccmkit/providers/brightbox/gbsim"
	"github.com/ccmkit/ccmkit/providers/digitalocean"
	"github.com/ccmkit/ccmkit/providers/digitalocean/dosim"
	"github.com/ccmkit/ccmkit/providers/openstack"
	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
	"github.com/ccmkit/ccmkit/providers/rancher"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
	"github.com/ccmkit/ccmkit/providers/triton"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

// Provider is one cloud as the end-to-end suite, the demo and the benchmark
// run it.
type Provider struct {
	// Name is the --cloud-provider value.
	Name string
	// Command is the package of the CCM binary, relative to the module root.
	Command string
	// RBAC are the shipped manifests the CCM runs with, relative to the
	// module root: nothing more is granted.
	RBAC []string
	// Routes: the cloud programs pod-network routes.
	Routes bool
	// LoadBalancers: the provider provisions load balancers (the suite's
	// Service scenarios run only then).
	LoadBalancers bool
	// LBIDAnnotation is the Service annotation in which the provider
	// records its load balancer's ID (as the simulator's LoadBalancers
	// gives it): how a reliability check tells which cloud load balancer
	// belongs to which Service.
	LBIDAnnotation string
	// NoZone: the cloud reports no zone (topology.kubernetes.io/zone).
	NoZone bool
	// Soak is what the soak (internal/soak) may do to the provider's
	// Services.
	Soak SoakSupport
	// WritingControllers are the provider's extra controllers that write
	// to the cloud on their own when nodes join (Triton's firewall and
	// metrics controllers tag the nodes' machines): the suite turns them
	// off where it counts the writes node initialization makes.
	WritingControllers []string
	// New returns the provider value (for its providerID codec).
	New func() framework.Provider
	// StartSim starts the provider's simulated cloud on loopback:
	// simulated(<cloud>sim.StartCloud).
	StartSim func(SimOptions) (Sim, error)
}

// SoakSupport is what a provider's load balancers accept, for the soak's
// random Service operations: the annotations come from the provider's
// generated docs/<cloud>/annotations.md, and none changes the listener
// protocol (the soak compares listeners by port).
type SoakSupport struct {
	// UDP: Service ports may be UDP.
	UDP bool
	// SourceRanges: spec.loadBalancerSourceRanges is honoured; without
	// it, setting them must raise a Warning Event and write nothing.
	SourceRanges bool
	// Valid are annotations the provider accepts, each with two or more
	// values the soak switches between.
	Valid map[string][]string
	// Invalid are annotation values the provider must reject with a
	// Warning Event.
	Invalid map[string]string
}

// SimOptions configure a simulated cloud: its latency, faults, seed and
// logger, as every simulator takes them.
type SimOptions = simkit.Common

// Sim is a running simulated cloud: the conformance suite's neutral view
// of it, and what the suite needs besides.
type Sim interface {
	frameworktest.Cloud
	// URL is the simulator's base URL (its /_sim/state and /_sim/stats
	// show what it holds).
	URL() string
	// Env is what the CCM needs to reach the simulator (endpoint,
	// credentials).
	Env() map[string]string
	// Stats counts the API requests served, by operation.
	Stats() map[string]int
	// SetLatency changes the latency added to every API call.
	SetLatency(time.Duration)
	// Routes are the cloud's pod-network routes: destination CIDR to the
	// target instance's cloud ID.
	Routes() map[string]string
	// CloudConfig is the --cloud-config file the CCM needs, "" for clouds
	// configured by environment variables only.
	CloudConfig() string
	// Inject adds a fault as simkit has it (a rate, a Retry-After, a hook
	// run mid-request...); remove takes it out again.
	Inject(f simkit.Fault) (remove func())
	// OtherAccount is a valid credential of another account of the
	// cloud, which sees none of this one's VMs (simkit.Accounts).
	OtherAccount() simkit.Credentials
	Close()
}

// Providers lists every cloud in the end-to-end suite; each provider issue
// adds its entry, whose simulator is one line: simulated(<cloud>sim.StartCloud).
var Providers = []Provider{
	{
		Name:           "skeleton",
		Command:        "./cmd/skeleton-cloud-controller-manager",
		RBAC:           []string{"examples/manifests/skeleton/rbac.yaml"},
		Routes:         true,
		LoadBalancers:  true,
		LBIDAnnotation: skeleton.AnnotationLoadBalancerID,
		Soak: SoakSupport{
			UDP: true, SourceRanges: false,
			Valid:   map[string][]string{"skeleton.ccmkit.io/health-check-interval": {"5s", "20s"}},
			Invalid: map[string]string{"skeleton.ccmkit.io/health-check-interval": "abc"},
		},
		New:      func() framework.Provider { return skeleton.New() },
		StartSim: simulated(skeletonsim.StartCloud),
	},
	{
		Name:           "digitalocean",
		Command:        "./cmd/digitalocean-cloud-controller-manager",
		RBAC:           []string{"examples/manifests/digitalocean/rbac.yaml"},
		LoadBalancers:  true,
		LBIDAnnotation: digitalocean.AnnotationLoadBalancerID,
		NoZone:         true, // as the existing DigitalOcean CCM: regions only
		Soak: SoakSupport{
			UDP: true, SourceRanges: true,
			Valid:   map[string][]string{"service.beta.kubernetes.io/do-loadbalancer-healthcheck-check-interval-seconds": {"3", "10"}},
			Invalid: map[string]string{"service.beta.kubernetes.io/do-loadbalancer-healthcheck-check-interval-seconds": "abc"},
		},
		New:      func() framework.Provider { return digitalocean.New() },
		StartSim: simulated(dosim.StartCloud),
	},
	{
		Name:           "openstack",
		Command:        "./cmd/openstack-cloud-controller-manager",
		RBAC:           []string{"examples/manifests/openstack/rbac.yaml"},
		Routes:         true,
		LoadBalancers:  true,
		LBIDAnnotation: openstack.AnnotationLoadBalancerID,
		Soak: SoakSupport{
			UDP: false, SourceRanges: true,
			Valid:   map[string][]string{"loadbalancer.openstack.org/connection-limit": {"100", "-1"}},
			Invalid: map[string]string{"loadbalancer.openstack.org/connection-limit": "abc"},
		},
		New:      func() framework.Provider { return openstack.New() },
		StartSim: simulated(openstacksim.StartCloud),
	},
	{
		Name:           "brightbox",
		Command:        "./cmd/brightbox-cloud-controller-manager",
		RBAC:           []string{"examples/manifests/brightbox/rbac.yaml"},
		LoadBalancers:  true,
		LBIDAnnotation: brightbox.AnnotationLoadBalancerID,
		Soak: SoakSupport{
			UDP: false, SourceRanges: false,
			Valid:   map[string][]string{"service.beta.kubernetes.io/brightbox-load-balancer-policy": {"round-robin", "least-connections"}},
			Invalid: map[string]string{"service.beta.kubernetes.io/brightbox-load-balancer-healthcheck-timeout": "abc"},
		},
		New:      func() framework.Provider { return brightbox.New() },
		StartSim: simulated(gbsim.StartCloud),
	},
	{
		Name:               "triton",
		Command:            "./cmd/triton-cloud-controller-manager",
		RBAC:               []string{"examples/manifests/triton/rbac.yaml"},
		LoadBalancers:      true,
		LBIDAnnotation:     triton.AnnotationLoadBalancerID,
		WritingControllers: []string{triton.FirewallControllerName, triton.CMONControllerName},
		Soak: SoakSupport{
			UDP: false, SourceRanges: true,
			Valid:   map[string][]string{"triton.tritondatacenter.com/load-balancer-max-backends": {"32", "64"}},
			Invalid: map[string]string{"triton.tritondatacenter.com/load-balancer-max-backends": "abc"},
		},
		New:      func() framework.Provider { return triton.New() },
		StartSim: simulated(tritonsim.StartCloud),
	},
	{
		Name:           "rancher",
		Command:        "./cmd/rancher-cloud-controller-manager",
		RBAC:           []string{"examples/manifests/rancher/rbac.yaml"},
		LoadBalancers:  true,
		LBIDAnnotation: rancher.AnnotationLoadBalancerID,
		Soak: SoakSupport{
			UDP: true, SourceRanges: false,
			Valid:   map[string][]string{"service.beta.kubernetes.io/rancher-load-balancer-healthcheck-interval": {"2000", "3000"}},
			Invalid: map[string]string{"service.beta.kubernetes.io/rancher-load-balancer-healthcheck-interval": "abc"},
		},
		New:      func() framework.Provider { return rancher.New() },
		StartSim: simulated(ranchersim.StartCloud),
	},
}

// Lookup returns the provider called name.
func Lookup(name string) (Provider, bool) {
	for _, p := range Providers {
		if p.Name == name {
			return p, true
		}
	}
	return Provider{}, false
}

// simulated adapts a simulator's StartCloud to Provider.StartSim.
func simulated[C simkit.Cloud](start func(simkit.Common) C) func(SimOptions) (Sim, error) {
	return func(o SimOptions) (Sim, error) { return AsSim(start(o)), nil }
}

// AsSim is a running simulated cloud as a Sim.
func AsSim(c simkit.Cloud) Sim {
	s := sim{Cloud: frameworktest.SimCloud(c), c: c}
	if l, ok := c.(simkit.CompanionLister); ok {
		return companionSim{s, l}
	}
	return s
}

// companionSim is the Sim of a cloud whose load balancers have companions
// (simkit.CompanionLister): a type assertion on the Sim finds them.
type companionSim struct {
	sim
	l simkit.CompanionLister
}

// Companions passes on the simulator's simkit.CompanionLister.
func (s companionSim) Companions() map[string]string { return s.l.Companions() }

// CompanionNames passes on the simulator's simkit.CompanionNamer; nil for
// a simulator that names no companion.
func (s companionSim) CompanionNames() map[string]string {
	if n, ok := s.l.(simkit.CompanionNamer); ok {
		return n.CompanionNames()
	}
	return nil
}

// sim is a simkit.Cloud as a Sim.
type sim struct {
	frameworktest.Cloud
	c simkit.Cloud
}

func (s sim) URL() string                  { return s.c.URL() }
func (s sim) Env() map[string]string       { return s.c.Env() }
func (s sim) Stats() map[string]int        { return s.c.Stats() }
func (s sim) SetLatency(d time.Duration)   { s.c.SetLatency(d) }
func (s sim) Routes() map[string]string    { return s.c.Routes() }
func (s sim) CloudConfig() string          { return s.c.CloudConfig() }
func (s sim) Inject(f simkit.Fault) func() { return s.c.Inject(f) }
func (s sim) Close()                       { s.c.Close() }

// OtherAccount passes on the simulator's simkit.Accounts.
func (s sim) OtherAccount() simkit.Credentials { return s.c.OtherAccount() }
