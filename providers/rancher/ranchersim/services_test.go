package ranchersim

import (
	"net/http"
	"slices"
	"testing"

	rancher "github.com/rancher/go-rancher/v2"
)

// lbSetup is a cloud with two active hosts and one inactive, the LB
// stack and a client.
func lbSetup(t *testing.T) (*Server, *rancher.RancherClient, *rancher.Stack) {
	t.Helper()
	s, c := setup(t, Options{ProvisioningReads: -1})
	s.AddHost(Host{Hostname: "a"})
	s.AddHost(Host{Hostname: "b"})
	s.AddHost(Host{Hostname: "c", State: StateInactive})
	k, err := c.Stack.Create(&rancher.Stack{Name: "kubernetes-loadbalancers", ExternalId: "kubernetes-loadbalancers://"})
	if err != nil {
		t.Fatal(err)
	}
	return s, c, k
}

func globalLB(stackID, name string, ports ...string) *rancher.LoadBalancerService {
	return &rancher.LoadBalancerService{Name: name, StackId: stackID, LbConfig: &rancher.LbConfig{},
		LaunchConfig: &rancher.LaunchConfig{ImageUuid: "docker:" + DefaultLBImage, Ports: ports,
			Labels: map[string]any{LabelGlobal: "true"}}}
}

func TestLoadBalancerLifecycle(t *testing.T) {
	s, c, k := lbSetup(t)
	ext, err := c.ExternalService.Create(&rancher.ExternalService{Name: "nodes", StackId: k.Id,
		ExternalIpAddresses: []string{"10.0.0.11", "10.0.0.12"}})
	if err != nil {
		t.Fatal(err)
	}
	lb, err := c.LoadBalancerService.Create(globalLB(k.Id, "lb-web", "80:80/tcp"))
	if err != nil {
		t.Fatal(err)
	}
	if lb.State != StateInactive || len(lb.PublicEndpoints) != 0 {
		t.Errorf("created = %s %v", lb.State, lb.PublicEndpoints)
	}
	if _, err := c.LoadBalancerService.ActionSetservicelinks(lb, &rancher.SetServiceLinksInput{
		ServiceLinks: []rancher.ServiceLink{{ServiceId: ext.Id, Name: "nodes"}}}); err != nil {
		t.Fatal(err)
	}
	lb, _ = c.LoadBalancerService.ById(lb.Id)
	if _, err := c.LoadBalancerService.Update(lb, map[string]any{"lbConfig": rancher.LbConfig{PortRules: []rancher.PortRule{
		{SourcePort: 80, TargetPort: 31080, ServiceId: ext.Id, Protocol: "tcp"}}}}); err != nil {
		t.Fatal(err)
	}
	lb, _ = c.LoadBalancerService.ById(lb.Id)
	if _, err := c.LoadBalancerService.ActionActivate(lb); err != nil {
		t.Fatal(err)
	}
	lb, _ = c.LoadBalancerService.ById(lb.Id)
	if lb.State != StateActive || lb.Actions["deactivate"] == "" {
		t.Fatalf("activated = %s %v", lb.State, lb.Actions)
	}
	var ips []string
	for _, e := range lb.PublicEndpoints {
		ips = append(ips, e.IpAddress)
		if e.Port != 80 || e.ServiceId != lb.Id {
			t.Errorf("endpoint %+v", e)
		}
	}
	if want := []string{"10.0.0.11", "10.0.0.12"}; !slices.Equal(ips, want) {
		t.Errorf("endpoint IPs = %v, want %v (the active hosts)", ips, want)
	}
	lbs := s.Cloud().LoadBalancers()
	if len(lbs) != 1 || !slices.Equal(lbs[0].Listeners, []string{"TCP:80->:31080"}) || len(lbs[0].Members) != 2 {
		t.Errorf("LoadBalancers = %+v", lbs)
	}

	// A PUT of launchConfig is dropped; an upgrade changes the ports and
	// keeps the ID.
	if _, err := c.LoadBalancerService.Update(lb, map[string]any{"launchConfig": rancher.LaunchConfig{Ports: []string{"8080:8080/tcp"}}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Service(lb.Id); !slices.Equal(got.LaunchConfig.Ports, []string{"80:80/tcp"}) {
		t.Errorf("PUT changed the launch config: %v", got.LaunchConfig.Ports)
	}
	lb, _ = c.LoadBalancerService.ById(lb.Id)
	newLC := *lb.LaunchConfig
	newLC.Ports = []string{"443:443/tcp"}
	if _, err := c.LoadBalancerService.ActionUpgrade(lb, &rancher.ServiceUpgrade{
		InServiceStrategy: &rancher.InServiceUpgradeStrategy{LaunchConfig: &newLC, StartFirst: true}}); err != nil {
		t.Fatal(err)
	}
	lb, _ = c.LoadBalancerService.ById(lb.Id)
	if lb.State != StateUpgraded || lb.Actions["finishupgrade"] == "" {
		t.Fatalf("upgraded = %s %v", lb.State, lb.Actions)
	}
	if _, err := c.LoadBalancerService.ActionFinishupgrade(lb); err != nil {
		t.Fatal(err)
	}
	lb, _ = c.LoadBalancerService.ById(lb.Id)
	if lb.State != StateActive || len(lb.PublicEndpoints) != 2 || lb.PublicEndpoints[0].Port != 443 {
		t.Errorf("after the upgrade: %s %+v", lb.State, lb.PublicEndpoints)
	}

	var consumed rancher.ServiceCollection
	if err := c.GetLink(lb.Resource, "consumedservices", &consumed); err != nil || len(consumed.Data) != 1 || consumed.Data[0].Id != ext.Id {
		t.Errorf("consumedservices = %+v, %v", consumed.Data, err)
	}
	extNow, _ := c.ExternalService.ById(ext.Id)
	var by rancher.ServiceCollection
	if err := c.GetLink(extNow.Resource, "consumedbyservices", &by); err != nil || len(by.Data) != 1 || by.Data[0].Id != lb.Id {
		t.Errorf("consumedbyservices = %+v, %v", by.Data, err)
	}

	if err := c.LoadBalancerService.Delete(lb); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.LoadBalancerService.List(filters("name", "lb-web", "removed_null", "1")); len(got.Data) != 0 {
		t.Errorf("removed LB listed: %+v", got.Data)
	}
	if got, _ := c.LoadBalancerService.ById(lb.Id); got == nil || got.State != StateRemoved || got.Removed == "" {
		t.Errorf("removed LB = %+v", got)
	}
	if lbs := s.Cloud().LoadBalancers(); len(lbs) != 0 {
		t.Errorf("LoadBalancers after removal = %+v", lbs)
	}
}

func TestServiceValidation(t *testing.T) {
	s, c, k := lbSetup(t)
	for _, tc := range []struct {
		name string
		lb   *rancher.LoadBalancerService
		want []string
	}{
		{"no stack", &rancher.LoadBalancerService{Name: "x", LaunchConfig: &rancher.LaunchConfig{}, LbConfig: &rancher.LbConfig{}},
			[]string{"code=MissingRequired", "fieldName=stackId"}},
		{"unknown stack", &rancher.LoadBalancerService{Name: "x", StackId: "1st99", LaunchConfig: &rancher.LaunchConfig{}, LbConfig: &rancher.LbConfig{}},
			[]string{"code=InvalidReference", "fieldName=stackId"}},
		{"no name", globalLB(k.Id, ""), []string{"code=MissingRequired", "fieldName=name"}},
		{"bad ports", globalLB(k.Id, "x", "80:80/sctp"), []string{"code=InvalidFormat", "fieldName=ports"}},
		{"no launch config", &rancher.LoadBalancerService{Name: "x", StackId: k.Id, LbConfig: &rancher.LbConfig{}},
			[]string{"code=MissingRequired", "fieldName=launchConfig"}},
		{"bad protocol", &rancher.LoadBalancerService{Name: "x", StackId: k.Id, LaunchConfig: &rancher.LaunchConfig{},
			LbConfig: &rancher.LbConfig{PortRules: []rancher.PortRule{{SourcePort: 80, Protocol: "sctp"}}}},
			[]string{"code=InvalidOption", "fieldName=protocol"}},
		{"unknown backend", &rancher.LoadBalancerService{Name: "x", StackId: k.Id, LaunchConfig: &rancher.LaunchConfig{},
			LbConfig: &rancher.LbConfig{PortRules: []rancher.PortRule{{SourcePort: 80, Protocol: "tcp", ServiceId: "1s99"}}}},
			[]string{"code=InvalidReference", "fieldName=serviceId"}},
	} {
		_, err := c.LoadBalancerService.Create(tc.lb)
		t.Run(tc.name, func(t *testing.T) { wantAPIError(t, err, http.StatusUnprocessableEntity, tc.want...) })
	}
	if _, err := c.LoadBalancerService.Create(globalLB(k.Id, "dup", "53:53/udp")); err != nil {
		t.Fatal(err)
	}
	_, err := c.ExternalService.Create(&rancher.ExternalService{Name: "dup", StackId: k.Id})
	wantAPIError(t, err, http.StatusUnprocessableEntity, "code=NotUnique", "fieldName=name")

	lb, _ := s.ServiceByName("dup")
	got, _ := c.LoadBalancerService.ById(lb.ID)
	_, err = c.LoadBalancerService.ActionSetservicelinks(got, &rancher.SetServiceLinksInput{ServiceLinks: []rancher.ServiceLink{{ServiceId: "1s99"}}})
	wantAPIError(t, err, http.StatusUnprocessableEntity, "code=InvalidReference")
	// An inactive service offers no deactivate: go-rancher refuses, and a
	// hand-made POST gets 422 ActionNotAvailable.
	if _, err := c.LoadBalancerService.ActionDeactivate(got); err == nil {
		t.Error("deactivate of an inactive LB: no error")
	}
	var out map[string]any
	err = c.Post(got.Links["self"]+"?action=deactivate", nil, &out)
	wantAPIError(t, err, http.StatusUnprocessableEntity, "code=ActionNotAvailable")
	err = c.Post(got.Links["self"]+"?action=explode", nil, &out)
	wantAPIError(t, err, http.StatusUnprocessableEntity, "code=InvalidAction")
}

func TestServiceTransitions(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 2})
	k := s.AddStack(Stack{Name: "st"})
	lb, err := c.LoadBalancerService.Create(&rancher.LoadBalancerService{Name: "lb", StackId: k.ID,
		LaunchConfig: &rancher.LaunchConfig{Ports: []string{"80:80/tcp"}}, LbConfig: &rancher.LbConfig{}})
	if err != nil {
		t.Fatal(err)
	}
	if lb.State != StateRegistering || lb.Transitioning != "yes" {
		t.Errorf("created = %s/%s", lb.State, lb.Transitioning)
	}
	s.Advance()
	got, _ := c.LoadBalancerService.ById(lb.Id)
	if got.State != StateInactive || got.Transitioning != "no" || got.Actions["activate"] == "" {
		t.Errorf("after Advance = %s/%s %v", got.State, got.Transitioning, got.Actions)
	}
}

// TestExternalServiceUpdate: a PUT changes an external service's IPs and
// drops its healthCheck, which the v2-beta schema does not mark
// updatable, as Cattle does: no error, the health check unchanged.
func TestExternalServiceUpdate(t *testing.T) {
	s, c, k := lbSetup(t)
	ext, err := c.ExternalService.Create(&rancher.ExternalService{Name: "nodes", StackId: k.Id,
		ExternalIpAddresses: []string{"10.0.0.11"}, HealthCheck: &rancher.InstanceHealthCheck{Port: 32100, RequestLine: "GET /healthz"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ExternalService.Update(ext, map[string]any{
		"externalIpAddresses": []string{"10.0.0.11", "10.0.0.12"},
		"healthCheck":         rancher.InstanceHealthCheck{Port: 32200, RequestLine: "GET /other"},
	}); err != nil {
		t.Fatalf("PUT: %v", err)
	}
	got, _ := s.Service(ext.Id)
	if !slices.Equal(got.ExternalIPAddresses, []string{"10.0.0.11", "10.0.0.12"}) {
		t.Errorf("externalIpAddresses = %v, want the PUT's", got.ExternalIPAddresses)
	}
	if hc := got.HealthCheck; hc == nil || hc.Port != 32100 || hc.RequestLine != "GET /healthz" {
		t.Errorf("healthCheck after a PUT = %+v, want the created one (port 32100) unchanged", hc)
	}
	if f := mustSchema(KindExternal).fields["healthCheck"]; !f.Create || f.Update {
		t.Errorf("externalService.healthCheck schema: create %v update %v, want create only", f.Create, f.Update)
	}
}
