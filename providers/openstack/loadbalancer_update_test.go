package openstack_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/providers/openstack"
	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
)

// withDNS adds a UDP port, 53 -> 30053.
func withDNS(s *corev1.Service) {
	s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53, NodePort: 30053})
}

// listenerByPort returns the simulator's listener on port.
func listenerByPort(t *testing.T, st openstacksim.Snapshot, protocol string, port int) openstacksim.Listener {
	t.Helper()
	for _, l := range st.Listeners {
		if l.Protocol == protocol && l.ProtocolPort == port {
			return l
		}
	}
	t.Fatalf("no listener %s:%d in %+v", protocol, port, st.Listeners)
	return openstacksim.Listener{}
}

func poolByID(st openstacksim.Snapshot, id string) openstacksim.Pool {
	for _, p := range st.Pools {
		if p.ID == id {
			return p
		}
	}
	return openstacksim.Pool{}
}

func membersOf(st openstacksim.Snapshot, poolID string) []openstacksim.Member {
	var out []openstacksim.Member
	for _, m := range st.Members {
		if m.PoolID == poolID {
			out = append(out, m)
		}
	}
	return out
}

func monitorOf(st openstacksim.Snapshot, poolID string) *openstacksim.HealthMonitor {
	for i, hm := range st.HealthMonitors {
		if hm.PoolID == poolID {
			return &st.HealthMonitors[i]
		}
	}
	return nil
}

// TestLoadBalancerPortChange: renumbering one Service port replaces only
// its listener, which takes over the old pool with its members; the other
// port's listener and pool are not touched.
func TestLoadBalancerPortChange(t *testing.T) {
	f := newLBFixture(t, "", nil)
	svc := f.Service(t, "web", nil, withDNS)
	f.EnsureReady(t, svc)
	before := f.sim.State()
	tcp, udp := listenerByPort(t, before, "TCP", 80), listenerByPort(t, before, "UDP", 53)

	f.UpdateService(t, svc, func(s *corev1.Service) { s.Spec.Ports[0].Port = 8080 })
	mark := f.mark()
	f.EnsureReady(t, svc)
	writes := f.writes(mark)
	reads, _ := f.calls(mark)
	t.Logf("port change: %d reads, writes %v", reads, writes)
	want := []string{"DELETE /load-balancer/v2.0/lbaas/listeners/" + tcp.ID, "POST /load-balancer/v2.0/lbaas/listeners"}
	if !slices.Equal(writes, want) {
		t.Errorf("writes = %v, want %v", writes, want)
	}
	for _, w := range writes {
		if strings.Contains(w, udp.ID) || strings.Contains(w, udp.DefaultPoolID) {
			t.Errorf("write %q touches the UDP listener or pool", w)
		}
	}
	after := f.sim.State()
	moved := listenerByPort(t, after, "TCP", 8080)
	if moved.DefaultPoolID != tcp.DefaultPoolID || len(membersOf(after, moved.DefaultPoolID)) != 2 {
		t.Errorf("new listener's pool %s, want the old one %s with its 2 members", moved.DefaultPoolID, tcp.DefaultPoolID)
	}
	if got := listenerByPort(t, after, "UDP", 53); got.ID != udp.ID || got.UpdatedAt != udp.UpdatedAt {
		t.Errorf("UDP listener changed: %+v -> %+v", udp, got)
	}
	if got := f.OnlyLoadBalancer(t).Listeners; !slices.Equal(got, []string{"TCP:8080->:30080", "UDP:53->:30053"}) {
		t.Errorf("listeners = %v", got)
	}
}

// TestLoadBalancerNodeChurn: a node joining or leaving costs one batch
// member update per pool and nothing else.
func TestLoadBalancerNodeChurn(t *testing.T) {
	f := newLBFixture(t, "", nil)
	svc := f.Service(t, "web", nil)
	f.EnsureReady(t, svc)
	poolID := f.sim.State().Pools[0].ID
	batch := "PUT /load-balancer/v2.0/lbaas/pools/" + poolID + "/members"

	f.addNode("node-c")
	mark := f.mark()
	f.EnsureReady(t, svc)
	reads, _ := f.calls(mark)
	t.Logf("member change: %d reads, writes %v", reads, f.writes(mark))
	if got := f.writes(mark); !slices.Equal(got, []string{batch}) {
		t.Errorf("node joined: writes %v, want %v", got, []string{batch})
	}
	if got := f.OnlyLoadBalancer(t).Members; !slices.Equal(got, memberIDs(f, f.Nodes...)) {
		t.Errorf("members = %v", got)
	}

	f.Nodes = f.Nodes[1:]
	mark = f.mark()
	if err := f.Update(t, svc); !frameworktest.IsRetry(err) {
		t.Fatalf("UpdateLoadBalancer = %v, want a RetryError while the change applies", err)
	}
	f.EnsureReady(t, svc)
	if got := f.writes(mark); !slices.Equal(got, []string{batch}) {
		t.Errorf("node left: writes %v, want %v", got, []string{batch})
	}
	if got := f.OnlyLoadBalancer(t).Members; !slices.Equal(got, memberIDs(f, f.Nodes...)) {
		t.Errorf("members = %v", got)
	}
}

// TestLoadBalancerNodeWithoutAddresses: a Node whose providerID is set
// but whose addresses are not yet (the kubelet reports only its hostname;
// the node controller sets them just after the providerID, whose change is
// what makes the service controller sync) becomes a member with its
// server's address from Nova: that sync is the only one it gets.
func TestLoadBalancerNodeWithoutAddresses(t *testing.T) {
	f := newLBFixture(t, "", nil)
	svc := f.Service(t, "web", nil)
	f.EnsureReady(t, svc)
	n := f.addNode("node-c")
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "node-c"}}
	if err := f.Update(t, svc); !frameworktest.IsRetry(err) {
		t.Fatalf("UpdateLoadBalancer = %v, want a RetryError while the change applies", err)
	}
	f.EnsureReady(t, svc)
	if got := f.OnlyLoadBalancer(t).Members; !slices.Equal(got, memberIDs(f, f.Nodes...)) {
		t.Errorf("members = %v, want node-c's too", got)
	}
}

// TestLoadBalancerConflict: a write racing another change (Octavia answers
// 409 while the load balancer is PENDING_UPDATE) ends the sync with a
// RetryError and nothing half-done; the next syncs converge.
func TestLoadBalancerConflict(t *testing.T) {
	f := newLBFixture(t, "", nil)
	svc := f.Service(t, "web", nil)
	f.EnsureReady(t, svc)
	f.addNode("node-c")
	before := f.sim.State()
	f.sim.Inject(openstacksim.Fault{
		Op: "PUT /load-balancer/v2.0/lbaas/pools/{id}/members", Status: http.StatusConflict, Count: 1,
		Body: map[string]any{"faultcode": "Client", "faultstring": "Load Balancer " + before.LoadBalancers[0].ID + " is immutable and cannot be updated.", "debuginfo": nil},
	})
	_, err := f.Ensure(t, svc)
	if !frameworktest.IsRetry(err) {
		t.Fatalf("EnsureLoadBalancer = %v, want a RetryError", err)
	}
	if got := f.sim.State(); len(got.Members) != len(before.Members) || got.LoadBalancers[0].ProvisioningStatus != "ACTIVE" {
		t.Fatalf("after the refused write: %d members, status %s", len(got.Members), got.LoadBalancers[0].ProvisioningStatus)
	}
	f.EnsureReady(t, svc)
	if got := f.OnlyLoadBalancer(t).Members; !slices.Equal(got, memberIDs(f, f.Nodes...)) {
		t.Errorf("members = %v after convergence", got)
	}

	// A load balancer that is PENDING_UPDATE when read: no write at all.
	id := before.LoadBalancers[0].ID
	f.sim.SetLoadBalancerStatus(id, "PENDING_UPDATE")
	f.addNode("node-d")
	mark := f.mark()
	if _, err := f.Ensure(t, svc); !frameworktest.IsRetry(err) {
		t.Fatalf("EnsureLoadBalancer on a PENDING_UPDATE load balancer = %v, want a RetryError", err)
	}
	if got := f.writes(mark); len(got) != 0 {
		t.Errorf("writes while PENDING_UPDATE: %v", got)
	}
	f.sim.SetLoadBalancerStatus(id, "ACTIVE")
	f.EnsureReady(t, svc)
	if got := f.OnlyLoadBalancer(t).Members; len(got) != 4 {
		t.Errorf("members = %v, want 4", got)
	}
}

// TestLoadBalancerErrorRecovery: a load balancer in ERROR is reported with
// a Warning Event, deleted and created again with the same floating IP.
// Octavia turns it to ERROR behind the CCM's back here, so every sync
// reads the cloud (see TestLoadBalancerErrorAfterWrite for the shared
// list).
func TestLoadBalancerErrorRecovery(t *testing.T) {
	f := newLBFixtureTTL(t, -1, "", nil)
	svc := f.Service(t, "web", nil)
	ip := ingressIP(t, f.EnsureReady(t, svc))
	old := f.OnlyLoadBalancer(t).ID
	f.Drain()
	f.sim.SetLoadBalancerStatus(old, "ERROR")

	if _, err := f.Ensure(t, svc); !frameworktest.IsRetry(err) {
		t.Fatalf("sync of an ERROR load balancer = %v, want a RetryError while it is replaced", err)
	}
	events := strings.Join(f.Drain(), "\n")
	for _, want := range []string{"Warning LoadBalancerFailed", "Warning RecreatingLoadBalancer"} {
		if !strings.Contains(events, want) {
			t.Errorf("events lack %q:\n%s", want, events)
		}
	}
	status := f.EnsureReady(t, svc)
	lb := f.OnlyLoadBalancer(t)
	if lb.ID == old || lb.Name != "kube_service_test-cluster_default_web" || len(lb.Members) != 2 {
		t.Errorf("after recovery: %+v (old ID %s)", lb, old)
	}
	if got := ingressIP(t, status); got != ip {
		t.Errorf("status IP %s, want the kept floating IP %s", got, ip)
	}
	if fips := f.sim.State().FloatingIPs; len(fips) != 1 {
		t.Errorf("floating IPs = %+v, want one", fips)
	}
}

// TestLoadBalancerHealthMonitors: externalTrafficPolicy Local gets an HTTP
// monitor on the health check node port without any annotation; the
// annotations set the timings; false turns monitors off.
func TestLoadBalancerHealthMonitors(t *testing.T) {
	f := newLBFixture(t, "", nil)
	svc := f.Service(t, "local", nil, func(s *corev1.Service) {
		s.Spec.ExternalTrafficPolicy, s.Spec.HealthCheckNodePort = corev1.ServiceExternalTrafficPolicyLocal, 32000
	})
	f.EnsureReady(t, svc)
	st := f.sim.State()
	hm := monitorOf(st, st.Pools[0].ID)
	if hm == nil || hm.Type != "HTTP" || hm.URLPath != "/healthz" || hm.Delay != 5 || hm.Timeout != 3 || hm.MaxRetries != 1 || hm.MaxRetriesDown != 3 {
		t.Fatalf("monitor = %+v", hm)
	}
	for _, m := range membersOf(st, st.Pools[0].ID) {
		if m.MonitorPort != 32000 || m.ProtocolPort != 30080 {
			t.Errorf("member %+v, want monitor port 32000", m)
		}
	}

	f.UpdateService(t, svc, func(s *corev1.Service) {
		s.Annotations = map[string]string{openstack.AnnotationPrefix + "health-monitor-delay": "10", openstack.AnnotationPrefix + "health-monitor-max-retries": "2"}
	})
	mark := f.mark()
	f.EnsureReady(t, svc)
	if got := f.writes(mark); len(got) != 1 || !strings.HasPrefix(got[0], "PUT /load-balancer/v2.0/lbaas/healthmonitors/") {
		t.Errorf("writes = %v, want one monitor update", got)
	}
	if hm := monitorOf(f.sim.State(), st.Pools[0].ID); hm.Delay != 10 || hm.MaxRetries != 2 {
		t.Errorf("monitor = %+v", hm)
	}

	// Back to Cluster with monitors on: the HTTP monitor goes first, then
	// the members lose their monitor port, then a TCP monitor comes.
	f.UpdateService(t, svc, func(s *corev1.Service) {
		s.Annotations = map[string]string{openstack.AnnotationPrefix + "enable-health-monitor": "true"}
		s.Spec.ExternalTrafficPolicy, s.Spec.HealthCheckNodePort = corev1.ServiceExternalTrafficPolicyCluster, 0
	})
	mark = f.mark()
	f.EnsureReady(t, svc)
	var kinds []string
	for _, w := range f.writes(mark) {
		kinds = append(kinds, w[:strings.Index(w, " ")]+" "+w[strings.LastIndex(w, "/")+1:])
	}
	if want := []string{"DELETE " + hm.ID, "PUT members", "POST healthmonitors"}; !slices.Equal(kinds, want) {
		t.Errorf("Local -> Cluster writes %v, want %v", kinds, want)
	}
	st = f.sim.State()
	if hm := monitorOf(st, st.Pools[0].ID); hm == nil || hm.Type != "TCP" {
		t.Errorf("monitor = %+v, want TCP", hm)
	}
	for _, m := range membersOf(st, st.Pools[0].ID) {
		if m.MonitorPort != 0 {
			t.Errorf("member %+v kept its monitor port", m)
		}
	}

	f.UpdateService(t, svc, func(s *corev1.Service) {
		s.Annotations = map[string]string{openstack.AnnotationPrefix + "enable-health-monitor": "false"}
	})
	f.EnsureReady(t, svc)
	if hms := f.sim.State().HealthMonitors; len(hms) != 0 {
		t.Errorf("monitors = %+v, want none", hms)
	}
}

// TestLoadBalancerProtocols: UDP and SCTP listeners with their own pools
// and monitor types.
func TestLoadBalancerProtocols(t *testing.T) {
	f := newLBFixture(t, "create-monitor = true\n", nil)
	svc := f.Service(t, "multi", nil, withDNS, func(s *corev1.Service) {
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "sctp", Protocol: corev1.ProtocolSCTP, Port: 9999, NodePort: 30999})
	})
	f.EnsureReady(t, svc)
	st := f.sim.State()
	for _, tc := range []struct {
		protocol     string
		port         int
		pool, hmType string
		memberPort   int
	}{{"TCP", 80, "TCP", "TCP", 30080}, {"UDP", 53, "UDP", "UDP-CONNECT", 30053}, {"SCTP", 9999, "SCTP", "SCTP", 30999}} {
		l := listenerByPort(t, st, tc.protocol, tc.port)
		p := poolByID(st, l.DefaultPoolID)
		hm := monitorOf(st, p.ID)
		if p.Protocol != tc.pool || hm == nil || hm.Type != tc.hmType || len(membersOf(st, p.ID)) != 2 || membersOf(st, p.ID)[0].ProtocolPort != tc.memberPort {
			t.Errorf("%s:%d: pool %+v, monitor %+v", tc.protocol, tc.port, p, hm)
		}
	}
}

// TestLoadBalancerProxyProtocol: PROXY pools and ipMode Proxy in the status.
func TestLoadBalancerProxyProtocol(t *testing.T) {
	f := newLBFixture(t, "", nil)
	svc := f.Service(t, "proxy", map[string]string{openstack.AnnotationPrefix + "proxy-protocol": "v2"}, withDNS)
	status := f.EnsureReady(t, svc)
	st := f.sim.State()
	if p := poolByID(st, listenerByPort(t, st, "TCP", 80).DefaultPoolID); p.Protocol != "PROXYV2" {
		t.Errorf("TCP pool protocol %s, want PROXYV2", p.Protocol)
	}
	if p := poolByID(st, listenerByPort(t, st, "UDP", 53).DefaultPoolID); p.Protocol != "UDP" {
		t.Errorf("UDP pool protocol %s, want UDP", p.Protocol)
	}
	if ing := status.Ingress; len(ing) != 1 || ing[0].IPMode == nil || *ing[0].IPMode != corev1.LoadBalancerIPModeProxy {
		t.Errorf("status = %+v, want ipMode Proxy", status)
	}

	// v2 -> true (v1): the pool protocol cannot change, so it is replaced.
	f.UpdateService(t, svc, func(s *corev1.Service) { s.Annotations[openstack.AnnotationPrefix+"proxy-protocol"] = "true" })
	f.EnsureReady(t, svc)
	st = f.sim.State()
	if p := poolByID(st, listenerByPort(t, st, "TCP", 80).DefaultPoolID); p.Protocol != "PROXY" || len(membersOf(st, p.ID)) != 2 {
		t.Errorf("TCP pool %+v, want PROXY with 2 members", p)
	}
}

// TestLoadBalancerSourceRanges: loadBalancerSourceRanges become each
// listener's allowed_cidrs, and a change updates just the listeners.
func TestLoadBalancerSourceRanges(t *testing.T) {
	f := newLBFixture(t, "", nil)
	svc := f.Service(t, "ranges", nil, withDNS, func(s *corev1.Service) {
		s.Spec.LoadBalancerSourceRanges = []string{"203.0.113.0/24", "10.0.0.0/8"}
	})
	f.EnsureReady(t, svc)
	for _, l := range f.sim.State().Listeners {
		if !slices.Equal(l.AllowedCIDRs, []string{"10.0.0.0/8", "203.0.113.0/24"}) {
			t.Errorf("listener %s:%d allowed_cidrs = %v", l.Protocol, l.ProtocolPort, l.AllowedCIDRs)
		}
	}
	f.UpdateService(t, svc, func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = nil })
	mark := f.mark()
	f.EnsureReady(t, svc)
	if got := f.writes(mark); len(got) != 2 || !strings.HasPrefix(got[0], "PUT /load-balancer/v2.0/lbaas/listeners/") {
		t.Errorf("writes = %v, want two listener updates", got)
	}
	for _, l := range f.sim.State().Listeners {
		if l.AllowedCIDRs != nil {
			t.Errorf("allowed_cidrs = %v, want none", l.AllowedCIDRs)
		}
	}
}

// TestLoadBalancerSettings: listener and pool annotations reach Octavia,
// and a second sync writes nothing (the diff knows Octavia's defaults).
func TestLoadBalancerSettings(t *testing.T) {
	p := openstack.AnnotationPrefix
	f := newLBFixture(t, "", nil)
	svc := f.Service(t, "settings", map[string]string{
		p + "connection-limit": "100", p + "lb-method": "least_connections", p + "x-forwarded-for": "true",
		p + "timeout-client-data": "60000", p + "timeout-tcp-inspect": "10", p + "node-selector": "pool=default",
	}, func(s *corev1.Service) { s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP })
	f.addNode("node-elsewhere").Labels = map[string]string{"pool": "other"}
	f.EnsureReady(t, svc)
	st := f.sim.State()
	l := listenerByPort(t, st, "HTTP", 80)
	if l.ConnectionLimit != 100 || l.TimeoutClientData != 60000 || l.TimeoutTCPInspect != 10 || l.TimeoutMemberConnect != 5000 || l.InsertHeaders["X-Forwarded-For"] != "true" {
		t.Errorf("listener = %+v", l)
	}
	pool := poolByID(st, l.DefaultPoolID)
	if pool.Protocol != "HTTP" || pool.LBAlgorithm != "LEAST_CONNECTIONS" || pool.SessionPersistence == nil || pool.SessionPersistence.Type != "SOURCE_IP" {
		t.Errorf("pool = %+v", pool)
	}
	if n := len(membersOf(st, pool.ID)); n != 2 {
		t.Errorf("%d members, want the 2 nodes the node-selector picks", n)
	}
	mark := f.mark()
	f.EnsureReady(t, svc)
	if got := f.writes(mark); len(got) != 0 {
		t.Errorf("second sync writes %v", got)
	}
}

// TestLoadBalancerInvalid: a bad annotation or class is a Warning naming
// it, and nothing is written.
func TestLoadBalancerInvalid(t *testing.T) {
	p := openstack.AnnotationPrefix
	for key, value := range map[string]string{
		p + "lb-method":              "FASTEST",
		p + "class":                  "gold",
		p + "health-monitor-timeout": "9",
		p + "proxy-protocol":         "v3",
	} {
		t.Run(key, func(t *testing.T) {
			f := newLBFixture(t, "", nil)
			svc := f.Service(t, "bad", map[string]string{key: value})
			f.Drain()
			mark := f.mark()
			if _, err := f.Ensure(t, svc); err == nil {
				t.Fatal("EnsureLoadBalancer succeeded")
			}
			if got := f.writes(mark); len(got) != 0 {
				t.Errorf("writes = %v", got)
			}
			if events := strings.Join(f.Drain(), "\n"); !strings.Contains(events, "Warning") || !strings.Contains(events, key) {
				t.Errorf("events do not warn about %s:\n%s", key, events)
			}
		})
	}
}

// TestLoadBalancerClass: a [LoadBalancerClass] section picks the floating
// network; an annotation still wins over it.
func TestLoadBalancerClass(t *testing.T) {
	f := newLBFixture(t, "", func(sim *openstacksim.Server, conf string) string {
		net, _ := sim.AddFloatingNetwork("public-2", "198.51.100.0/24")
		sim.AddRouter(openstacksim.Router{Name: "router-2"}, net.ID, sim.Defaults().SubnetID)
		return conf + "\n[LoadBalancerClass \"gold\"]\nfloating-network-id = " + net.ID + "\n"
	})
	svc := f.Service(t, "gold", map[string]string{openstack.AnnotationPrefix + "class": "gold"})
	status := f.EnsureReady(t, svc)
	if ip := ingressIP(t, status); !strings.HasPrefix(ip, "198.51.100.") {
		t.Errorf("floating IP %s, want one of the class's network", ip)
	}
	other := f.Service(t, "override", map[string]string{
		openstack.AnnotationPrefix + "class": "gold", openstack.AnnotationPrefix + "floating-network-id": f.sim.Defaults().FloatingNetworkID,
	})
	status = f.EnsureReady(t, other)
	if ip := ingressIP(t, status); !strings.HasPrefix(ip, "172.24.4.") {
		t.Errorf("floating IP %s, want one of the annotated network", ip)
	}
}

// TestLoadBalancerTLS: default-tls-container-ref makes TCP ports
// TERMINATED_HTTPS listeners with HTTP pools; UDP ports stay as they are.
func TestLoadBalancerTLS(t *testing.T) {
	f := newLBFixture(t, "", nil)
	ref := "https://barbican.example.com/v1/containers/0f4c"
	svc := f.Service(t, "tls", map[string]string{openstack.AnnotationPrefix + "default-tls-container-ref": ref}, withDNS)
	f.EnsureReady(t, svc)
	st := f.sim.State()
	l := listenerByPort(t, st, "TERMINATED_HTTPS", 80)
	if l.DefaultTLSContainerRef != ref || poolByID(st, l.DefaultPoolID).Protocol != "HTTP" {
		t.Errorf("listener %+v, pool %+v", l, poolByID(st, l.DefaultPoolID))
	}
	listenerByPort(t, st, "UDP", 53)
	mark := f.mark()
	f.EnsureReady(t, svc)
	if got := f.writes(mark); len(got) != 0 {
		t.Errorf("second sync writes %v", got)
	}
}
