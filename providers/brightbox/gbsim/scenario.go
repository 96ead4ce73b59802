package gbsim

import (
	"cmp"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Scenario describes a simulated Brightbox in YAML (or JSON): what it holds
// when it starts and how it misbehaves. Every field is optional:
//
//	provider: brightbox          # "" or "brightbox"; cmd/cloudsim picks the simulator by it
//	description: three servers and the existing CCM's load balancer
//	account: acc-43ks4           # the account (BRIGHTBOX_ACCOUNT)
//	clientID: cli-dsse2          # the API client (BRIGHTBOX_CLIENT) and its secret
//	clientSecret: s3cret
//	username: me@example.com     # the password grant's user, through app-dkmch
//	password: pa55word
//	clients:                     # more API clients of the account, each with its own secret
//	- {id: cli-ops01, secret: 0ps-s3cret}
//	users:                       # more users of the password grant
//	- {username: ops@example.com, password: 0ps-pa55}
//	tokenTTL: 2h                 # expires_in of access tokens
//	seed: 42                     # seeds fault rates, so runs repeat
//	latency: 30ms                # added to every API request (not /_sim)
//	provisioningReads: 2         # reads until an LB is active/deleted, ACME domains valid; -1: at once
//	settleAfter: 2s              # and what is pending settles that long after it started, read or not
//	mappingReads: 0              # reads until a cloud IP mapped onto an LB shows; 0: at once
//	deletedReads: 3              # list reads a deleted LB or server stays listed; -1: none
//	servers:
//	- name: worker-1             # servers are referred to by name or ID below
//	  id: srv-w0001              # default: generated
//	  zone: gb1-b                # gb1-a (default) or gb1-b
//	  type: 4gb.ssd              # default 2gb.ssd
//	  status: inactive           # one of the server statuses; default active
//	  ipv4: 10.241.0.5           # the interface's addresses; default derived, "none" leaves one out
//	  ipv6: 2a02:1348:17c::5
//	  fqdn: worker-1.example.com
//	loadBalancers:               # as if created earlier, e.g. by the existing CCM
//	- name: web.default.kubernetes
//	  id: lba-web01
//	  status: active
//	  policy: round-robin
//	  listeners: [{protocol: http, in: 80, out: 31080, timeout: 50000, proxy_protocol: v2}]
//	  healthcheck: {type: http, port: 31080, request: /healthz}
//	  nodes: [worker-1]
//	  domains: [{identifier: example.com, status: valid}]
//	cloudIPs:
//	- name: web.default.kubernetes
//	  id: cip-web01
//	  loadBalancer: web.default.kubernetes  # mapped to it; or server: or serverGroup: (name or ID)
//	serverGroups:
//	- name: web.default.kubernetes
//	  servers: [worker-1]
//	firewallPolicies:
//	- name: web.default.kubernetes
//	  serverGroup: web.default.kubernetes
//	  rules: [{protocol: tcp, source: any, destination_port: "31080"}]
//	faults:                      # see simkit.ScenarioFault; operation "*", an endpoint or a short name
//	- {operation: servers.list, status: 503, rate: 0.1}
//
// Short operation names: see Operations.
type Scenario struct {
	// ScenarioHeader holds provider, description, seed, latency,
	// provisioningReads and faults.
	simkit.ScenarioHeader
	Account          string                   `json:"account,omitempty"`
	ClientID         string                   `json:"clientID,omitempty"`
	ClientSecret     string                   `json:"clientSecret,omitempty"`
	Username         string                   `json:"username,omitempty"`
	Password         string                   `json:"password,omitempty"`
	Clients          []APIClient              `json:"clients,omitempty"`
	Users            []User                   `json:"users,omitempty"`
	TokenTTL         string                   `json:"tokenTTL,omitempty"`
	MappingReads     int                      `json:"mappingReads,omitempty"`
	DeletedReads     int                      `json:"deletedReads,omitempty"`
	Servers          []ScenarioServer         `json:"servers,omitempty"`
	LoadBalancers    []ScenarioLoadBalancer   `json:"loadBalancers,omitempty"`
	CloudIPs         []ScenarioCloudIP        `json:"cloudIPs,omitempty"`
	ServerGroups     []ScenarioServerGroup    `json:"serverGroups,omitempty"`
	FirewallPolicies []ScenarioFirewallPolicy `json:"firewallPolicies,omitempty"`
}

// ScenarioServer is a server of a Scenario.
type ScenarioServer struct {
	Name   string `json:"name"`
	ID     string `json:"id,omitempty"`
	Zone   string `json:"zone,omitempty"`
	Type   string `json:"type,omitempty"`
	Status string `json:"status,omitempty"`
	IPv4   string `json:"ipv4,omitempty"`
	IPv6   string `json:"ipv6,omitempty"`
	FQDN   string `json:"fqdn,omitempty"`
}

// ScenarioLoadBalancer is a load balancer of a Scenario; nodes are server
// names or IDs.
type ScenarioLoadBalancer struct {
	Name        string       `json:"name"`
	ID          string       `json:"id,omitempty"`
	Status      string       `json:"status,omitempty"`
	Policy      string       `json:"policy,omitempty"`
	Listeners   []Listener   `json:"listeners,omitempty"`
	Healthcheck Healthcheck  `json:"healthcheck"`
	Nodes       []string     `json:"nodes,omitempty"`
	Domains     []ACMEDomain `json:"domains,omitempty"`
}

// ScenarioCloudIP is a cloud IP of a Scenario, mapped to at most one of
// a server, a load balancer or a server group of the scenario (by name or
// ID).
type ScenarioCloudIP struct {
	Name         string `json:"name,omitempty"`
	ID           string `json:"id,omitempty"`
	PublicIPv4   string `json:"publicIPv4,omitempty"`
	ReverseDNS   string `json:"reverseDNS,omitempty"`
	Server       string `json:"server,omitempty"`
	LoadBalancer string `json:"loadBalancer,omitempty"`
	ServerGroup  string `json:"serverGroup,omitempty"`
}

// ScenarioServerGroup is a server group of a Scenario; servers by name or
// ID.
type ScenarioServerGroup struct {
	Name        string   `json:"name"`
	ID          string   `json:"id,omitempty"`
	Description string   `json:"description,omitempty"`
	Servers     []string `json:"servers,omitempty"`
}

// ScenarioFirewallPolicy is a firewall policy of a Scenario; serverGroup
// by name or ID.
type ScenarioFirewallPolicy struct {
	Name        string         `json:"name"`
	ID          string         `json:"id,omitempty"`
	Description string         `json:"description,omitempty"`
	ServerGroup string         `json:"serverGroup,omitempty"`
	Rules       []FirewallRule `json:"rules,omitempty"`
}

// ScenarioFault is a fault of a Scenario.
type ScenarioFault = simkit.ScenarioFault

// Operations are the short names of the endpoints, for scenario faults.
var Operations = map[string]string{
	"token":                  opToken,
	"accounts.list":          "GET /1.0/accounts",
	"servers.list":           "GET /1.0/servers",
	"servers.get":            "GET /1.0/servers/{id}",
	"zones.list":             "GET /1.0/zones",
	"loadBalancers.list":     "GET /1.0/load_balancers",
	"loadBalancers.create":   "POST /1.0/load_balancers",
	"loadBalancers.get":      "GET /1.0/load_balancers/{id}",
	"loadBalancers.update":   "PUT /1.0/load_balancers/{id}",
	"loadBalancers.delete":   "DELETE /1.0/load_balancers/{id}",
	"cloudIPs.list":          "GET /1.0/cloud_ips",
	"cloudIPs.create":        "POST /1.0/cloud_ips",
	"cloudIPs.map":           "POST /1.0/cloud_ips/{id}/map",
	"cloudIPs.unmap":         "POST /1.0/cloud_ips/{id}/unmap",
	"cloudIPs.delete":        "DELETE /1.0/cloud_ips/{id}",
	"serverGroups.list":      "GET /1.0/server_groups",
	"serverGroups.create":    "POST /1.0/server_groups",
	"serverGroups.delete":    "DELETE /1.0/server_groups/{id}",
	"firewallPolicies.list":  "GET /1.0/firewall_policies",
	"firewallPolicies.apply": "POST /1.0/firewall_policies/{id}/apply_to",
	"firewallRules.create":   "POST /1.0/firewall_rules",
	"firewallRules.update":   "PUT /1.0/firewall_rules/{id}",
	"volumes.list":           "GET /1.0/volumes",
	"volumes.create":         "POST /1.0/volumes",
	"volumes.get":            "GET /1.0/volumes/{id}",
	"volumes.update":         "PUT /1.0/volumes/{id}",
	"volumes.delete":         "DELETE /1.0/volumes/{id}",
	"volumes.attach":         "POST /1.0/volumes/{id}/attach",
	"volumes.detach":         "POST /1.0/volumes/{id}/detach",
	"volumes.resize":         "POST /1.0/volumes/{id}/resize",
}

// scenarios seeds a Server from a Scenario; the resources are checked by
// seeding a scratch cloud with them.
var scenarios = simkit.Scenarios[Scenario, *Scenario, Options, *Server]{
	Provider:     "brightbox",
	Operations:   scenarioOperations,
	Check:        (*Scenario).validate,
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

// validate reports every problem with sc's settings.
func (sc *Scenario) validate() []error {
	errs := simkit.AsErrors(simkit.ValidateDuration(field.NewPath("tokenTTL"), sc.TokenTTL))
	if sc.MappingReads < 0 {
		errs = append(errs, fmt.Errorf("mappingReads: %d is negative", sc.MappingReads))
	}
	if sc.DeletedReads < -1 {
		errs = append(errs, fmt.Errorf("deletedReads: must be -1 (none), 0 (the default) or more"))
	}
	return append(errs, sc.validateCredentials()...)
}

// validateCredentials reports clients and users without a secret or
// password, and IDs or usernames given twice.
func (sc *Scenario) validateCredentials() []error {
	var errs []error
	ids := map[string]bool{cmp.Or(sc.ClientID, DefaultClientID): true, DefaultAppID: true}
	for i, c := range sc.Clients {
		switch {
		case !strings.HasPrefix(c.ID, "cli-"):
			errs = append(errs, fmt.Errorf("clients[%d].id: %q is not an API client ID (cli-xxxxx)", i, c.ID))
		case ids[c.ID]:
			errs = append(errs, fmt.Errorf("clients[%d].id: %s is given twice", i, c.ID))
		case c.Secret == "":
			errs = append(errs, fmt.Errorf("clients[%d].secret: required", i))
		}
		ids[c.ID] = true
	}
	users := map[string]bool{cmp.Or(sc.Username, DefaultUsername): true}
	for i, u := range sc.Users {
		switch {
		case u.Username == "":
			errs = append(errs, fmt.Errorf("users[%d].username: required", i))
		case users[u.Username]:
			errs = append(errs, fmt.Errorf("users[%d].username: %s is given twice", i, u.Username))
		case u.Password == "":
			errs = append(errs, fmt.Errorf("users[%d].password: required", i))
		}
		users[u.Username] = true
	}
	return errs
}

// Options returns the server options sc asks for. sc's header must be
// valid.
func (sc *Scenario) Options() Options {
	ttl, _ := simkit.ParseDuration(sc.TokenTTL)
	return Options{
		Common: sc.Common(scenarioOperations), Account: sc.Account, ClientID: sc.ClientID,
		ClientSecret: sc.ClientSecret, Username: sc.Username, Password: sc.Password, TokenTTL: ttl,
		Clients: sc.Clients, Users: sc.Users,
		ProvisioningReads: sc.ProvisioningReads, MappingReads: sc.MappingReads, DeletedReads: sc.DeletedReads,
	}
}

// Apply adds sc's resources to s; it reports the first one the cloud
// refuses.
func (sc *Scenario) Apply(s *Server) (err error) {
	defer simkit.RecoverRefusal("gbsim: ", &err)
	// Names and IDs to IDs, by kind.
	servers, groups, lbs := map[string]string{}, map[string]string{}, map[string]string{}
	resolve := func(ids map[string]string, what, ref string) string {
		if id, ok := ids[ref]; ok {
			return id
		}
		panic(fmt.Sprintf("gbsim: %s: no %q in the scenario", what, ref))
	}
	resolveAll := func(ids map[string]string, what string, refs []string) []string {
		out := make([]string, 0, len(refs))
		for _, r := range refs {
			out = append(out, resolve(ids, what, r))
		}
		return out
	}
	named := func(ids map[string]string, name, id string) {
		ids[name], ids[id] = id, id
	}
	for i, ss := range sc.Servers {
		if ss.Name == "" {
			return fmt.Errorf("servers[%d].name: required", i)
		}
		srv := s.AddServer(CloudServer{ID: ss.ID, Name: ss.Name, Zone: ss.Zone, Type: ss.Type, Status: ss.Status,
			IPv4: ss.IPv4, IPv6: ss.IPv6, FQDN: ss.FQDN})
		named(servers, ss.Name, srv.ID)
	}
	for i, sg := range sc.ServerGroups {
		g := s.AddServerGroup(ServerGroup{ID: sg.ID, Name: sg.Name, Description: sg.Description,
			Servers: resolveAll(servers, fmt.Sprintf("serverGroups[%d].servers", i), sg.Servers)})
		named(groups, sg.Name, g.ID)
	}
	for i, sl := range sc.LoadBalancers {
		lb := s.AddLoadBalancer(LoadBalancer{ID: sl.ID, Name: sl.Name, Status: sl.Status, Policy: sl.Policy,
			Listeners: sl.Listeners, Healthcheck: sl.Healthcheck, Domains: sl.Domains,
			Nodes: resolveAll(servers, fmt.Sprintf("loadBalancers[%d].nodes", i), sl.Nodes)})
		named(lbs, sl.Name, lb.ID)
	}
	for i, fp := range sc.FirewallPolicies {
		p := FirewallPolicy{ID: fp.ID, Name: fp.Name, Description: fp.Description}
		if fp.ServerGroup != "" {
			p.ServerGroup = resolve(groups, fmt.Sprintf("firewallPolicies[%d].serverGroup", i), fp.ServerGroup)
		}
		s.AddFirewallPolicy(p, fp.Rules...)
	}
	for i, sc := range sc.CloudIPs {
		c := CloudIP{ID: sc.ID, Name: sc.Name, PublicIPv4: sc.PublicIPv4, ReverseDNS: sc.ReverseDNS}
		f := fmt.Sprintf("cloudIPs[%d]", i)
		switch {
		case (sc.Server != "") && (sc.LoadBalancer != "" || sc.ServerGroup != "") || sc.LoadBalancer != "" && sc.ServerGroup != "":
			return fmt.Errorf("%s: mapped to more than one of server, loadBalancer and serverGroup", f)
		case sc.Server != "":
			c.Target = resolve(servers, f+".server", sc.Server)
		case sc.LoadBalancer != "":
			c.Target = resolve(lbs, f+".loadBalancer", sc.LoadBalancer)
		case sc.ServerGroup != "":
			c.Target = resolve(groups, f+".serverGroup", sc.ServerGroup)
		}
		s.AddCloudIP(c)
	}
	return nil
}

// scenarioOperations resolves a scenario fault's operation: "*", a short
// name, or an endpoint.
var scenarioOperations = simkit.ServedOperations(Operations, func() []string { return New(Options{}).Operations() })
