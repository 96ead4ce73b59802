package openstacksim

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/quotas"
)

const fullScenario = `
provider: openstack
region: RegionTwo
users: [{name: admin, password: pw, project: ops}]
applicationCredentials: [{id: ac-1, secret: s3cret}]
provisioningReads: 3
maxRoutes: 5
networks:
- name: storage
  subnets: [{name: storage-subnet, cidr: 192.168.10.0/24}]
routers:
- name: router2
  gateway: public
  subnets: [storage-subnet]
  routes: [{destination: 10.244.0.0/24, nexthop: 192.168.10.5}]
servers:
- {name: node-1, flavor: m1.medium, az: zone-a}
- {name: node-2, status: SHUTOFF, ports: [{network: storage, fixedIPs: [192.168.10.7]}]}
loadBalancers:
- name: old
  tags: [kube_service_c_ns_old]
  listeners:
  - {protocol: TCP, port: 80, pool: {memberPort: 30080, members: [node-1], monitor: TCP}}
- {name: broken, status: ERROR}
faults:
- {operation: servers.get, status: 503, count: 1}
`

func TestScenario(t *testing.T) {
	s, err := NewFromScenario([]byte(fullScenario))
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	defer s.Close()
	if s.Region() != "RegionTwo" || s.opts.Users[0].Name != "admin" {
		t.Fatalf("options not applied: %+v", s.opts)
	}
	ao := passwordAuth(s)
	ao.Username, ao.Password, ao.TenantName = "admin", "pw", "ops"
	c := connect(t, s, ao)

	st := s.State()
	if len(st.Servers) != 2 || st.Servers[1].Status != StatusShutoff || st.Servers[1].Ports[0].FixedIPs[0] != "192.168.10.7" {
		t.Errorf("servers = %+v", st.Servers)
	}
	var r2 Router
	for _, r := range st.Routers {
		if r.Name == "router2" {
			r2 = r
		}
	}
	if got := s.Routes(r2.ID); got["10.244.0.0/24"] != "192.168.10.5" {
		t.Errorf("router2 routes = %v", got)
	}
	lbs := s.Cloud().LoadBalancers()
	if len(lbs) != 2 || lbs[0].Name != "old" || len(lbs[0].Members) != 1 || lbs[0].Members[0] != st.Servers[0].ID {
		t.Errorf("LBs = %+v", lbs)
	}
	broken, err := loadbalancers.Get(ctx(), c.lb, lbs[1].ID).Extract()
	if err != nil || broken.ProvisioningStatus != "ERROR" {
		t.Errorf("broken = %+v, %v", broken, err)
	}

	// The scenario's fault fails one server GET.
	_, err = servers.Get(ctx(), c.compute, st.Servers[0].ID).Extract()
	wantCode(t, err, http.StatusServiceUnavailable)
	if _, err := servers.Get(ctx(), c.compute, st.Servers[0].ID).Extract(); err != nil {
		t.Errorf("second GET: %v", err)
	}
}

func TestScenarioErrors(t *testing.T) {
	for name, tt := range map[string]struct{ yaml, want string }{
		"unknown key":     {"colour: red\n", "unknown field"},
		"provider":        {"provider: digitalocean\n", `provider: Unsupported value: "digitalocean"`},
		"latency":         {"latency: soon\n", "latency:"},
		"cidr":            {"networks: [{name: n, subnets: [{cidr: 10.0.0.0/99}]}]\n", "cidr"},
		"status":          {"servers: [{name: a, status: ASLEEP}]\n", "status"},
		"flavor":          {"servers: [{name: a, flavor: huge}]\n", "unknown flavor"},
		"fault op":        {"faults: [{operation: nope, status: 500}]\n", "unknown operation"},
		"member port":     {"loadBalancers: [{name: x, listeners: [{protocol: TCP, port: 80, pool: {members: [1.2.3.4]}}]}]\n", "memberPort"},
		"unknown network": {"routers: [{name: r, gateway: nowhere}]\n", "no network"},
		"bad listener":    {"loadBalancers: [{name: x, listeners: [{protocol: QUIC, port: 80}]}]\n", "protocol"},
		"unknown member":  {"loadBalancers: [{name: x, listeners: [{protocol: TCP, port: 80, pool: {memberPort: 1, members: [ghost]}}]}]\n", "ghost"},
		"unreachable hop": {"routers: [{name: r, routes: [{destination: 10.1.0.0/24, nexthop: 8.8.8.8}]}]\n", "nexthop"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := NewFromScenario([]byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestExampleScenario(t *testing.T) {
	data, err := os.ReadFile("../../../examples/cloudsim/openstack.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewFromScenario(data)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(s.Servers()); n != 3 {
		t.Errorf("servers = %d", n)
	}
	env := s.Env("http://127.0.0.1:1234")
	if env["OS_AUTH_URL"] != "http://127.0.0.1:1234/identity/v3" || env["OS_REGION_NAME"] != "RegionOne" {
		t.Errorf("Env = %v", env)
	}
}

// TestScenarioSeveralCredentials: a scenario registers several users and
// application credentials, and each of them authenticates (Keystone v3
// password and application_credential methods), scoped to its own
// project.
func TestScenarioSeveralCredentials(t *testing.T) {
	s, err := NewFromScenario([]byte(`
users:
- {name: ccm, password: pw-1}
- {name: ops, password: pw-2, project: ops}
applicationCredentials:
- {id: ac-1, secret: s-1, user: ccm}
- {name: ac-ops, secret: s-2, user: ops}
`))
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	defer s.Close()
	for _, ao := range []gophercloud.AuthOptions{
		{IdentityEndpoint: s.AuthURL(), Username: "ccm", Password: "pw-1", DomainName: DefaultDomain, TenantName: DefaultProject},
		{IdentityEndpoint: s.AuthURL(), Username: "ops", Password: "pw-2", DomainName: DefaultDomain, TenantName: "ops"},
		{IdentityEndpoint: s.AuthURL(), ApplicationCredentialID: "ac-1", ApplicationCredentialSecret: "s-1"},
		{IdentityEndpoint: s.AuthURL(), ApplicationCredentialName: "ac-ops", ApplicationCredentialSecret: "s-2", Username: "ops", DomainName: DefaultDomain},
	} {
		c := connect(t, s, ao)
		if _, err := servers.List(c.compute, nil).AllPages(ctx()); err != nil {
			t.Errorf("%s%s: %v", ao.Username, ao.ApplicationCredentialID, err)
		}
		project := s.opts.Users[0].ProjectID
		if ao.Username == "ops" {
			project = s.opts.Users[1].ProjectID
		}
		if _, err := quotas.Get(ctx(), c.lb, project).Extract(); err != nil {
			t.Errorf("%s%s: own project's quota: %v", ao.Username, ao.ApplicationCredentialID, err)
		}
	}
}
