package rancher_test

import (
	"net/http"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
)

// crashPoints are where a CCM dies, or its sync fails, after it made the
// external service holding the nodes and before the load balancer links
// it: the answer to the external service's create lost, the load
// balancer's create failing, its setservicelinks failing.
var crashPoints = map[string]simkit.Fault{
	"external service's answer lost": {Op: ranchersim.Operations["externalServices.create"], Truncate: true},
	"load balancer's create fails":   {Op: ranchersim.Operations["loadBalancers.create"], Status: http.StatusInternalServerError},
	"setservicelinks fails":          {Op: ranchersim.Operations["loadBalancers.action"], Status: http.StatusInternalServerError},
}

// crashAt syncs svc with a first CCM until the fault fires once, then
// starts the next CCM (a new leader, which knows nothing of the first's
// syncs) as f.LB.
func (f *lbFixture) crashAt(t *testing.T, svc *corev1.Service, fault simkit.Fault) {
	t.Helper()
	fired := false
	fault.Count, fault.Do = 1, func() { fired = true }
	f.sim.Inject(fault)
	first := f.Start(t)
	for i := 0; !fired; i++ {
		if i == 20 {
			t.Fatal("the fault never fired")
		}
		if _, err := first.EnsureLoadBalancer(f.Ctx, f.ClusterName, f.Fresh(t, svc), f.Nodes); err == nil && !fired {
			t.Fatal("the load balancer was ready before the fault fired")
		}
		f.sim.Advance()
	}
	if len(live(f.sim, ranchersim.KindExternal)) != 1 {
		t.Fatalf("before the crash Cattle holds external services %+v, want the one made", live(f.sim, ranchersim.KindExternal))
	}
	f.LB = f.Start(t)
}

// cleanUp removes svc's load balancer as the service controller does for
// a Service being deleted: EnsureLoadBalancerDeleted only when
// GetLoadBalancer reports one.
func (f *lbFixture) cleanUp(t *testing.T, svc *corev1.Service) {
	t.Helper()
	s := f.Fresh(t, svc)
	now := metav1.Now()
	s.DeletionTimestamp = &now
	_, exists, err := f.LB.GetLoadBalancer(f.Ctx, f.ClusterName, s)
	if err != nil {
		t.Fatalf("GetLoadBalancer: %v", err)
	}
	for i := 0; exists; i++ {
		err := f.LB.EnsureLoadBalancerDeleted(f.Ctx, f.ClusterName, s)
		if !frameworktest.IsRetry(err) {
			if err != nil {
				t.Fatalf("EnsureLoadBalancerDeleted: %v", err)
			}
			return
		}
		if i == 10 {
			t.Fatal("EnsureLoadBalancerDeleted: not done after 10 syncs")
		}
		f.sim.Advance()
	}
}

// noLeftovers fails unless Cattle holds no live load balancer nor
// external service.
func noLeftovers(t *testing.T, sim *ranchersim.Server) {
	t.Helper()
	if n := len(live(sim, ranchersim.KindLoadBalancer)) + len(live(sim, ranchersim.KindExternal)); n != 0 {
		t.Errorf("Cattle holds %d live services, want none: %+v", n, sim.Services())
	}
}

// A Service deleted after a crash between the external service's create
// and its link leaves nothing behind: with no load balancer, the next CCM
// removes the external service by its name.
func TestLoadBalancerCrashThenDeleteLeavesNothing(t *testing.T) {
	for name, fault := range crashPoints {
		t.Run(name, func(t *testing.T) {
			f := newLBFixture(t, frameworktest.LBOptions{})
			svc := f.Service(t, "web", nil)
			f.crashAt(t, svc, fault)
			f.cleanUp(t, svc)
			noLeftovers(t, f.sim)
		})
	}
}

// The next sync after such a crash adopts the external service the first
// CCM made: exactly one, linked and the target of every port rule.
func TestLoadBalancerCrashThenSyncAdopts(t *testing.T) {
	for name, fault := range crashPoints {
		t.Run(name, func(t *testing.T) {
			f := newLBFixture(t, frameworktest.LBOptions{})
			svc := f.Service(t, "web", nil)
			f.crashAt(t, svc, fault)
			made := onlyService(t, f.sim, ranchersim.KindExternal)
			f.EnsureReady(t, svc)
			if got := onlyService(t, f.sim, ranchersim.KindExternal); got.ID != made.ID {
				t.Errorf("external service %s after the sync, want %s adopted", got.ID, made.ID)
			}
			assertBackend(t, f.sim, onlyService(t, f.sim, ranchersim.KindLoadBalancer).ID)
			f.DeleteDone(t, svc)
			noLeftovers(t, f.sim)
		})
	}
}

// The soak's leak: a Service whose load balancer's create failed after
// the external service, then made one no Cattle load balancer can serve
// (source ranges: no further create), then no longer of type LoadBalancer.
// The external service made for it is removed with it.
func TestLoadBalancerFailedCreateThenInvalidThenClusterIP(t *testing.T) {
	f := newLBFixture(t, frameworktest.LBOptions{})
	svc := f.Service(t, "web", nil)
	f.crashAt(t, svc, crashPoints["load balancer's create fails"])
	f.UpdateService(t, svc, func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = []string{"10.0.0.0/8"} })
	before := f.sim.Writes()
	if _, err := f.Ensure(t, svc); err == nil {
		t.Fatal("EnsureLoadBalancer with source ranges: no error")
	}
	if w := f.sim.Writes() - before; w != 0 {
		t.Errorf("an invalid Service made %d writes, want none", w)
	}
	f.UpdateService(t, svc, func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeClusterIP })
	f.cleanUp(t, svc)
	noLeftovers(t, f.sim)
}

// A health-check change whose new external service's create lost its
// answer: the next CCM adopts that one (no second of its name), links it,
// removes the one it replaces, and on delete leaves nothing.
func TestLoadBalancerReplacedBackendLostAdopted(t *testing.T) {
	f := newLBFixture(t, frameworktest.LBOptions{})
	svc := f.Service(t, "web", nil)
	f.EnsureReady(t, svc)
	f.UpdateService(t, svc, func(s *corev1.Service) {
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		s.Spec.HealthCheckNodePort = 32100
	})
	f.sim.Inject(simkit.Fault{Op: ranchersim.Operations["externalServices.create"], Truncate: true, Count: 1})
	if _, err := f.Ensure(t, svc); err == nil {
		t.Fatal("the sync whose create lost its answer succeeded")
	}
	if n := len(live(f.sim, ranchersim.KindExternal)); n != 2 {
		t.Fatalf("Cattle holds %d external services, want the old and the new", n)
	}
	f.LB = f.Start(t)
	f.EnsureReady(t, svc)
	exts := live(f.sim, ranchersim.KindExternal)
	if len(exts) != 1 || exts[0].HealthCheck == nil {
		t.Fatalf("external services %+v, want just the new one with its health check", exts)
	}
	if !slices.ContainsFunc(onlyService(t, f.sim, ranchersim.KindLoadBalancer).Links, func(l ranchersim.ServiceLink) bool { return l.ServiceID == exts[0].ID }) {
		t.Errorf("the load balancer does not link external service %s", exts[0].ID)
	}
	f.DeleteDone(t, svc)
	noLeftovers(t, f.sim)
}
