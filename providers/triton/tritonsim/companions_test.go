package tritonsim

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/joyent/triton-go/compute"
	"github.com/joyent/triton-go/network"
)

// TestCompanions: an appliance's addresses are its primaryIp and CNS name
// once it runs; the rules described as an appliance's serve the appliance
// they target while it lives, and none once it is deleted; a user's rule
// on it is no companion.
func TestCompanions(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 2})
	node := s.AddMachine(Machine{Name: "node"})
	m, err := c.compute.Instances().Create(ctx(), &compute.CreateInstanceInput{
		Name: "lb-web", Package: "g4-highcpu-2G", Image: imageID(t, c, LoadBalancerImage), FirewallEnabled: true,
		CNS:      compute.InstanceCNS{Services: []string{"web"}},
		Metadata: map[string]string{MetadataLoadBalancer: "true", MetadataPortmap: "tcp://80:" + node.ID + ":30080"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if lbs := s.Cloud().LoadBalancers(); len(lbs) != 1 || lbs[0].Addresses != nil {
		t.Errorf("LoadBalancers while provisioning = %+v, want no addresses", lbs)
	}
	s.Advance()
	got, err := c.compute.Instances().Get(ctx(), &compute.GetInstanceInput{ID: m.ID})
	if err != nil || got.PrimaryIP == "" {
		t.Fatalf("appliance %+v, %v", got, err)
	}
	want := slices.Sorted(slices.Values([]string{got.PrimaryIP, "web.svc." + s.AccountID() + ".us-east-1.triton.zone"}))
	if lbs := s.Cloud().LoadBalancers(); len(lbs) != 1 || !cmp.Equal(lbs[0].Addresses, want) {
		t.Errorf("LoadBalancers = %+v, want addresses %v", lbs, want)
	}

	fw := c.network.Firewall()
	rule := func(text, description string) string {
		t.Helper()
		r, err := fw.CreateRule(ctx(), &network.CreateRuleInput{Enabled: true, Rule: text, Description: description})
		if err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	open := rule("FROM any TO vm "+m.ID+" ALLOW tcp PORT 80", "k8s-ccm:c1:lb:"+m.ID)
	stray := rule("FROM any TO vm "+node.ID+" ALLOW tcp PORT 81", "k8s-ccm:c1:lb:"+node.ID)
	rule("FROM any TO vm "+m.ID+" ALLOW tcp PORT 22", "ssh")
	companions := map[string]string{"fwrule/" + open: m.ID, "fwrule/" + stray: ""}
	if diff := cmp.Diff(companions, s.Cloud().Companions()); diff != "" {
		t.Errorf("Companions (-want +got):\n%s", diff)
	}

	if err := c.compute.Instances().Delete(ctx(), &compute.DeleteInstanceInput{ID: m.ID}); err != nil {
		t.Fatal(err)
	}
	s.Advance()
	companions["fwrule/"+open] = ""
	if diff := cmp.Diff(companions, s.Cloud().Companions()); diff != "" {
		t.Errorf("Companions after the appliance's deletion (-want +got):\n%s", diff)
	}
	if err := fw.DeleteRule(ctx(), &network.DeleteRuleInput{ID: open}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"fwrule/" + stray: ""}, s.Cloud().Companions()); diff != "" {
		t.Errorf("Companions once its rule is deleted (-want +got):\n%s", diff)
	}
}
