package brightbox

import (
	"fmt"
	"slices"
	"testing"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"github.com/brightbox/gobrightbox/v2/enums/balancingpolicy"
	"github.com/brightbox/gobrightbox/v2/enums/healthchecktype"
	"github.com/brightbox/gobrightbox/v2/enums/listenerprotocol"
	"github.com/brightbox/gobrightbox/v2/enums/proxyprotocol"
)

func TestLBChanges(t *testing.T) {
	// lb is a load balancer as the API returns it: its defaults filled in
	// (timeouts, thresholds), lists in its own order.
	lb := func() *brightbox.LoadBalancer {
		return &brightbox.LoadBalancer{
			Name: "web.default.c1", Policy: balancingpolicy.LeastConnections, HTTPSRedirect: true,
			Listeners: []brightbox.LoadBalancerListener{
				{Protocol: listenerprotocol.Https, In: 443, Out: 30443, Timeout: 50000},
				{Protocol: listenerprotocol.Http, In: 80, Out: 30080, Timeout: 50000},
			},
			Healthcheck: brightbox.LoadBalancerHealthcheck{Type: healthchecktype.Http, Port: 30080, Request: "/healthz", Interval: 5000, Timeout: 5000, ThresholdUp: 3, ThresholdDown: 3},
			Nodes:       []brightbox.Server{{ID: "srv-bbbbb"}, {ID: "srv-aaaaa"}},
			Acme:        &brightbox.LoadBalancerAcme{Domains: []brightbox.LoadBalancerAcmeDomain{{Identifier: "www.example.com", Status: "valid"}, {Identifier: "cip-12345.gb1.brightbox.com", Status: "valid"}}},
		}
	}
	// want is the CCM's desired spec for the same thing, leaving the
	// numbers to the API.
	want := func() *brightbox.LoadBalancerOptions {
		name, redirect := "web.default.c1", true
		domains := []string{"cip-12345.gb1.brightbox.com", "www.example.com"}
		return &brightbox.LoadBalancerOptions{
			Name: &name, Policy: balancingpolicy.LeastConnections, HTTPSRedirect: &redirect, Domains: &domains,
			Listeners: []brightbox.LoadBalancerListener{
				{Protocol: listenerprotocol.Http, In: 80, Out: 30080},
				{Protocol: listenerprotocol.Https, In: 443, Out: 30443},
			},
			Healthcheck: &brightbox.LoadBalancerHealthcheck{Type: healthchecktype.Http, Port: 30080, Request: "/healthz"},
			Nodes:       []brightbox.LoadBalancerNode{{Node: "srv-aaaaa"}, {Node: "srv-bbbbb"}},
		}
	}
	if got := lbChanges(compact(lb()), want()); len(got) != 0 {
		t.Fatalf("the API's defaults and order count as changes: %v", got)
	}
	for name, tc := range map[string]struct {
		edit func(*brightbox.LoadBalancerOptions)
		want string
	}{
		"a node leaves":      {func(o *brightbox.LoadBalancerOptions) { o.Nodes = o.Nodes[:1] }, "nodes"},
		"a node port moves":  {func(o *brightbox.LoadBalancerOptions) { o.Listeners[0].Out = 31000 }, "listeners"},
		"a port is added":    {func(o *brightbox.LoadBalancerOptions) { o.Listeners = append(o.Listeners, o.Listeners[0]) }, "listeners"},
		"proxy protocol":     {func(o *brightbox.LoadBalancerOptions) { o.Listeners[1].ProxyProtocol = proxyprotocol.V2 }, "listeners"},
		"idle timeout set":   {func(o *brightbox.LoadBalancerOptions) { o.Listeners[0].Timeout = 90000 }, "listeners"},
		"health check port":  {func(o *brightbox.LoadBalancerOptions) { o.Healthcheck.Port = 32000 }, "health check"},
		"health check path":  {func(o *brightbox.LoadBalancerOptions) { o.Healthcheck.Request = "/ready" }, "health check"},
		"threshold set":      {func(o *brightbox.LoadBalancerOptions) { o.Healthcheck.ThresholdUp = 5 }, "health check"},
		"policy":             {func(o *brightbox.LoadBalancerOptions) { o.Policy = balancingpolicy.RoundRobin }, "policy"},
		"a domain is added":  {func(o *brightbox.LoadBalancerOptions) { *o.Domains = append(*o.Domains, "api.example.com") }, "domains"},
		"https removed":      {func(o *brightbox.LoadBalancerOptions) { *o.Domains = []string{} }, "domains"},
		"no https redirect":  {func(o *brightbox.LoadBalancerOptions) { f := false; o.HTTPSRedirect = &f }, "https redirect"},
		"renamed":            {func(o *brightbox.LoadBalancerOptions) { n := "other"; o.Name = &n }, "name"},
		"threshold as it is": {func(o *brightbox.LoadBalancerOptions) { o.Healthcheck.ThresholdDown = 3 }, ""},
		"timeout as it is":   {func(o *brightbox.LoadBalancerOptions) { o.Listeners[1].Timeout = 50000 }, ""},
	} {
		t.Run(name, func(t *testing.T) {
			w := want()
			tc.edit(w)
			got := lbChanges(compact(lb()), w)
			if tc.want == "" && len(got) != 0 || tc.want != "" && !slices.Equal(got, []string{tc.want}) {
				t.Errorf("lbChanges = %v, want [%s]", got, tc.want)
			}
		})
	}
}

func TestRuleChanges(t *testing.T) {
	have := &brightbox.FirewallRule{Protocol: "tcp", Source: "10.0.0.0/8", DestinationPort: "30443,30080", Description: "web.default.c1"}
	want := firewallRule{Protocol: "tcp", Source: "10.0.0.0/8", DestinationPort: "30080,30443", Description: "web.default.c1"}
	if got := ruleChanges(have, want); len(got) != 0 {
		t.Errorf("the same ports in another order count as a change: %v", got)
	}
	want.DestinationPort = "30080,30443,31000"
	if got := ruleChanges(have, want); !slices.Equal(got, []string{"destination ports"}) {
		t.Errorf("ruleChanges with a health-check port added = %v", got)
	}
	want = firewallRule{Protocol: "udp", Source: "0.0.0.0/0", DestinationPort: "30080,30443", Description: "x"}
	if got := ruleChanges(have, want); !slices.Equal(got, []string{"protocol", "source", "description"}) {
		t.Errorf("ruleChanges = %v", got)
	}
}

func TestMembership(t *testing.T) {
	add, remove := membership([]string{"srv-a", "srv-b"}, []string{"srv-b", "srv-c"})
	if !slices.Equal(add, []string{"srv-c"}) || !slices.Equal(remove, []string{"srv-a"}) {
		t.Errorf("membership = add %v, remove %v; want add [srv-c], remove [srv-a]", add, remove)
	}
	if add, remove := membership([]string{"srv-a"}, []string{"srv-a"}); add != nil || remove != nil {
		t.Errorf("membership of the same servers = add %v, remove %v; want nothing", add, remove)
	}
}

// TestMembershipLarge: 5,000 servers a side (a shared group at 5,000
// nodes) diff in linear time, and without keeps the order.
func TestMembershipLarge(t *testing.T) {
	have, want := make([]string, 5000), make([]string, 5000)
	for i := range have {
		have[i], want[i] = fmt.Sprintf("srv-%05d", i), fmt.Sprintf("srv-%05d", i+1)
	}
	add, remove := membership(have, want)
	if !slices.Equal(add, []string{"srv-05000"}) || !slices.Equal(remove, []string{"srv-00000"}) {
		t.Errorf("membership = add %v, remove %v; want add [srv-05000], remove [srv-00000]", add, remove)
	}
	if got := without([]string{"srv-c", "srv-a", "srv-b"}, []string{"srv-a"}); !slices.Equal(got, []string{"srv-c", "srv-b"}) {
		t.Errorf("without = %v, want [srv-c srv-b]", got)
	}
}
