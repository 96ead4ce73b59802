package rancher_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
)

// TestLoadBalancerMigration seeds what rancher/rancher-cloud-controller-manager
// left for a Service: its stack, its lb-<name> load balancer (active, with
// public endpoints) and one external service per node, each linked and
// the target of its own port rules, one of them also consumed by another
// load balancer. The new CCM adopts the stack and the load balancer as
// they are (same IDs, same endpoints) and folds the per-node services into
// one; after every write Cattle answered, each port rule still goes to a
// live, linked external service holding IPs.
func TestLoadBalancerMigration(t *testing.T) {
	f := newLBFixture(t, frameworktest.LBOptions{})
	svc := f.Service(t, "web", nil, func(s *corev1.Service) { s.Spec.Ports = s.Spec.Ports[:1] })
	stack := f.sim.AddStack(ranchersim.Stack{Name: lbStack, ExternalID: lbStack + "://", State: ranchersim.StateActive})
	var perNode []ranchersim.Service
	for _, n := range f.Nodes {
		perNode = append(perNode, f.sim.AddService(ranchersim.Service{
			Kind: ranchersim.KindExternal, Name: n.Name, StackID: stack.ID,
			ExternalIPAddresses: []string{n.Status.Addresses[0].Address},
		}))
	}
	var rules []ranchersim.PortRule
	var links []ranchersim.ServiceLink
	for _, e := range perNode {
		rules = append(rules, ranchersim.PortRule{SourcePort: 80, TargetPort: 30080, Protocol: "tcp", ServiceID: e.ID})
		links = append(links, ranchersim.ServiceLink{ServiceID: e.ID})
	}
	name := "lb-" + cloudprovider.DefaultLoadBalancerName(svc)
	old := f.sim.AddService(ranchersim.Service{
		Name: name, StackID: stack.ID,
		LaunchConfig: &ranchersim.LaunchConfig{Ports: []string{"80:80/tcp"}, ImageUUID: "docker:" + ranchersim.DefaultLBImage},
		LBConfig:     &ranchersim.LBConfig{PortRules: rules},
		Links:        links,
	})
	// Another Service's load balancer consumes node-b's service too.
	other := f.sim.AddService(ranchersim.Service{
		Name: "lb-aother", StackID: stack.ID,
		LaunchConfig: &ranchersim.LaunchConfig{Ports: []string{"81:81/tcp"}, ImageUUID: "docker:" + ranchersim.DefaultLBImage},
		LBConfig:     &ranchersim.LBConfig{PortRules: []ranchersim.PortRule{{SourcePort: 81, TargetPort: 30081, Protocol: "tcp", ServiceID: perNode[0].ID}}},
		Links:        []ranchersim.ServiceLink{{ServiceID: perNode[0].ID}},
	})
	endpoints := endpointIPs(f.sim.Endpoints(old.ID))
	if len(endpoints) == 0 {
		t.Fatal("the seeded load balancer has no public endpoints")
	}

	writes := 0
	f.afterWrite = func(r *http.Request) {
		writes++
		assertBackend(t, f.sim, old.ID)
	}
	status := f.EnsureReady(t, svc)
	f.afterWrite = nil
	if writes == 0 {
		t.Fatal("nothing was written: the per-node services were not folded")
	}

	lb, _ := f.sim.Service(old.ID)
	if lb.Removed != nil || lb.State != ranchersim.StateActive || len(live(f.sim, ranchersim.KindLoadBalancer)) != 2 {
		t.Fatalf("load balancer %s is %s; want the old one adopted, active, and no other made", old.ID, lb.State)
	}
	if got := statusIPs(status); !slices.Equal(got, endpoints) {
		t.Errorf("status IPs %v, want the old endpoints %v", got, endpoints)
	}
	if got := endpointIPs(f.sim.Endpoints(old.ID)); !slices.Equal(got, endpoints) {
		t.Errorf("public endpoints %v, want the old ones %v", got, endpoints)
	}
	if stacks := f.sim.State().Stacks; len(stacks) != 1 {
		t.Errorf("Cattle holds %d stacks, want the old one adopted: %+v", len(stacks), stacks)
	}
	backend, ok := f.sim.ServiceByName(sharedName)
	if !ok {
		t.Fatalf("no external service %s", sharedName)
	}
	if diff := cmp.Diff(nodeIPs(f.Nodes), slices.Sorted(slices.Values(backend.ExternalIPAddresses))); diff != "" {
		t.Errorf("the one external service's IPs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]ranchersim.PortRule{{SourcePort: 80, TargetPort: 30080, Protocol: "tcp", ServiceID: backend.ID}}, lb.LBConfig.PortRules, cmpPortRule); diff != "" {
		t.Errorf("port rules (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{backend.ID}, linkIDs(lb.Links)); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
	// node-a's service is gone; node-b's, which the other load balancer
	// consumes, stays, and so does that load balancer.
	if s, _ := f.sim.Service(perNode[1].ID); s.Removed == nil && s.State != ranchersim.StateRemoving {
		t.Errorf("per-node service %s (%s) is %s, want removed", perNode[1].ID, perNode[1].Name, s.State)
	}
	if s, _ := f.sim.Service(perNode[0].ID); s.Removed != nil || s.State == ranchersim.StateRemoving {
		t.Errorf("per-node service %s, consumed by another load balancer, is %s: want it kept", perNode[0].ID, s.State)
	}
	if o, _ := f.sim.Service(other.ID); !slices.Equal(linkIDs(o.Links), []string{perNode[0].ID}) {
		t.Errorf("the other load balancer's links became %v", linkIDs(o.Links))
	}

	// Adopted and folded: a further sync writes nothing.
	before := f.sim.Writes()
	if _, syncs := f.EnsureReadySyncs(t, svc); syncs != 1 || f.sim.Writes() != before {
		t.Errorf("a sync after the migration retried %d times and made %d writes, want none", syncs-1, f.sim.Writes()-before)
	}
}

func linkIDs(links []ranchersim.ServiceLink) []string {
	var ids []string
	for _, l := range links {
		ids = append(ids, l.ServiceID)
	}
	slices.Sort(ids)
	return ids
}
