package gbsim

import "testing"

// TestDocumentsHaveTheSDKsShape decodes every kind of document with
// unknown fields refused: each field the simulator writes is one
// gobrightbox knows.
func TestDocumentsHaveTheSDKsShape(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	c.DisallowUnknownFields()
	srv := s.AddServer(CloudServer{Name: "a"})
	lb := s.AddLoadBalancer(LoadBalancer{Name: "lb", Nodes: []string{srv.ID},
		Listeners:   []Listener{{Protocol: "https", In: 443, Out: 31443, ProxyProtocol: "v2"}},
		Healthcheck: Healthcheck{Type: "http", Port: 31443}, Domains: []ACMEDomain{{Identifier: "example.com", Status: ACMEPending}}})
	cip := s.AddCloudIP(CloudIP{Target: lb.ID, PortTranslators: []PortTranslator{{Incoming: 1, Outgoing: 2, Protocol: "udp"}}})
	srvCIP := s.AddCloudIP(CloudIP{Target: srv.ID})
	g := s.AddServerGroup(ServerGroup{Name: "g", Servers: []string{srv.ID}})
	p := s.AddFirewallPolicy(FirewallPolicy{Name: "p", ServerGroup: g.ID}, FirewallRule{Protocol: "tcp", Source: "any", DestinationPort: "80"})
	s.Advance()

	check := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	_, err := c.Accounts(ctx())
	check("accounts", err)
	_, err = c.Account(ctx(), s.Account())
	check("account", err)
	_, err = c.Zones(ctx())
	check("zones", err)
	_, err = c.ServerTypes(ctx())
	check("server types", err)
	_, err = c.Servers(ctx())
	check("servers", err)
	_, err = c.Server(ctx(), srv.ID)
	check("server", err)
	_, err = c.Interface(ctx(), srv.Interface)
	check("interface", err)
	_, err = c.LoadBalancers(ctx())
	check("load balancers", err)
	_, err = c.LoadBalancer(ctx(), lb.ID)
	check("load balancer", err)
	_, err = c.CloudIPs(ctx())
	check("cloud IPs", err)
	_, err = c.CloudIP(ctx(), cip.ID)
	check("cloud IP", err)
	_, err = c.CloudIP(ctx(), srvCIP.ID)
	check("server's cloud IP", err)
	_, err = c.ServerGroups(ctx())
	check("server groups", err)
	_, err = c.FirewallPolicies(ctx())
	check("firewall policies", err)
	_, err = c.FirewallPolicy(ctx(), p.ID)
	check("firewall policy", err)
	_, err = c.FirewallRules(ctx())
	check("firewall rules", err)
	_, err = c.DestroyLoadBalancer(ctx(), lb.ID)
	check("destroyed load balancer", err)
}
