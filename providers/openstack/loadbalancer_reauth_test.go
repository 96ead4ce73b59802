package openstack_test

import (
	"net/http"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
)

// TestLoadBalancerReauthentication: Keystone tokens expire in the middle
// of a load-balancer reconcile, just before one of its writes. Each time
// the client gets one 401, authenticates once more and repeats the write:
// no sync fails (EnsureReady and DeleteDone stop the test on any error but
// a RetryError) and the cloud ends as it would have without the expiry.
func TestLoadBalancerReauthentication(t *testing.T) {
	const lbaas = "/load-balancer/v2.0/lbaas"
	steps := []struct {
		name string
		// op is the write just before which every token expires.
		op  string
		run func(t *testing.T, f *lbFixture, svc *corev1.Service)
		// check is the end state.
		check func(t *testing.T, f *lbFixture)
	}{
		{
			// After the load balancer, before its floating IP.
			name: "create",
			op:   "POST /network/v2.0/floatingips",
			run:  func(t *testing.T, f *lbFixture, svc *corev1.Service) { f.EnsureReady(t, svc) },
			check: func(t *testing.T, f *lbFixture) {
				lb := f.OnlyLoadBalancer(t)
				if !slices.Equal(lb.Listeners, []string{"TCP:80->:30080", "UDP:53->:30053"}) {
					t.Errorf("listeners = %v", lb.Listeners)
				}
				if st := f.sim.State(); len(st.FloatingIPs) != 1 || st.FloatingIPs[0].PortID == "" {
					t.Errorf("floating IPs = %+v, want one, associated", st.FloatingIPs)
				}
			},
		},
		{
			name: "port change",
			op:   "POST " + lbaas + "/listeners",
			run: func(t *testing.T, f *lbFixture, svc *corev1.Service) {
				f.UpdateService(t, svc, func(s *corev1.Service) { s.Spec.Ports[0].Port = 8443 })
				f.EnsureReady(t, svc)
			},
			check: func(t *testing.T, f *lbFixture) {
				if got := f.OnlyLoadBalancer(t).Listeners; !slices.Equal(got, []string{"TCP:8443->:30080", "UDP:53->:30053"}) {
					t.Errorf("listeners = %v", got)
				}
			},
		},
		{
			name: "node joins",
			op:   "PUT " + lbaas + "/pools/{id}/members",
			run: func(t *testing.T, f *lbFixture, svc *corev1.Service) {
				f.addNode("node-c")
				f.EnsureReady(t, svc)
			},
			check: func(t *testing.T, f *lbFixture) {
				st := f.sim.State()
				for _, l := range st.Listeners {
					if got := len(membersOf(st, l.DefaultPoolID)); got != 3 {
						t.Errorf("listener %d/%s has %d members, want 3", l.ProtocolPort, l.Protocol, got)
					}
				}
			},
		},
		{
			name: "delete",
			op:   "DELETE " + lbaas + "/loadbalancers/{id}",
			run:  func(t *testing.T, f *lbFixture, svc *corev1.Service) { f.DeleteDone(t, svc) },
			check: func(t *testing.T, f *lbFixture) {
				st := f.sim.State()
				if len(st.LoadBalancers) != 0 || len(st.FloatingIPs) != 0 {
					t.Errorf("after delete the cloud holds %d load balancers and %d floating IPs, want none",
						len(st.LoadBalancers), len(st.FloatingIPs))
				}
			},
		},
	}

	f := newLBFixture(t, "", nil)
	svc := f.Service(t, "web", nil, withDNS)
	for _, step := range steps {
		if !t.Run(step.name, func(t *testing.T) {
			issued, mark := f.sim.TokensIssued(), f.mark()
			remove := f.sim.Inject(openstacksim.Fault{Op: step.op, Count: 1, Do: f.sim.ExpireTokens})
			defer remove()
			step.run(t, f, svc)
			step.check(t, f)
			unauthorized := 0
			for _, r := range f.sim.Requests()[mark:] {
				if r.Status == http.StatusUnauthorized {
					unauthorized++
				}
			}
			if expired := f.sim.TokensIssued() - issued; expired != 1 || unauthorized != 1 {
				t.Errorf("%d tokens issued and %d requests refused with 401, want 1 and 1", expired, unauthorized)
			}
		}) {
			return
		}
	}
}
