package ranchersim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	rancher "github.com/rancher/go-rancher/v2"
)

// TestCompanions: a load balancer's addresses are its public endpoints'
// IPs; the external services it links to or its port rules target serve
// it, and none once it is removed; a removed external service is gone.
func TestCompanions(t *testing.T) {
	s, c, k := lbSetup(t)
	external := func(name string) *rancher.ExternalService {
		t.Helper()
		ext, err := c.ExternalService.Create(&rancher.ExternalService{Name: name, StackId: k.Id, ExternalIpAddresses: []string{"10.0.0.11"}})
		if err != nil {
			t.Fatal(err)
		}
		return ext
	}
	linked, targeted, spare := external("lb-web-nodes"), external("lb-web-other"), external("spare")
	lb, err := c.LoadBalancerService.Create(globalLB(k.Id, "lb-web", "80:80/tcp", "53:53/udp"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.LoadBalancerService.ActionSetservicelinks(lb, &rancher.SetServiceLinksInput{
		ServiceLinks: []rancher.ServiceLink{{ServiceId: linked.Id, Name: "nodes"}}}); err != nil {
		t.Fatal(err)
	}
	lb, _ = c.LoadBalancerService.ById(lb.Id)
	if _, err := c.LoadBalancerService.Update(lb, map[string]any{"lbConfig": rancher.LbConfig{PortRules: []rancher.PortRule{
		{SourcePort: 80, TargetPort: 31080, ServiceId: linked.Id, Protocol: "tcp"},
		{SourcePort: 53, TargetPort: 31053, ServiceId: targeted.Id, Protocol: "udp"}}}}); err != nil {
		t.Fatal(err)
	}
	if lbs := s.Cloud().LoadBalancers(); len(lbs) != 1 || lbs[0].Addresses != nil {
		t.Errorf("LoadBalancers while inactive = %+v, want no addresses", lbs)
	}
	lb, _ = c.LoadBalancerService.ById(lb.Id)
	if _, err := c.LoadBalancerService.ActionActivate(lb); err != nil {
		t.Fatal(err)
	}
	s.Advance()
	// Two ports on each of the two active hosts: each host's agent IP once.
	if lbs := s.Cloud().LoadBalancers(); len(lbs) != 1 || !cmp.Equal(lbs[0].Addresses, []string{"10.0.0.11", "10.0.0.12"}) {
		t.Errorf("LoadBalancers = %+v, want the active hosts' agent IPs as addresses", lbs)
	}
	want := map[string]string{
		"externalservice/" + linked.Id:   lb.Id,
		"externalservice/" + targeted.Id: lb.Id,
		"externalservice/" + spare.Id:    "",
	}
	if diff := cmp.Diff(want, s.Cloud().Companions()); diff != "" {
		t.Errorf("Companions (-want +got):\n%s", diff)
	}

	lb, _ = c.LoadBalancerService.ById(lb.Id)
	if _, err := c.LoadBalancerService.ActionRemove(lb); err != nil {
		t.Fatal(err)
	}
	s.Advance()
	for k := range want {
		want[k] = ""
	}
	if diff := cmp.Diff(want, s.Cloud().Companions()); diff != "" {
		t.Errorf("Companions after the load balancer's removal (-want +got):\n%s", diff)
	}
	if _, err := c.ExternalService.ActionRemove(spare); err != nil {
		t.Fatal(err)
	}
	s.Advance()
	delete(want, "externalservice/"+spare.Id)
	if diff := cmp.Diff(want, s.Cloud().Companions()); diff != "" {
		t.Errorf("Companions after the spare's removal (-want +got):\n%s", diff)
	}
}
