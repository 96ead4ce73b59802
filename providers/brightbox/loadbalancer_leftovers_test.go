package brightbox_test

import (
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/brightbox/gbsim"
)

// TestLoadBalancerLeftoversDeleted: Create allocates the cloud IP before
// the load balancer; when the load balancer's create then fails (here, the
// API refusing it) and the Service is deleted before a load balancer ever
// existed, the delete still releases that cloud IP. The soak found it: a
// node deleted between the sync's start and the create made the API refuse
// it, the Service went, and the cloud IP stayed allocated for nothing.
func TestLoadBalancerLeftoversDeleted(t *testing.T) {
	f := newLBFixture(t, gbsim.Options{}, frameworktest.LBOptions{})
	svc := f.Service(t, "never", nil)

	remove := f.sim.Inject(gbsim.Fault{Op: "POST /1.0/load_balancers", Status: http.StatusUnprocessableEntity})
	if _, err := f.Ensure(t, svc); err == nil {
		t.Fatal("EnsureLoadBalancer succeeded though the API refused the create")
	}
	remove()
	if companions := f.sim.Cloud().Companions(); len(companions) == 0 {
		t.Fatal("no cloud IP was allocated before the create: the test no longer covers the leftover")
	}

	// The service controller deletes only a load balancer GetLoadBalancer
	// reports: for a Service being deleted, one with leftovers is.
	gone := f.Fresh(t, svc)
	gone.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	if _, exists, err := f.LB.GetLoadBalancer(f.Ctx, f.ClusterName, gone); err != nil || !exists {
		t.Fatalf("GetLoadBalancer of a Service being deleted = exists %v, %v; want true, so that the service controller deletes what its create left", exists, err)
	}
	if err := f.LB.EnsureLoadBalancerDeleted(f.Ctx, f.ClusterName, gone); err != nil {
		t.Fatalf("EnsureLoadBalancerDeleted: %v", err)
	}
	if companions := f.sim.Cloud().Companions(); len(companions) != 0 {
		t.Errorf("after the delete the cloud still holds %v, want nothing made for the Service", companions)
	}
	if n := len(liveLBs(f.sim)); n != 0 {
		t.Errorf("cloud holds %d load balancers, want 0", n)
	}
}
