package openstack

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func testService(mutate ...func(*corev1.Service)) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{
			{Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080},
			{Protocol: corev1.ProtocolUDP, Port: 53, NodePort: 30053},
		}},
	}
	for _, m := range mutate {
		m(svc)
	}
	return svc
}

func testInput(mutate ...func(*LoadBalancerConfig)) treeInput {
	l := &LoadBalancerSection{LBMethod: "ROUND_ROBIN", MonitorDelay: 5e9, MonitorTimeout: 3e9, MonitorMaxRetries: 1, MonitorMaxRetriesDown: 3}
	cfg := newLBConfig(l)
	cfg.ConnectionLimit, cfg.ProxyProtocol = -1, "false"
	cfg.TimeoutClientData, cfg.TimeoutMemberConnect, cfg.TimeoutMemberData = 50000, 5000, 50000
	for _, m := range mutate {
		m(cfg)
	}
	return treeInput{
		cfg: cfg, lbName: "kube_service_c_ns_web", features: featuresFor(27, "amphora"), memberSubnetID: "sub",
		nodes: []nodeAddrs{
			{name: "b", addrs: []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "203.0.113.2"}, {Type: corev1.NodeInternalIP, Address: "10.0.0.2"}}},
			{name: "a", addrs: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}, {Type: corev1.NodeInternalIP, Address: "fd00::1"}}},
			{name: "ext", addrs: []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "203.0.113.3"}}},
			{name: "none"},
		},
	}
}

func TestDesiredListeners(t *testing.T) {
	local := func(s *corev1.Service) {
		s.Spec.ExternalTrafficPolicy, s.Spec.HealthCheckNodePort = corev1.ServiceExternalTrafficPolicyLocal, 32000
	}
	tests := []struct {
		name  string
		svc   *corev1.Service
		in    treeInput
		check func(t *testing.T, ls []listenerSpec)
	}{{
		name: "defaults: listeners sorted by key, InternalIP first, no monitor",
		svc:  testService(), in: testInput(),
		check: func(t *testing.T, ls []listenerSpec) {
			if ls[0].key() != "TCP:80" || ls[1].key() != "UDP:53" || ls[1].Pool.Protocol != "UDP" {
				t.Errorf("listeners = %+v", ls)
			}
			want := []memberSpec{{"a", "10.0.0.1", 30080, "sub", 0}, {"b", "10.0.0.2", 30080, "sub", 0}, {"ext", "203.0.113.3", 30080, "sub", 0}}
			if diff := cmp.Diff(want, ls[0].Pool.Members); diff != "" {
				t.Errorf("members (-want +got):\n%s", diff)
			}
			if ls[0].Pool.Monitor != nil || ls[0].Timeouts == nil || ls[0].ConnLimit != -1 || ls[0].AllowedCIDRs != nil {
				t.Errorf("listener = %+v", ls[0])
			}
		},
	}, {
		name: "externalTrafficPolicy Local: HTTP monitor on the health check node port",
		svc:  testService(local), in: testInput(),
		check: func(t *testing.T, ls []listenerSpec) {
			for _, l := range ls {
				m := l.Pool.Monitor
				if m == nil || m.Type != "HTTP" || m.URLPath != "/healthz" || m.Delay != 5 || m.Timeout != 3 || l.Pool.Members[0].MonitorPort != 32000 {
					t.Errorf("%s: monitor %+v, member %+v", l.key(), m, l.Pool.Members[0])
				}
			}
		},
	}, {
		name: "Local, but monitors off by annotation",
		svc:  testService(local), in: testInput(func(c *LoadBalancerConfig) { c.HealthMonitor.Enabled = new(false) }),
		check: func(t *testing.T, ls []listenerSpec) {
			if ls[0].Pool.Monitor != nil || ls[0].Pool.Members[0].MonitorPort != 0 {
				t.Errorf("pool = %+v", ls[0].Pool)
			}
		},
	}, {
		name: "TLS: TERMINATED_HTTPS over HTTP for TCP ports only; PROXY for TCP only",
		svc:  testService(),
		in: testInput(func(c *LoadBalancerConfig) {
			c.DefaultTLSContainerRef, c.ProxyProtocol = "https://barbican/v1/containers/x", "v1"
		}),
		check: func(t *testing.T, ls []listenerSpec) {
			if ls[0].Protocol != "TERMINATED_HTTPS" || ls[0].TLSRef == "" || ls[0].Pool.Protocol != "PROXY" || ls[1].Pool.Protocol != "UDP" {
				t.Errorf("listeners = %+v", ls)
			}
		},
	}, {
		name: "source ranges of the VIP's family, sorted",
		svc: testService(func(s *corev1.Service) {
			s.Spec.LoadBalancerSourceRanges = []string{"192.0.2.0/24", "2001:db8::/32", "10.1.2.3/8"}
		}),
		in: testInput(),
		check: func(t *testing.T, ls []listenerSpec) {
			if !slices.Equal(ls[0].AllowedCIDRs, []string{"10.0.0.0/8", "192.0.2.0/24"}) {
				t.Errorf("allowed CIDRs = %v", ls[0].AllowedCIDRs)
			}
		},
	}, {
		name: "ovn: no timeouts, no HTTP monitor",
		svc:  testService(local),
		in: func() treeInput {
			in := testInput()
			in.features = featuresFor(27, "ovn")
			return in
		}(),
		check: func(t *testing.T, ls []listenerSpec) {
			if ls[0].Timeouts != nil || ls[0].Pool.Monitor.Type != "TCP" || ls[1].Pool.Monitor.Type != "UDP-CONNECT" {
				t.Errorf("listeners = %+v", ls)
			}
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ls, err := desiredListeners(tt.svc, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, ls)
		})
	}
}

// actualOf is the load balancer Octavia would hold for want.
func actualOf(want []listenerSpec) *octaviaLB {
	lb := &octaviaLB{loaded: true, Members: map[string]poolMembers{}, Monitors: map[string]monitors.Monitor{}}
	for i, w := range want {
		lid, pid := "l"+w.key(), "p"+w.key()
		lb.Listeners = append(lb.Listeners, listeners.Listener{
			ID: lid, Protocol: w.Protocol, ProtocolPort: w.Port, DefaultPoolID: pid, ConnLimit: w.ConnLimit,
			TimeoutClientData: w.Timeouts.ClientData, TimeoutMemberConnect: w.Timeouts.MemberConnect,
			TimeoutMemberData: w.Timeouts.MemberData, TimeoutTCPInspect: w.Timeouts.TCPInspect,
			AllowedCIDRs: []string{"0.0.0.0/0"}, // as OCCM writes "everyone"
		})
		lb.Pools = append(lb.Pools, pools.Pool{ID: pid, Protocol: w.Pool.Protocol, LBMethod: w.Pool.Method})
		var members []memberRecord
		for _, m := range w.Pool.Members {
			members = append(members, memberRecord{ID: m.key(), Address: m.Address, ProtocolPort: m.Port, MonitorPort: m.MonitorPort})
		}
		lb.Members[pid] = newPoolMembers(members, true)
		if mon := want[i].Pool.Monitor; mon != nil {
			lb.Monitors[pid] = monitors.Monitor{ID: "m" + w.key(), Type: mon.Type, Delay: mon.Delay, Timeout: mon.Timeout,
				MaxRetries: mon.MaxRetries, MaxRetriesDown: mon.MaxRetriesDown, URLPath: mon.URLPath, HTTPMethod: mon.HTTPMethod, ExpectedCodes: mon.ExpectedCodes}
		}
	}
	return lb
}

func kinds(plan []action) []actionKind {
	out := make([]actionKind, len(plan))
	for i, a := range plan {
		out[i] = a.kind
	}
	return out
}

func TestPlanChanges(t *testing.T) {
	in := testInput(func(c *LoadBalancerConfig) { c.HealthMonitor.Enabled = new(true) })
	want, err := desiredListeners(testService(), in)
	if err != nil {
		t.Fatal(err)
	}
	f := in.features
	if plan := planChanges(actualOf(want), want, f, false); len(plan) != 0 {
		t.Errorf("up to date: plan %s", describePlan(plan))
	}

	// Port 80 -> 8080: the listener goes, the new one takes its pool.
	moved, _ := desiredListeners(testService(func(s *corev1.Service) { s.Spec.Ports[0].Port = 8080 }), in)
	have := actualOf(want)
	plan := planChanges(have, moved, f, false)
	if got := kinds(plan); !slices.Equal(got, []actionKind{actDeleteListener, actCreateListener}) || plan[1].reusePoolID != "" {
		t.Errorf("renumbered port, before the delete: %s", describePlan(plan))
	}
	have.Listeners = slices.DeleteFunc(have.Listeners, func(l listeners.Listener) bool { return l.ProtocolPort == 80 })
	plan = planChanges(have, moved, f, false)
	if len(plan) != 1 || plan[0].kind != actCreateListener || plan[0].reusePoolID != "pTCP:80" {
		t.Errorf("renumbered port, after the delete: %s", describePlan(plan))
	}

	// A node joins: one batch for each pool.
	in.nodes = append(in.nodes, nodeAddrs{name: "c", addrs: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.3"}}})
	grown, _ := desiredListeners(testService(), in)
	if got := kinds(planChanges(actualOf(want), grown, f, false)); !slices.Equal(got, []actionKind{actBatchMembers, actBatchMembers}) {
		t.Errorf("node joined: %v", got)
	}
	plan = planChanges(actualOf(want), grown, f, true)
	if got := kinds(plan); !slices.Equal(got, []actionKind{actCreateMember, actCreateMember}) || plan[0].member.Address != "10.0.0.3" {
		t.Errorf("node joined, serial: %s", describePlan(plan))
	}

	// Settings: listener, pool algorithm, monitor timing, pool protocol.
	have = actualOf(want)
	have.Listeners[0].ConnLimit = 10
	have.Pools[1].LBMethod = "SOURCE_IP"
	m := have.Monitors["pTCP:80"]
	m.Delay = 99
	have.Monitors["pTCP:80"] = m
	if got := kinds(planChanges(have, want, f, false)); !slices.Equal(got, []actionKind{actUpdateListener, actUpdateMonitor, actUpdatePool}) {
		t.Errorf("settings: %v", got)
	}
	have = actualOf(want)
	have.Pools[0].Protocol = "PROXY"
	if got := kinds(planChanges(have, want, f, false)); !slices.Equal(got, []actionKind{actDeletePool}) {
		t.Errorf("pool protocol: %v", got)
	}
	delete(have.Monitors, "pUDP:53")
	have.Listeners[1].DefaultPoolID = ""
	if got := kinds(planChanges(have, want, f, false)); !slices.Equal(got, []actionKind{actDeletePool, actDeletePool, actCreatePool}) {
		t.Errorf("orphaned pool: %v", got)
	}
}

func TestOwnershipAndNames(t *testing.T) {
	svc := testService()
	svc.UID = "1234-5678"
	d := &lbDriver{}
	req := &lbRequest{Service: svc, Name: loadBalancerName("c", svc, nil)}
	if req.Name != "kube_service_c_ns_web" {
		t.Fatalf("name = %q", req.Name)
	}
	for name, want := range map[string]lbOwnership{
		"kube_service_c_ns_web": lbOwned, "kube_service_old-cluster_ns_web": lbOwned, "a12345678": lbOwned,
		"kube_service_c_ns_other": lbForeign, "by-hand": lbAdopted,
	} {
		lb := &octaviaLB{}
		lb.LB.Name = name
		if got := d.ownership(lb, req); got != want {
			t.Errorf("ownership(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestNodeSelectorAndClass(t *testing.T) {
	sel, err := parseNodeSelector(" pool = web, gpu ,")
	if err != nil {
		t.Fatal(err)
	}
	node := func(labels map[string]string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: labels}}
	}
	if !sel.matches(node(map[string]string{"pool": "web", "gpu": "x"})) || sel.matches(node(map[string]string{"pool": "web"})) {
		t.Error("node selector mismatch")
	}
	if _, err := parseNodeSelector("=x"); err == nil {
		t.Error("a selector without key was accepted")
	}
	cfg := &LoadBalancerConfig{Class: "gold", SubnetID: "default-subnet", FloatingNetworkID: "annotated"}
	classes := LoadBalancerClasses{"gold": {SubnetID: "gold-subnet", FloatingNetworkID: "gold-net"}}
	got, err := withClass(cfg, classes, map[string]string{annotationKey("floating-network-id"): "annotated"})
	if err != nil || got.SubnetID != "gold-subnet" || got.FloatingNetworkID != "annotated" || cfg.SubnetID != "default-subnet" {
		t.Errorf("withClass = %+v, %v", got, err)
	}
	if _, err := withClass(&LoadBalancerConfig{Class: "silver"}, classes, nil); err == nil {
		t.Error("unknown class accepted")
	}
}
