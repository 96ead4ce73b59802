package ranchersim

import (
	"net/http"
	"slices"
	"testing"

	rancher "github.com/rancher/go-rancher/v2"
)

// TestServiceTypeUpdateAndActions: the service type is the parent of
// every kind, with resourceMethods GET, PUT, DELETE and the services'
// actions (go-rancher's docs/input/schemas.json). The Rancher CLI v0.6
// scales with c.Update("service", <service>, {"scale": n}) (cmd/
// scale.go) after finding the service by ID under /services, and
// starts, stops and removes with c.Action(<type>, ...) and c.Delete.
func TestServiceTypeUpdateAndActions(t *testing.T) {
	s, c, k := lbSetup(t)
	lb := s.AddService(Service{Name: "web", StackID: k.Id, LaunchConfig: &LaunchConfig{Ports: []string{"80:80/tcp"}}})
	if d := mustSchema("service"); !slices.Equal(d.resourceMethods, []string{"GET", "PUT", "DELETE"}) {
		t.Errorf("service resourceMethods = %v, want GET, PUT, DELETE", d.resourceMethods)
	}
	var res rancher.Resource
	if err := c.ById("service", lb.ID, &res); err != nil || res.Id != lb.ID {
		t.Fatalf("ById(service, %s) = %+v, %v", lb.ID, res, err)
	}
	if err := c.Update("service", &res, map[string]any{"scale": 2}, &res); err != nil {
		t.Fatalf("Update(service, scale 2): %v", err)
	}
	if got, _ := s.Service(lb.ID); got.Scale != 2 || got.State != StateActive {
		t.Errorf("after the scale: scale %d, %s; want 2, active", got.Scale, got.State)
	}
	if eps := s.Endpoints(lb.ID); len(eps) != 2 {
		t.Errorf("endpoints at scale 2: %+v, want one on each active host", eps)
	}
	a := call(t, s, http.MethodPut, "/services/"+lb.ID, `{"scale": 1}`)
	if got, _ := s.Service(lb.ID); a.status != http.StatusOK || got.Scale != 1 {
		t.Errorf("PUT /services/%s scale 1: %d, scale %d", lb.ID, a.status, got.Scale)
	}
	if a := call(t, s, http.MethodPost, "/services/"+lb.ID+"?action=deactivate", ""); a.status != http.StatusAccepted {
		t.Errorf("deactivate under /services: %d %v", a.status, a.body)
	}
	if got, _ := s.Service(lb.ID); got.State != StateInactive {
		t.Errorf("after deactivate: %s", got.State)
	}
	if a := call(t, s, http.MethodDelete, "/services/"+lb.ID, ""); a.status != http.StatusOK {
		t.Errorf("DELETE /services/%s: %d %v", lb.ID, a.status, a.body)
	}
	if got, _ := s.Service(lb.ID); got.State != StateRemoved {
		t.Errorf("after DELETE: %s", got.State)
	}
}

// TestCancelAndContinueUpgrade: Cattle offers an action where its
// process can start (AbstractObjectResourceManager.addActions), and its
// spring-process-context.xml has service.cancelupgrade start
// "upgrading,finishing-upgrade" (canceling-upgrade, then
// canceled-upgrade) and service.continueupgrade start "canceled-upgrade"
// (upgrading, then upgraded); rollback starts from upgrading, upgraded
// and canceled-upgrade.
func TestCancelAndContinueUpgrade(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 1 << 20})
	k := s.AddStack(Stack{Name: "st", State: StateActive})
	lb := s.AddService(Service{Name: "web", StackID: k.ID, LaunchConfig: &LaunchConfig{Ports: []string{"80:80/tcp"}}})
	actionsOf := func() (string, []string) {
		got, err := c.LoadBalancerService.ById(lb.ID)
		if err != nil || got == nil {
			t.Fatalf("ById: %v", err)
		}
		return got.State, mapsKeys(got.Actions)
	}
	has := func(actions []string, want ...string) bool {
		for _, w := range want {
			if !slices.Contains(actions, w) {
				return false
			}
		}
		return true
	}
	got, _ := c.LoadBalancerService.ById(lb.ID)
	lc := *got.LaunchConfig
	lc.Ports = []string{"8080:8080/tcp"}
	if _, err := c.LoadBalancerService.ActionUpgrade(got, &rancher.ServiceUpgrade{
		InServiceStrategy: &rancher.InServiceUpgradeStrategy{LaunchConfig: &lc}}); err != nil {
		t.Fatal(err)
	}
	state, actions := actionsOf()
	if state != StateUpgrading || !has(actions, "cancelupgrade", "rollback", "update", "remove") || has(actions, "continueupgrade") {
		t.Fatalf("upgrading: %s %v", state, actions)
	}
	got, _ = c.LoadBalancerService.ById(lb.ID)
	if err := c.Action(KindLoadBalancer, "cancelupgrade", &got.Resource, nil, &rancher.Resource{}); err != nil {
		t.Fatalf("cancelupgrade: %v", err)
	}
	if state, actions = actionsOf(); state != StateCancelingUpgrade || !has(actions, "remove", "update") || has(actions, "continueupgrade") {
		t.Errorf("canceling: %s %v", state, actions)
	}
	s.Advance()
	state, actions = actionsOf()
	if state != StateCanceledUpgrade || !has(actions, "continueupgrade", "rollback", "remove") || has(actions, "cancelupgrade", "finishupgrade") {
		t.Fatalf("canceled: %s %v", state, actions)
	}
	got, _ = c.LoadBalancerService.ById(lb.ID)
	if err := c.Action(KindLoadBalancer, "continueupgrade", &got.Resource, nil, &rancher.Resource{}); err != nil {
		t.Fatalf("continueupgrade: %v", err)
	}
	if state, _ = actionsOf(); state != StateUpgrading {
		t.Errorf("continuing: %s, want upgrading", state)
	}
	s.Advance()
	if state, actions = actionsOf(); state != StateUpgraded || !has(actions, "finishupgrade", "rollback") || has(actions, "cancelupgrade") {
		t.Errorf("continued: %s %v, want upgraded", state, actions)
	}
	for _, name := range []string{"cancelupgrade", "continueupgrade"} {
		if _, ok := mustSchema(KindLoadBalancer).actions[name]; !ok {
			t.Errorf("loadBalancerService schema lacks %s", name)
		}
	}
}

// TestTransitioningMessage: while a resource transitions Cattle writes
// transitioning "yes" and, when its process said nothing more,
// transitioningMessage "In Progress" (DefaultObjectMetaDataManager.
// getTransitionFields); settled, "no" and null.
func TestTransitioningMessage(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 1 << 20})
	k, err := c.Stack.Create(&rancher.Stack{Name: "st"})
	if err != nil {
		t.Fatal(err)
	}
	if k.Transitioning != "yes" || k.TransitioningMessage != messageInProgress {
		t.Errorf("activating stack: %q %q", k.Transitioning, k.TransitioningMessage)
	}
	h := s.AddHost(Host{Hostname: "a"})
	lb, err := c.LoadBalancerService.Create(&rancher.LoadBalancerService{Name: "lb", StackId: k.Id,
		LaunchConfig: &rancher.LaunchConfig{Ports: []string{"80:80/tcp"}}, LbConfig: &rancher.LbConfig{}})
	if err != nil {
		t.Fatal(err)
	}
	if lb.State != StateRegistering || lb.TransitioningMessage != messageInProgress {
		t.Errorf("registering LB: %s %q", lb.State, lb.TransitioningMessage)
	}
	s.Advance()
	a := call(t, s, http.MethodGet, "/loadbalancerservices/"+lb.Id, "")
	if a.body["transitioning"] != "no" || a.body["transitioningMessage"] != nil {
		t.Errorf("settled LB: %v %v, want no and null", a.body["transitioning"], a.body["transitioningMessage"])
	}
	hd, _ := c.Host.ById(h.ID)
	if _, err := c.Host.ActionDeactivate(hd); err != nil {
		t.Fatal(err)
	}
	if hd, _ = c.Host.ById(h.ID); hd.State != StateDeactivating || hd.TransitioningMessage != messageInProgress {
		t.Errorf("deactivating host: %s %q", hd.State, hd.TransitioningMessage)
	}
}
