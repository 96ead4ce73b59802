package cluster

import (
	"time"

	"github.com/ccmkit/ccmkit/examples/skeleton"
	"github.com/ccmkit/ccmkit/examples/skeleton/skeletonsim"
	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/digitalocean"
	"github.com/ccmkit/ccmkit/providers/digitalocean/dosim"
	"github.com/ccmkit/ccmkit/providers/openstack"
	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
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
	// NoZone: the cloud reports no zone (topology.kubernetes.io/zone).
	NoZone bool
	// New returns the provider value (for its providerID codec).
	New func() framework.Provider
	// StartSim starts the provider's simulated cloud on loopback.
	StartSim func(SimOptions) (Sim, error)
}

// SimOptions configure a simulated cloud.
type SimOptions struct {
	// Latency is added to every API call.
	Latency time.Duration
}

// Sim is a running simulated cloud.
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
	Close()
}

// Providers lists every cloud in the end-to-end suite; each provider issue
// adds its line.
var Providers = []Provider{
	{
		Name:          "skeleton",
		Command:       "./cmd/skeleton-cloud-controller-manager",
		RBAC:          []string{"examples/manifests/skeleton/rbac.yaml"},
		Routes:        true,
		LoadBalancers: true,
		New:           func() framework.Provider { return skeleton.New() },
		StartSim:      startSkeletonSim,
	},
	{
		Name:          "digitalocean",
		Command:       "./cmd/digitalocean-cloud-controller-manager",
		RBAC:          []string{"examples/manifests/digitalocean/rbac.yaml"},
		LoadBalancers: true,
		NoZone:        true, // as the existing DigitalOcean CCM: regions only
		New:           func() framework.Provider { return digitalocean.New() },
		StartSim:      startDigitalOceanSim,
	},
	{
		Name:          "openstack",
		Command:       "./cmd/openstack-cloud-controller-manager",
		RBAC:          []string{"examples/manifests/openstack/rbac.yaml"},
		Routes:        true,
		LoadBalancers: true,
		New:           func() framework.Provider { return openstack.New() },
		StartSim:      startOpenStackSim,
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

type skeletonSim struct {
	frameworktest.Cloud
	srv *skeletonsim.Server
}

func startSkeletonSim(o SimOptions) (Sim, error) {
	srv := skeletonsim.New(skeletonsim.Options{Latency: o.Latency})
	srv.Start()
	return &skeletonSim{Cloud: srv.Cloud(), srv: srv}, nil
}

func (s *skeletonSim) Env() map[string]string     { return s.srv.Env(s.srv.URL()) }
func (s *skeletonSim) URL() string                { return s.srv.URL() }
func (s *skeletonSim) Stats() map[string]int      { return s.srv.Stats() }
func (s *skeletonSim) SetLatency(d time.Duration) { s.srv.SetLatency(d) }
func (s *skeletonSim) Close()                     { s.srv.Close() }
func (s *skeletonSim) CloudConfig() string        { return "" }

func (s *skeletonSim) Routes() map[string]string {
	out := map[string]string{}
	for _, r := range s.srv.Routes() {
		out[r.DestinationCIDR] = r.TargetInstanceID
	}
	return out
}

type digitalOceanSim struct {
	frameworktest.Cloud
	srv *dosim.Server
}

func startDigitalOceanSim(o SimOptions) (Sim, error) {
	srv := dosim.New(dosim.Options{Latency: o.Latency})
	srv.Start()
	return &digitalOceanSim{Cloud: srv.Cloud(), srv: srv}, nil
}

func (s *digitalOceanSim) URL() string                { return s.srv.URL() }
func (s *digitalOceanSim) Env() map[string]string     { return s.srv.Env(s.srv.URL()) }
func (s *digitalOceanSim) Stats() map[string]int      { return s.srv.Stats() }
func (s *digitalOceanSim) SetLatency(d time.Duration) { s.srv.SetLatency(d) }
func (s *digitalOceanSim) Close()                     { s.srv.Close() }
func (s *digitalOceanSim) CloudConfig() string        { return "" }
func (s *digitalOceanSim) Routes() map[string]string  { return nil } // DigitalOcean has no route API

type openStackSim struct {
	frameworktest.Cloud
	srv *openstacksim.Server
}

func startOpenStackSim(o SimOptions) (Sim, error) {
	srv := openstacksim.New(openstacksim.Options{})
	srv.Start()
	srv.SetLatency(o.Latency)
	return &openStackSim{Cloud: srv.Cloud(), srv: srv}, nil
}

func (s *openStackSim) URL() string                { return s.srv.URL() }
func (s *openStackSim) Env() map[string]string     { return nil } // configured by cloud.conf
func (s *openStackSim) CloudConfig() string        { return s.srv.CloudConfig() }
func (s *openStackSim) Stats() map[string]int      { return s.srv.Stats() }
func (s *openStackSim) SetLatency(d time.Duration) { s.srv.SetLatency(d) }
func (s *openStackSim) Close()                     { s.srv.Close() }

// Routes maps the default router's extra routes to the servers their next
// hops belong to.
func (s *openStackSim) Routes() map[string]string {
	byIP := map[string]string{}
	for _, v := range s.srv.Servers() {
		for _, p := range v.Ports {
			for _, ip := range p.FixedIPs {
				byIP[ip] = v.ID
			}
		}
	}
	out := map[string]string{}
	for dst, hop := range s.srv.Routes(s.srv.Defaults().RouterID) {
		out[dst] = byIP[hop]
	}
	return out
}
