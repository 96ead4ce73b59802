package rancher_test

import (
	"testing"

	cloudprovider "k8s.io/cloud-provider"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
)

// TestLoadBalancerStackRemovedByHand: the provider remembers the
// load-balancer stack's ID. Once a user removes the stack by hand (in the
// UI), Cattle refuses a new service in it (422 InvalidReference, fieldName
// stackId); the next load balancer's create then looks the stack up
// again, makes a new one and creates in it: in the same sync once Cattle
// has removed the old stack, and once it has while it is still removing
// it (the name is taken and the stack refuses new services until then).
func TestLoadBalancerStackRemovedByHand(t *testing.T) {
	for _, tc := range []struct {
		name    string
		removed bool // Cattle is done removing the old stack
	}{
		{"removed", true},
		{"removing", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newLBFixture(t, frameworktest.LBOptions{})
			f.EnsureReady(t, f.Service(t, "first", nil))
			old, ok := f.sim.StackByName(lbStack)
			if !ok {
				t.Fatalf("no stack %s after the first load balancer", lbStack)
			}
			if !f.sim.RemoveStack(old.ID) {
				t.Fatalf("no stack %s to remove", old.ID)
			}
			if tc.removed {
				f.sim.Advance()
				if k, _ := f.sim.Stack(old.ID); k.State != ranchersim.StateRemoved {
					t.Fatalf("stack %s is %s after Advance, want removed", old.ID, k.State)
				}
			}

			svc := f.Service(t, "second", nil)
			if tc.removed {
				if _, err := f.Ensure(t, svc); err != nil && !frameworktest.IsRetry(err) {
					t.Fatalf("first sync after the stack was removed: %v; want the load balancer created in a new stack", err)
				}
			}
			f.EnsureReady(t, svc)

			stack, ok := f.sim.StackByName(lbStack)
			if !ok || stack.ID == old.ID || stack.ExternalID != lbStack+"://" {
				t.Fatalf("stack %s = %+v (found %v), want a new one (not %s) with externalId %s://", lbStack, stack, ok, old.ID, lbStack)
			}
			// The first load balancer went with the old stack.
			lb := onlyService(t, f.sim, ranchersim.KindLoadBalancer)
			ext := onlyService(t, f.sim, ranchersim.KindExternal)
			name := "lb-" + cloudprovider.DefaultLoadBalancerName(svc)
			if lb.Name != name || lb.StackID != stack.ID || lb.State != ranchersim.StateActive {
				t.Errorf("load balancer %s %q in %s, want active %q in the new stack %s", lb.State, lb.Name, lb.StackID, name, stack.ID)
			}
			if ext.Name != name+"-nodes" || ext.StackID != stack.ID {
				t.Errorf("external service %q in %s, want %q in the new stack %s", ext.Name, ext.StackID, name+"-nodes", stack.ID)
			}
		})
	}
}
