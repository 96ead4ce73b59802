package digitalocean

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
)

// TestFirewallRealShapeNotRewritten: the API answers "0" for the "all"
// ports the controller asks for, and "0" for every ICMP rule (openapi
// specification/resources/firewalls/models/firewall_rule.yml; godo's
// firewalls_test.go fixtures; godo issue 149), and dosim answers so. An
// existing firewall that holds what the Services need, read back in that
// shape, is adopted without a write, and no sync after that writes it
// either: neither a resync nor a Service change that changes no rule.
func TestFirewallRealShapeNotRewritten(t *testing.T) {
	h := newFWHarness(t)
	svcs := []*corev1.Service{
		testService("np", corev1.ServiceTypeNodePort, port(corev1.ProtocolTCP, 80, 30080), port(corev1.ProtocolUDP, 53, 30053)),
	}
	for _, svc := range svcs {
		h.createService(svc)
	}
	// The firewall as an earlier run of the controller left it.
	logger, _ := ktesting.NewTestContext(t)
	spec := firewallSpec{name: testFirewallName, tags: []string{testWorkerTag}, defaultLBType: LoadBalancerTypeRegional}
	fw, _, err := h.api.Firewalls.Create(h.ctx, spec.desiredFirewall(logger, svcs))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range fw.OutboundRules {
		got[r.Protocol] = r.PortRange
	}
	if got["icmp"] != "0" || got["tcp"] != "0" || got["udp"] != "0" {
		t.Fatalf("outbound ports answered %v, want the API's \"0\" for icmp and all ports", got)
	}
	writes := h.sim.Writes()

	h.start(firewallOptions{})
	// The first sync lists the firewalls and compares; the worker is
	// single, so once a resync has read the firewall by ID, that first
	// sync is over.
	for i := 1; i <= 2; i++ {
		h.stepUntil("a resync reads the firewall", firewallResync, func() bool {
			return firewallCalls(h.sim)["GET /v2/firewalls/{id}"] >= i
		})
	}
	svcs[0].Labels = map[string]string{"touched": "yes"}
	h.updateService(svcs[0])
	h.stepUntil("a resync after the Service change", firewallResync, func() bool {
		return firewallCalls(h.sim)["GET /v2/firewalls/{id}"] >= 3
	})
	if n := h.sim.Writes() - writes; n != 0 {
		t.Errorf("the controller wrote the unchanged firewall %d times: %v", n, firewallCalls(h.sim))
	}
	if got := firewallCalls(h.sim)["GET /v2/firewalls"]; got != 1 {
		t.Errorf("%d lists, want the first sync's 1", got)
	}
}
