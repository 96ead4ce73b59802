package gbsim

import (
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
)

func TestExampleScenario(t *testing.T) {
	data, err := os.ReadFile("../../../examples/cloudsim/brightbox.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewFromScenario(data)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(s.Close)
	c := connect(t, s)
	lbs, err := c.LoadBalancers(ctx())
	if err != nil || len(lbs) != 1 {
		t.Fatalf("load balancers = %+v, %v", lbs, err)
	}
	lb := lbs[0]
	if lb.Name != "web.default.kubernetes" || len(lb.Nodes) != 2 || len(lb.CloudIPs) != 1 {
		t.Errorf("load balancer = %q, %d nodes, %d cloud IPs", lb.Name, len(lb.Nodes), len(lb.CloudIPs))
	}
	policies, err := c.FirewallPolicies(ctx())
	if err != nil || len(policies) != 2 || policies[1].ServerGroup == nil || len(policies[1].Rules) != 1 {
		t.Fatalf("firewall policies = %+v, %v", policies, err)
	}
	if env := s.Env(s.URL()); env["BRIGHTBOX_CLIENT_SECRET"] != "cloudsim-secret" || env["BRIGHTBOX_ACCOUNT"] != "acc-43ks4" {
		t.Errorf("env = %v", env)
	}
}

func TestScenarioErrors(t *testing.T) {
	for name, tc := range map[string]struct{ yaml, want string }{
		"unknown key":      {"servrs: []", `unknown field "servrs"`},
		"other provider":   {"provider: digitalocean", "provider"},
		"bad zone":         {"servers: [{name: a, zone: gb9-z}]", `zone: "gb9-z" is not one of gb1-a, gb1-b`},
		"unknown node":     {"loadBalancers: [{name: x, listeners: [{protocol: tcp, in: 80, out: 80}], healthcheck: {type: tcp, port: 80}, nodes: [b]}]", `no "b" in the scenario`},
		"bad policy":       {"loadBalancers: [{name: x, policy: fastest, listeners: [{protocol: tcp, in: 80, out: 80}], healthcheck: {type: tcp, port: 80}}]", `policy: "fastest"`},
		"bad fault op":     {"faults: [{operation: nope.list, status: 500}]", "unknown operation"},
		"bad TTL":          {"tokenTTL: soon", "tokenTTL"},
		"rule without end": {"firewallPolicies: [{name: p, rules: [{protocol: tcp}]}]", "source or a destination"},
	} {
		_, err := NewFromScenario([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to mention %q", name, err, tc.want)
		}
	}
}

// TestScenarioCredentials: an account has many API clients and users
// (Brightbox's API clients and collaborators); a scenario registers more
// than one of each, and every one logs in, to the same account.
func TestScenarioCredentials(t *testing.T) {
	s, err := NewFromScenario([]byte(`
clientID: cli-main1
clientSecret: main-secret
clients:
- {id: cli-ops01, secret: ops-secret}
- {id: cli-ci002, secret: ci-secret}
username: me@example.com
password: my-password
users:
- {username: ops@example.com, password: ops-password}
`))
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(s.Close)
	for _, cl := range []APIClient{{"cli-main1", "main-secret"}, {"cli-ops01", "ops-secret"}, {"cli-ci002", "ci-secret"}} {
		accounts, err := connectAs(t, s, cl.ID, cl.Secret).Accounts(ctx())
		if err != nil || len(accounts) != 1 || accounts[0].ID != DefaultAccount {
			t.Errorf("%s: accounts = %+v, %v", cl.ID, accounts, err)
		}
	}
	_, err = connectAs(t, s, "cli-ops01", "main-secret").Accounts(ctx())
	if err == nil {
		t.Error("cli-ops01 logged in with another client's secret")
	}
	for _, u := range []User{{"me@example.com", "my-password"}, {"ops@example.com", "ops-password"}} {
		form := url.Values{"grant_type": {"password"}, "username": {u.Username}, "password": {u.Password},
			"client_id": {DefaultAppID}, "client_secret": {DefaultAppSecret}}
		resp, err := http.PostForm(s.URL()+"/token/", form)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: token status %d", u.Username, resp.StatusCode)
		}
	}

	for name, tc := range map[string]struct{ yaml, want string }{
		"not a client ID": {"clients: [{id: app-12345, secret: x}]", "clients[0].id"},
		"no secret":       {"clients: [{id: cli-12345}]", "clients[0].secret: required"},
		"the main client": {"clients: [{id: cli-dsse2, secret: x}]", "given twice"},
		"duplicate user":  {"users: [{username: a@b.c, password: x}, {username: a@b.c, password: y}]", "users[1].username"},
		"no password":     {"users: [{username: a@b.c}]", "users[0].password: required"},
	} {
		_, err := NewFromScenario([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to mention %q", name, err, tc.want)
		}
	}
}
