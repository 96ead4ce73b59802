package rancher_test

import (
	"strings"
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
			if ext.Name != sharedName || ext.StackID != stack.ID {
				t.Errorf("external service %q in %s, want %q in the new stack %s", ext.Name, ext.StackID, sharedName, stack.ID)
			}
		})
	}
}

// TestLoadBalancerStackLookupByName: Cattle splits a filter key at its
// last underscore into a field and a modifier (ParseCollectionAttributes.
// NameAndOp), so the existing CCM's external_id=kubernetes-loadbalancers://
// is the field "external" with the modifier "id", no filter, and ignored:
// its stack lookup matched by name (ranchersim filters as Cattle does).
// The provider looks the stack up by name and checks the externalId
// itself: the existing CCM's stack is adopted, a stack of the same name
// made for something else is a clear error naming RANCHER_LB_STACK
// (rather than a create Cattle refuses as NotUnique), and a stack with
// the externalId but another name is not the load balancers'.
func TestLoadBalancerStackLookupByName(t *testing.T) {
	t.Run("adopted", func(t *testing.T) {
		f := newLBFixture(t, frameworktest.LBOptions{})
		f.sim.AddStack(ranchersim.Stack{Name: "elsewhere", ExternalID: lbStack + "://", State: ranchersim.StateActive})
		old := f.sim.AddStack(ranchersim.Stack{Name: lbStack, ExternalID: lbStack + "://", State: ranchersim.StateActive})
		f.EnsureReady(t, f.Service(t, "web", nil))
		if lb := onlyService(t, f.sim, ranchersim.KindLoadBalancer); lb.StackID != old.ID {
			t.Errorf("load balancer in stack %s, want the existing CCM's %s", lb.StackID, old.ID)
		}
	})
	t.Run("another owner", func(t *testing.T) {
		f := newLBFixture(t, frameworktest.LBOptions{})
		other := f.sim.AddStack(ranchersim.Stack{Name: lbStack, ExternalID: "catalog://library:web:1", State: ranchersim.StateActive})
		_, err := f.Ensure(t, f.Service(t, "web", nil))
		if err == nil || !strings.Contains(err.Error(), "RANCHER_LB_STACK") || !strings.Contains(err.Error(), other.ID) {
			t.Fatalf("Ensure = %v; want the error that stack %s is not the load balancers'", err, other.ID)
		}
		if n := len(f.sim.Stacks()); n != 1 {
			t.Errorf("%d stacks, want only the other owner's: none made", n)
		}
		if got := len(live(f.sim, ranchersim.KindLoadBalancer)); got != 0 {
			t.Errorf("%d load balancers made in another owner's stack", got)
		}
	})
}
