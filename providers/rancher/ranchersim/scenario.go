package ranchersim

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Scenario describes a simulated Cattle in YAML (or JSON): what it holds
// when it starts and how it misbehaves. Every field is optional:
//
//	provider: rancher            # "" or "rancher"; cmd/cloudsim picks the simulator by it
//	description: three hosts and the old CCM's load balancer
//	project: 1a5                 # the environment (CATTLE_URL ends in /v2-beta/projects/<project>)
//	accessKey: 5C1D0A4F1B6E7C9D2E3F   # the environment API key (CATTLE_ACCESS_KEY, CATTLE_SECRET_KEY)
//	secretKey: s3cret
//	apiKeys:                     # more environment API keys the API accepts
//	- {accessKey: 9A8B7C6D5E4F3A2B1C0D, secretKey: another-secret}
//	lbImage: rancher/lb-service-haproxy:v0.9.14   # the lb.instance.image setting
//	seed: 42                     # seeds fault rates, so runs repeat
//	latency: 30ms                # added to every API request (not /_sim)
//	provisioningReads: 2         # reads until a transitioning resource settles; -1: at once
//	hosts:
//	- hostname: worker-1         # hosts are referred to by hostname
//	  id: 1h1                    # default: generated
//	  state: active              # active (default), inactive, disconnected, reconnecting
//	  agentIpAddress: 10.0.0.11  # default derived
//	  ipAddresses: [10.0.0.11, 203.0.113.1]   # default: the agent IP and a public one
//	  labels: {zone: z1}
//	stacks:
//	- name: kubernetes-loadbalancers
//	  externalId: kubernetes-loadbalancers://
//	certificates:                # PEM certificates and keys, as uploaded in the Rancher UI
//	- name: example-com
//	  id: 1c1                    # default: generated
//	  cert: |
//	    -----BEGIN CERTIFICATE-----
//	    ...
//	  key: |
//	    -----BEGIN EC PRIVATE KEY-----
//	    ...
//	  certChain: ""              # intermediates, PEM
//	services:                    # a service refers only to services listed before it
//	- name: worker-1
//	  kind: externalService      # or loadBalancerService (the default)
//	  stack: kubernetes-loadbalancers          # name or ID
//	  externalIpAddresses: [10.0.0.11]
//	- name: lb-a1b2c3
//	  stack: kubernetes-loadbalancers
//	  state: active              # default active
//	  launchConfig: {imageUuid: "docker:rancher/lb-service-haproxy:v0.9.14", ports: ["80:80/tcp"]}
//	  lbConfig: {portRules: [{sourcePort: 80, targetPort: 31080, protocol: tcp, serviceId: worker-1}],
//	             defaultCertificateId: example-com}   # certificates by name or ID
//	  links: [worker-1]          # service links, by name or ID
//	faults:                      # see simkit.ScenarioFault; operation "*", an endpoint or a short name
//	- {operation: hosts.list, status: 503, rate: 0.1}
//
// Short operation names: see Operations.
type Scenario struct {
	// ScenarioHeader holds provider, description, seed, latency,
	// provisioningReads and faults.
	simkit.ScenarioHeader
	Project   string `json:"project,omitempty"`
	AccessKey string `json:"accessKey,omitempty"`
	SecretKey string `json:"secretKey,omitempty"`
	// APIKeys are more environment API keys the API accepts besides
	// accessKey (which cmd/cloudsim prints).
	APIKeys  []ScenarioAPIKey  `json:"apiKeys,omitempty"`
	LBImage  string            `json:"lbImage,omitempty"`
	Hosts    []ScenarioHost    `json:"hosts,omitempty"`
	Stacks   []ScenarioStack   `json:"stacks,omitempty"`
	Services []ScenarioService `json:"services,omitempty"`
	// Certificates are added before the services, which name them by
	// name or ID.
	Certificates []ScenarioCertificate `json:"certificates,omitempty"`
}

// ScenarioAPIKey is an environment API key of a Scenario: an access key
// and its secret.
type ScenarioAPIKey struct {
	AccessKey string `json:"accessKey"`
	SecretKey string `json:"secretKey"`
}

// ScenarioCertificate is a certificate of a Scenario: Cattle reads its
// CN, names and dates from Cert.
type ScenarioCertificate struct {
	Name        string `json:"name"`
	ID          string `json:"id,omitempty"`
	Description string `json:"description,omitempty"`
	Cert        string `json:"cert"`
	Key         string `json:"key"`
	CertChain   string `json:"certChain,omitempty"`
}

// ScenarioHost is a host of a Scenario.
type ScenarioHost struct {
	Hostname       string            `json:"hostname"`
	ID             string            `json:"id,omitempty"`
	Name           string            `json:"name,omitempty"`
	State          string            `json:"state,omitempty"`
	AgentIPAddress string            `json:"agentIpAddress,omitempty"`
	IPAddresses    []string          `json:"ipAddresses,omitempty"`
	Labels         map[string]string `json:"labels,omitempty"`
	PhysicalHostID string            `json:"physicalHostId,omitempty"`
}

// ScenarioStack is a stack of a Scenario.
type ScenarioStack struct {
	Name       string `json:"name"`
	ID         string `json:"id,omitempty"`
	ExternalID string `json:"externalId,omitempty"`
}

// ScenarioService is a load balancer or external service of a Scenario;
// stack, links and port rules' serviceId are names or IDs of the
// scenario's stacks and earlier services.
type ScenarioService struct {
	Name                string        `json:"name"`
	ID                  string        `json:"id,omitempty"`
	Kind                string        `json:"kind,omitempty"`
	Stack               string        `json:"stack"`
	State               string        `json:"state,omitempty"`
	Scale               int           `json:"scale,omitempty"`
	LaunchConfig        *LaunchConfig `json:"launchConfig,omitempty"`
	LBConfig            *LBConfig     `json:"lbConfig,omitempty"`
	ExternalIPAddresses []string      `json:"externalIpAddresses,omitempty"`
	Hostname            string        `json:"hostname,omitempty"`
	HealthCheck         *HealthCheck  `json:"healthCheck,omitempty"`
	Links               []string      `json:"links,omitempty"`
}

// ScenarioFault is a fault of a Scenario.
type ScenarioFault = simkit.ScenarioFault

// Operations are the short names of the endpoints, for scenario faults.
var Operations = map[string]string{
	"root":                    "GET " + APIVersion,
	"project":                 "GET " + projectPath,
	"schemas":                 "GET " + projectPath + "/schemas",
	"hosts.list":              "GET " + projectPath + "/hosts",
	"hosts.get":               "GET " + projectPath + "/hosts/{id}",
	"hosts.ipAddresses":       "GET " + projectPath + "/hosts/{id}/ipaddresses",
	"settings.list":           "GET " + projectPath + "/settings",
	"stacks.list":             "GET " + projectPath + "/stacks",
	"stacks.create":           "POST " + projectPath + "/stacks",
	"loadBalancers.list":      "GET " + projectPath + "/" + collLB,
	"loadBalancers.create":    "POST " + projectPath + "/" + collLB,
	"loadBalancers.get":       "GET " + projectPath + "/" + collLB + "/{id}",
	"loadBalancers.update":    "PUT " + projectPath + "/" + collLB + "/{id}",
	"loadBalancers.delete":    "DELETE " + projectPath + "/" + collLB + "/{id}",
	"loadBalancers.action":    "POST " + projectPath + "/" + collLB + "/{id}",
	"externalServices.list":   "GET " + projectPath + "/" + collExternal,
	"externalServices.create": "POST " + projectPath + "/" + collExternal,
	"externalServices.update": "PUT " + projectPath + "/" + collExternal + "/{id}",
	"externalServices.delete": "DELETE " + projectPath + "/" + collExternal + "/{id}",
	"externalServices.action": "POST " + projectPath + "/" + collExternal + "/{id}",
	"services.list":           "GET " + projectPath + "/" + collServices,
	"services.update":         "PUT " + projectPath + "/" + collServices + "/{id}",
	"catalog":                 "GET " + catalogPath,
	"certificates.list":       "GET " + projectPath + "/certificates",
	"certificates.create":     "POST " + projectPath + "/certificates",
	"certificates.get":        "GET " + projectPath + "/certificates/{id}",
	"certificates.delete":     "DELETE " + projectPath + "/certificates/{id}",
	"volumes.list":            "GET " + projectPath + "/volumes",
	"volumes.create":          "POST " + projectPath + "/volumes",
	"volumes.get":             "GET " + projectPath + "/volumes/{id}",
	"volumes.update":          "PUT " + projectPath + "/volumes/{id}",
	"volumes.delete":          "DELETE " + projectPath + "/volumes/{id}",
	"volumes.action":          "POST " + projectPath + "/volumes/{id}",
	"storageDrivers.list":     "GET " + projectPath + "/storagedrivers",
	"storageDrivers.get":      "GET " + projectPath + "/storagedrivers/{id}",
	"storagePools.list":       "GET " + projectPath + "/storagepools",
	"storagePools.get":        "GET " + projectPath + "/storagepools/{id}",
	"mounts.list":             "GET " + projectPath + "/mounts",
}

// scenarios seeds a Server from a Scenario; the resources are checked by
// seeding a scratch cloud with them.
var scenarios = simkit.Scenarios[Scenario, *Scenario, Options, *Server]{
	Provider:     "rancher",
	Operations:   scenarioOperations,
	New:          New,
	Apply:        (*Scenario).Apply,
	ApplyToCheck: true,
}

// LoadScenario parses a YAML (or JSON) scenario and validates it, reporting
// every problem at once, unknown keys included.
func LoadScenario(data []byte) (*Scenario, error) { return scenarios.Load(data) }

// NewFromScenario returns a Server, not listening yet, seeded from a
// scenario.
func NewFromScenario(data []byte, defaults ...simkit.ScenarioDefault) (*Server, error) {
	return scenarios.NewServer(data, defaults...)
}

// Validate reports every problem with sc, as LoadScenario does.
func (sc *Scenario) Validate() error { return scenarios.Validate(sc) }

// Options returns the server options sc asks for. sc's header must be
// valid.
func (sc *Scenario) Options() Options {
	return Options{
		Common: sc.Common(scenarioOperations), Project: sc.Project, AccessKey: sc.AccessKey, SecretKey: sc.SecretKey,
		LBImage: sc.LBImage, ProvisioningReads: sc.ProvisioningReads,
	}
}

// Apply adds sc's resources to s; it reports the first one the cloud
// refuses.
func (sc *Scenario) Apply(s *Server) (err error) {
	defer simkit.RecoverRefusal("ranchersim: ", &err)
	if err := sc.applyAPIKeys(s); err != nil {
		return err
	}
	for i, h := range sc.Hosts {
		if h.Hostname == "" {
			return fmt.Errorf("hosts[%d].hostname: required", i)
		}
		host := Host{ID: h.ID, Hostname: h.Hostname, Name: h.Name, State: h.State, AgentIPAddress: h.AgentIPAddress,
			Labels: h.Labels, PhysicalHostID: h.PhysicalHostID}
		for _, a := range h.IPAddresses {
			host.IPAddresses = append(host.IPAddresses, IPAddress{Address: a})
		}
		s.AddHost(host)
	}
	certs, err := sc.applyCertificates(s)
	if err != nil {
		return err
	}
	stacks, services := map[string]string{}, map[string]string{}
	for i, k := range sc.Stacks {
		if _, bad := checkName(k.Name); bad {
			return fmt.Errorf("stacks[%d].name: %q is not 1-63 of a-z, A-Z, 0-9 and -", i, k.Name)
		}
		added := s.AddStack(Stack{ID: k.ID, Name: k.Name, ExternalID: k.ExternalID})
		stacks[k.Name], stacks[added.ID] = added.ID, added.ID
	}
	for i, ss := range sc.Services {
		svc, err := ss.service(fmt.Sprintf("services[%d]", i), stacks, services, certs)
		if err != nil {
			return err
		}
		added := s.AddService(svc)
		services[ss.Name], services[added.ID] = added.ID, added.ID
	}
	return nil
}

// service converts a scenario service, resolving its references.
func (ss ScenarioService) service(at string, stacks, services, certs map[string]string) (Service, error) {
	if _, bad := checkName(ss.Name); bad {
		return Service{}, fmt.Errorf("%s.name: %q is not 1-63 of a-z, A-Z, 0-9 and -", at, ss.Name)
	}
	if ss.Kind != "" && ss.Kind != KindLoadBalancer && ss.Kind != KindExternal {
		return Service{}, fmt.Errorf("%s.kind: %q is not %s or %s", at, ss.Kind, KindLoadBalancer, KindExternal)
	}
	if ss.State != "" && !slices.Contains(ServiceStates, ss.State) {
		return Service{}, fmt.Errorf("%s.state: %q is not one of %s", at, ss.State, strings.Join(ServiceStates, ", "))
	}
	stack, ok := stacks[ss.Stack]
	if !ok {
		return Service{}, fmt.Errorf("%s.stack: no stack %q in the scenario", at, ss.Stack)
	}
	svc := Service{ID: ss.ID, Kind: ss.Kind, Name: ss.Name, StackID: stack, State: ss.State, Scale: ss.Scale,
		LaunchConfig: ss.LaunchConfig.clone(), LBConfig: ss.LBConfig.clone(), ExternalIPAddresses: ss.ExternalIPAddresses,
		Hostname: ss.Hostname, HealthCheck: ss.HealthCheck}
	for _, l := range ss.Links {
		id, ok := services[l]
		if !ok {
			return Service{}, fmt.Errorf("%s.links: no service %q before it in the scenario", at, l)
		}
		svc.Links = append(svc.Links, ServiceLink{ServiceID: id, Name: l})
	}
	if err := svc.LBConfig.resolveCertificates(at, certs); err != nil {
		return Service{}, err
	}
	if svc.LBConfig != nil {
		for j := range svc.LBConfig.PortRules {
			pr := &svc.LBConfig.PortRules[j]
			if pr.Protocol == "" {
				pr.Protocol = "http"
			}
			if !slices.Contains(Protocols, pr.Protocol) {
				return Service{}, fmt.Errorf("%s.lbConfig.portRules[%d].protocol: %q is not one of %s", at, j, pr.Protocol, strings.Join(Protocols, ", "))
			}
			if pr.ServiceID == "" {
				continue
			}
			id, ok := services[pr.ServiceID]
			if !ok {
				return Service{}, fmt.Errorf("%s.lbConfig.portRules[%d].serviceId: no service %q before it in the scenario", at, j, pr.ServiceID)
			}
			pr.ServiceID = id
		}
	}
	if p := checkLaunchConfig(svc.LaunchConfig); p != nil {
		return Service{}, fmt.Errorf("%s.launchConfig.ports: %v is not [ip:][public:]private[/tcp|udp]", at, svc.LaunchConfig.Ports)
	}
	return svc, nil
}

// applyAPIKeys makes s accept sc's other API keys.
func (sc *Scenario) applyAPIKeys(s *Server) error {
	seen := map[string]bool{s.opts.AccessKey: true, OtherAccessKey: true}
	for i, k := range sc.APIKeys {
		switch {
		case k.AccessKey == "":
			return fmt.Errorf("apiKeys[%d].accessKey: required", i)
		case k.SecretKey == "":
			return fmt.Errorf("apiKeys[%d].secretKey: required", i)
		case seen[k.AccessKey]:
			return fmt.Errorf("apiKeys[%d].accessKey: %q is taken", i, k.AccessKey)
		}
		seen[k.AccessKey] = true
		s.AddAPIKey(k.AccessKey, k.SecretKey)
	}
	return nil
}

// applyCertificates adds sc's certificates to s and returns their IDs by
// name and by ID.
func (sc *Scenario) applyCertificates(s *Server) (map[string]string, error) {
	certs := map[string]string{}
	for i, c := range sc.Certificates {
		if c.Name == "" {
			return nil, fmt.Errorf("certificates[%d].name: required", i)
		}
		probe := Certificate{Name: c.Name, Cert: c.Cert, Key: c.Key, CertChain: c.CertChain}
		if field, err := parseCertificate(&probe); err != nil {
			return nil, fmt.Errorf("certificates[%d].%s: %w", i, field, err)
		}
		added := s.AddCertificate(Certificate{ID: c.ID, Name: c.Name, Description: c.Description, Cert: c.Cert,
			Key: c.Key, CertChain: c.CertChain})
		certs[c.Name], certs[added.ID] = added.ID, added.ID
	}
	return certs, nil
}

// resolveCertificates turns the certificate names of a scenario
// service's lbConfig into IDs.
func (c *LBConfig) resolveCertificates(at string, certs map[string]string) error {
	if c == nil {
		return nil
	}
	if c.DefaultCertificateID != "" {
		id, ok := certs[c.DefaultCertificateID]
		if !ok {
			return fmt.Errorf("%s.lbConfig.defaultCertificateId: no certificate %q in the scenario", at, c.DefaultCertificateID)
		}
		c.DefaultCertificateID = id
	}
	for j, name := range c.CertificateIDs {
		id, ok := certs[name]
		if !ok {
			return fmt.Errorf("%s.lbConfig.certificateIds[%d]: no certificate %q in the scenario", at, j, name)
		}
		c.CertificateIDs[j] = id
	}
	return nil
}

// scenarioOperations resolves a scenario fault's operation: "*", a short
// name, or an endpoint.
var scenarioOperations = simkit.ServedOperations(Operations, func() []string { return New(Options{}).Operations() })
