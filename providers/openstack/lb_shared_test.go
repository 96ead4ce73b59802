package openstack

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ccmkit/ccmkit/framework"
)

// TestSharing: who shares a load balancer, from its tags, its listeners'
// tags, and (for one made outside the CCM) the Services naming it.
func TestSharing(t *testing.T) {
	const (
		self    = "kube_service_c_ns_web"
		other   = "kube_service_c_ns_other"
		creator = "kube_service_c_ns_creator"
	)
	at := func(name string, age time.Duration) *corev1.Service {
		return &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", CreationTimestamp: metav1.NewTime(time.Unix(1e9, 0).Add(-age)),
				Annotations: map[string]string{AnnotationLoadBalancerID: "lb-1"}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
		}
	}
	tagged := func(tags ...string) listeners.Listener { return listeners.Listener{ID: "l-" + tags[0], Tags: tags} }
	for _, tc := range []struct {
		name  string
		lb    octaviaLB
		own   lbOwnership
		peers []*corev1.Service // besides web, an hour old
		want  *lbShare
	}{
		{name: "own, alone", own: lbOwned, lb: octaviaLB{LB: loadbalancers.LoadBalancer{Name: self, Tags: []string{self}}, Listeners: []listeners.Listener{tagged(self)}}},
		{name: "own under an older cluster name", own: lbOwned, lb: octaviaLB{LB: loadbalancers.LoadBalancer{Name: "kube_service_old_ns_web", Tags: []string{"kube_service_old_ns_web"}}}},
		{
			name: "own, shared", own: lbOwned,
			lb:   octaviaLB{LB: loadbalancers.LoadBalancer{Name: self, Tags: []string{self, other}}, Listeners: []listeners.Listener{tagged(self), tagged(other)}},
			want: &lbShare{selfNames: []string{self}, others: []string{other}, primary: true, tagged: true, users: 1},
		},
		{
			name: "own, another Service's listener without its tag on the load balancer", own: lbOwned,
			lb:   octaviaLB{LB: loadbalancers.LoadBalancer{Name: self, Tags: []string{self}}, Listeners: []listeners.Listener{tagged(other)}},
			want: &lbShare{selfNames: []string{self}, others: []string{other}, primary: true, tagged: true, users: 1},
		},
		{
			name: "joining another Service's", own: lbForeign,
			lb:   octaviaLB{LB: loadbalancers.LoadBalancer{Name: creator, Tags: []string{creator}}, loaded: true, Listeners: []listeners.Listener{tagged(creator)}},
			want: &lbShare{selfNames: []string{self}, others: []string{creator}, newcomer: true, users: 1},
		},
		{
			name: "joining one OCCM made before tags", own: lbForeign,
			lb:   octaviaLB{LB: loadbalancers.LoadBalancer{Name: creator}, loaded: true, Listeners: []listeners.Listener{{ID: "l"}}},
			want: &lbShare{selfNames: []string{self}, others: []string{creator}, newcomer: true, users: 1},
		},
		{
			name: "last on another Service's", own: lbForeign,
			lb:   octaviaLB{LB: loadbalancers.LoadBalancer{Name: creator, Tags: []string{self}}, loaded: true, Listeners: []listeners.Listener{tagged(self)}},
			want: &lbShare{selfNames: []string{self}, tagged: true},
		},
		{name: "adopted alone", own: lbAdopted, lb: octaviaLB{LB: loadbalancers.LoadBalancer{Name: "hand", Tags: []string{"hand"}}, Listeners: []listeners.Listener{tagged("hand")}}},
		{
			name: "adopted after an untagged Service", own: lbAdopted, peers: []*corev1.Service{at("first", 2*time.Hour)},
			lb:   octaviaLB{LB: loadbalancers.LoadBalancer{ID: "lb-1", Name: "hand"}},
			want: &lbShare{selfNames: []string{self}, others: []string{"kube_service_c_ns_first"}, newcomer: true, users: 1},
		},
		{
			name: "adopted first", own: lbAdopted, peers: []*corev1.Service{at("second", 0), at("third", 0)},
			lb:   octaviaLB{LB: loadbalancers.LoadBalancer{ID: "lb-1", Name: "hand", Tags: []string{"kube_service_c_ns_second"}}},
			want: &lbShare{selfNames: []string{self}, others: []string{"kube_service_c_ns_second", "kube_service_c_ns_third"}, primary: true, newcomer: true, users: 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kube := fake.NewClientset()
			web := at("web", time.Hour)
			for _, s := range append(tc.peers, web, at("elsewhere", 3*time.Hour)) {
				if s.Name == "elsewhere" {
					s.Annotations[AnnotationLoadBalancerID] = "lb-2"
				}
				if _, err := kube.CoreV1().Services("ns").Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			d := &lbDriver{env: &framework.Env{Client: kube}}
			got, err := d.sharing(context.Background(), &tc.lb, &lbRequest{ClusterName: "c", Name: self, Service: web}, tc.own)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(lbShare{})); diff != "" {
				t.Errorf("sharing (-want +got):\n%s", diff)
			}
		})
	}
}

// TestShareView: a Service sees its tagged listeners and their pools, the
// primary also unclaimed ones and orphaned pools not named for another
// Service; a port is in use when another Service's listener has it on the
// same transport.
func TestShareView(t *testing.T) {
	const self, other = "kube_service_c_ns_web", "kube_service_c_ns_other"
	lb := &octaviaLB{
		LB: loadbalancers.LoadBalancer{ID: "lb"},
		Listeners: []listeners.Listener{
			{ID: "mine", Protocol: "TCP", ProtocolPort: 80, DefaultPoolID: "p-mine", Tags: []string{self}},
			{ID: "theirs", Protocol: "HTTP", ProtocolPort: 8080, DefaultPoolID: "p-theirs", Tags: []string{other}},
			{ID: "unclaimed", Protocol: "UDP", ProtocolPort: 53, DefaultPoolID: "p-unclaimed", Tags: []string{"hand"}},
		},
		Pools: []pools.Pool{
			{ID: "p-mine"}, {ID: "p-theirs"}, {ID: "p-unclaimed"},
			{ID: "orphan-mine", Name: "pool_1_" + self}, {ID: "orphan-theirs", Name: "pool_0_" + other}, {ID: "orphan-hand", Name: "spare"},
		},
	}
	ids := func(v *octaviaLB) (ls, ps []string) {
		for _, l := range v.Listeners {
			ls = append(ls, l.ID)
		}
		for _, p := range v.Pools {
			ps = append(ps, p.ID)
		}
		return ls, ps
	}
	for _, tc := range []struct {
		primary      bool
		wantL, wantP []string
	}{
		{primary: false, wantL: []string{"mine"}, wantP: []string{"p-mine", "orphan-mine"}},
		{primary: true, wantL: []string{"mine", "unclaimed"}, wantP: []string{"p-mine", "p-unclaimed", "orphan-mine", "orphan-hand"}},
	} {
		s := &lbShare{selfNames: []string{self}, primary: tc.primary}
		ls, ps := ids(s.view(lb))
		if !cmp.Equal(ls, tc.wantL) || !cmp.Equal(ps, tc.wantP) {
			t.Errorf("primary %v: view has listeners %v, pools %v; want %v, %v", tc.primary, ls, ps, tc.wantL, tc.wantP)
		}
		if len(lb.Listeners) != 3 || len(lb.Pools) != 6 {
			t.Fatal("view changed the load balancer")
		}
	}

	s := &lbShare{selfNames: []string{self}}
	for _, tc := range []struct {
		protocol string
		port     int
		inUse    bool
	}{
		{"TCP", 80, false}, {"TCP", 8080, true}, {"TERMINATED_HTTPS", 8080, true}, {"UDP", 8080, false},
		{"UDP", 53, true}, {"TCP", 53, false}, {"SCTP", 9000, false},
	} {
		err := s.portInUse(lb, []listenerSpec{{Protocol: tc.protocol, Port: tc.port}})
		if (err != nil) != tc.inUse {
			t.Errorf("%s:%d: portInUse = %v, want in use %v", tc.protocol, tc.port, err, tc.inUse)
		}
	}
	for name, want := range map[string]string{"pool_0_" + self: self, "pool_x_" + self: "", "pool_" + self: "", "spare": "", "pool_12_a_b": "a_b"} {
		if got := poolServiceName(name); got != want {
			t.Errorf("poolServiceName(%q) = %q, want %q", name, got, want)
		}
	}
}
