package brightbox_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/brightbox"
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

// TestLoadBalancerLeftoverCloudIPsReleased: a Service being deleted
// without a load balancer releases every cloud IP the CCM allocated for it
// and nothing else. Its own are those named as its load balancer: the
// one Create allocated before the API refused the load balancer, and one
// still mapped to an earlier load balancer of its that is deleted (a
// deletion cut short, or an API that keeps the mapping a while), which
// must be unmapped before it can go. Left alone: the cloud IP its
// cloudip-allocations annotation names (the user's, though named as its
// load balancer and mapped to that deleted one), and another Service's,
// mapped to its own deleted load balancer or not mapped at all.
func TestLoadBalancerLeftoverCloudIPsReleased(t *testing.T) {
	// The deleted load balancers stay listed for the whole test.
	f := newLBFixture(t, gbsim.Options{DeletedReads: 1000}, frameworktest.LBOptions{})
	const name, otherName = "gone.default." + clusterName, "other.default." + clusterName
	deletedLB := func(name string) gbsim.LoadBalancer {
		return f.sim.AddLoadBalancer(gbsim.LoadBalancer{Name: name, Status: gbsim.StatusDeleted,
			Listeners:   []gbsim.Listener{{Protocol: "http", In: 80, Out: 30080}},
			Healthcheck: gbsim.Healthcheck{Type: "http", Port: 30080, Request: "/healthz"}})
	}
	oldLB := deletedLB(name)
	stillMapped := f.sim.AddCloudIP(gbsim.CloudIP{Name: name, Target: oldLB.ID})
	otherLB := deletedLB(otherName)
	otherMapped := f.sim.AddCloudIP(gbsim.CloudIP{Name: otherName, Target: otherLB.ID})
	otherLeftover := f.sim.AddCloudIP(gbsim.CloudIP{Name: otherName})

	svc := f.Service(t, "gone", nil)
	remove := f.sim.Inject(gbsim.Fault{Op: "POST /1.0/load_balancers", Status: http.StatusUnprocessableEntity})
	if _, err := f.Ensure(t, svc); err == nil {
		t.Fatal("EnsureLoadBalancer succeeded though the API refused the create")
	}
	remove()
	allocated := slices.DeleteFunc(named(f.sim.CloudIPs(), name, cipName), func(c gbsim.CloudIP) bool { return c.ID == stillMapped.ID })
	if len(allocated) != 1 || allocated[0].Target != "" {
		t.Fatalf("cloud IPs allocated before the refused create: %+v, want one, unmapped: the test no longer covers the leftover", allocated)
	}
	// The user then names a cloud IP of theirs for the Service.
	users := f.sim.AddCloudIP(gbsim.CloudIP{Name: name, Target: oldLB.ID})
	svc = f.UpdateService(t, svc, func(s *corev1.Service) {
		s.Annotations[brightbox.AnnotationPrefix+"cloudip-allocations"] = users.ID
	})

	gone := f.Fresh(t, svc)
	gone.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	if _, exists, err := f.LB.GetLoadBalancer(f.Ctx, f.ClusterName, gone); err != nil || !exists {
		t.Fatalf("GetLoadBalancer of a Service being deleted = exists %v, %v; want true, so that the service controller deletes what its create left", exists, err)
	}
	if err := f.LB.EnsureLoadBalancerDeleted(f.Ctx, f.ClusterName, gone); err != nil {
		t.Fatalf("EnsureLoadBalancerDeleted: %v", err)
	}
	left := map[string]string{}
	for _, c := range f.sim.CloudIPs() {
		left[c.ID] = c.Name + " -> " + c.Target
	}
	want := map[string]string{
		users.ID:         name + " -> " + oldLB.ID,
		otherMapped.ID:   otherName + " -> " + otherLB.ID,
		otherLeftover.ID: otherName + " -> ",
	}
	if diff := cmp.Diff(want, left); diff != "" {
		t.Errorf("cloud IPs after the delete (-want +got), want the Service's own (%s allocated, %s mapped to deleted %s) gone and no other touched:\n%s",
			allocated[0].ID, stillMapped.ID, oldLB.ID, diff)
	}
	if n := len(liveLBs(f.sim)); n != 0 {
		t.Errorf("cloud holds %d load balancers, want 0", n)
	}
}
