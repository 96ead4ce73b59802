package skeletonsim

import (
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Scenario describes a simulated Skeleton Cloud in YAML: what it holds when
// it starts and how it misbehaves. Every field is optional:
//
//	provider: skeleton           # "" or "skeleton"; cmd/cloudsim picks the simulator by it
//	description: three nodes behind a slow API
//	token: my-token              # the bearer token; default skeleton-test-token
//	seed: 42                     # seeds fault rates, so runs repeat
//	latency: 30ms                # added to every API request (not /_sim)
//	pageSize: 50                 # per_page when a list has none, 1-200
//	provisioningReads: 2         # GETs until a new LB is active; -1: created active
//	instances:
//	- name: node-1               # required; names may repeat, as in a real cloud
//	  type: s-4                  # default s-2
//	  region: sk-1               # default sk-1
//	  zone: sk-1b                # default <region>a
//	  state: stopped             # running (default) or stopped
//	  privateIPv4: 10.1.0.5      # addresses default to the next host's;
//	  publicIPv4: none           # "none" leaves one empty
//	  publicIPv6: 2001:db8::5
//	loadBalancers:
//	- name: web
//	  algorithm: round_robin
//	  listeners: [{protocol: TCP, port: 80, targetPort: 30080}]
//	  healthCheck: {protocol: http, port: 30080, path: /healthz, intervalSeconds: 5}
//	  members: [node-1]          # instance names from this scenario
//	  tags: [cluster:demo]
//	  status: active             # active (default), provisioning or error
//	faults:
//	- operation: instances.list  # see below
//	  status: 503                # an HTTP error status, 400-599
//	  rate: 0.1                  # the fraction of requests that fail; default all
//	  retryAfter: 2s             # Retry-After header, with a status
//	- operation: "*"
//	  delay: 100ms               # latency for the matching requests only
//	  count: 3                   # only the next 3 matching requests
//
// A fault's operation is "*" for every endpoint, an endpoint as /_sim/stats
// and Fault.Op write it ("GET /v1/instances"), or its short name:
// instances.list, instances.get, loadBalancers.list, loadBalancers.create,
// loadBalancers.get, loadBalancers.update, loadBalancers.delete,
// routes.list, routes.create or routes.delete. A fault has a status, a
// delay, or reset: true (close the connection without answering); message
// replaces the error body's message. Durations are Go durations ("1.5s").
//
// LoadScenario reads and validates a scenario; Options and Apply turn it
// into a cloud, and NewFromScenario does all three:
//
//	sc, err := skeletonsim.LoadScenario(data)
//	...
//	sim := skeletonsim.NewServer(t, sc.Options())
//	sc.Apply(sim)
type Scenario struct {
	// ScenarioHeader holds provider, description, seed, latency,
	// provisioningReads and faults.
	simkit.ScenarioHeader
	Token         string                 `json:"token,omitempty"`
	PageSize      int                    `json:"pageSize,omitempty"`
	Instances     []ScenarioInstance     `json:"instances,omitempty"`
	LoadBalancers []ScenarioLoadBalancer `json:"loadBalancers,omitempty"`
}

// ScenarioInstance is an instance of a Scenario; LaunchInstance fills in
// what it leaves empty.
type ScenarioInstance struct {
	Name        string `json:"name"`
	Type        string `json:"type,omitempty"`
	Region      string `json:"region,omitempty"`
	Zone        string `json:"zone,omitempty"`
	State       string `json:"state,omitempty"`
	PrivateIPv4 string `json:"privateIPv4,omitempty"`
	PublicIPv4  string `json:"publicIPv4,omitempty"`
	PublicIPv6  string `json:"publicIPv6,omitempty"`
}

// ScenarioLoadBalancer is a load balancer that exists when a Scenario
// starts. It follows LoadBalancerSpec, with members named by instance name.
type ScenarioLoadBalancer struct {
	Name          string              `json:"name"`
	Algorithm     string              `json:"algorithm,omitempty"`
	Listeners     []ScenarioListener  `json:"listeners,omitempty"`
	HealthCheck   ScenarioHealthCheck `json:"healthCheck,omitzero"`
	ProxyProtocol bool                `json:"proxyProtocol,omitempty"`
	Members       []string            `json:"members,omitempty"`
	Tags          []string            `json:"tags,omitempty"`
	Status        string              `json:"status,omitempty"`
	ErrorMessage  string              `json:"errorMessage,omitempty"`
	IPv4          string              `json:"ipv4,omitempty"`
}

// ScenarioListener is a Listener of a ScenarioLoadBalancer.
type ScenarioListener struct {
	Protocol   string `json:"protocol"`
	Port       int    `json:"port"`
	TargetPort int    `json:"targetPort"`
}

// ScenarioHealthCheck is the HealthCheck of a ScenarioLoadBalancer.
type ScenarioHealthCheck struct {
	Protocol        string `json:"protocol,omitempty"`
	Port            int    `json:"port,omitempty"`
	Path            string `json:"path,omitempty"`
	IntervalSeconds int    `json:"intervalSeconds,omitempty"`
}

// scenarios seeds a Server from a Scenario.
var scenarios = simkit.Scenarios[Scenario, *Scenario, Options, *Server]{
	Provider:   "skeleton",
	Operations: scenarioOperations,
	Check:      func(sc *Scenario) []error { return simkit.AsErrors(sc.validate()) },
	New:        New,
	Apply:      func(sc *Scenario, s *Server) error { sc.Apply(s); return nil },
}

// LoadScenario parses a YAML (or JSON) scenario and validates it. It
// reports every problem at once, each naming its field, unknown keys
// included.
func LoadScenario(data []byte) (*Scenario, error) { return scenarios.Load(data) }

// NewFromScenario returns a Server, not listening yet, seeded from a YAML
// scenario.
func NewFromScenario(data []byte, defaults ...simkit.ScenarioDefault) (*Server, error) {
	return scenarios.NewServer(data, defaults...)
}

// Validate reports every problem with sc, as LoadScenario does.
func (sc *Scenario) Validate() error { return scenarios.Validate(sc) }

// Options returns the server options sc asks for. sc must be valid.
func (sc *Scenario) Options() Options {
	return Options{
		Common:            sc.Common(scenarioOperations),
		Token:             sc.Token,
		PerPage:           sc.PageSize,
		ProvisioningReads: sc.ProvisioningReads,
	}
}

// Apply adds sc's instances, then its load balancers, to s. sc must be
// valid.
func (sc *Scenario) Apply(s *Server) {
	ids := make(map[string]string, len(sc.Instances)) // name -> ID
	for _, si := range sc.Instances {
		ids[si.Name] = s.LaunchInstance(si.instance()).ID
	}
	for _, sl := range sc.LoadBalancers {
		s.AddLoadBalancer(LoadBalancer{
			LoadBalancerSpec: sl.spec(ids),
			Status:           sl.Status,
			ErrorMessage:     sl.ErrorMessage,
			IPv4:             sl.IPv4,
		})
	}
}

func (si ScenarioInstance) instance() Instance {
	return Instance{
		Name:        si.Name,
		Type:        si.Type,
		Region:      si.Region,
		Zone:        si.Zone,
		Status:      si.State,
		PrivateIPv4: si.PrivateIPv4,
		PublicIPv4:  si.PublicIPv4,
		PublicIPv6:  si.PublicIPv6,
	}
}

// spec is the load balancer's spec with members resolved by ids, a map
// from instance name to ID.
func (sl ScenarioLoadBalancer) spec(ids map[string]string) LoadBalancerSpec {
	spec := LoadBalancerSpec{
		Name:      sl.Name,
		Algorithm: sl.Algorithm,
		HealthCheck: HealthCheck{
			Protocol:        sl.HealthCheck.Protocol,
			Port:            sl.HealthCheck.Port,
			Path:            sl.HealthCheck.Path,
			IntervalSeconds: sl.HealthCheck.IntervalSeconds,
		},
		ProxyProtocol: sl.ProxyProtocol,
		Tags:          sl.Tags,
	}
	for _, l := range sl.Listeners {
		spec.Listeners = append(spec.Listeners, Listener(l))
	}
	for _, name := range sl.Members {
		spec.Members = append(spec.Members, ids[name])
	}
	return spec
}
