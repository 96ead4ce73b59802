package rancher_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
	"github.com/ccmkit/ccmkit/providers/rancher"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
)

// The sim's operations the tests inject faults into.
const (
	opListHosts   = "GET /v2-beta/projects/{project}/hosts"
	opHostIPs     = "GET /v2-beta/projects/{project}/hosts/{id}/ipaddresses"
	providerIDFmt = "rancher://%s"
)

func node(name, providerID string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: providerID}}
}

// simCloud starts a simulator and the provider on it with the instance
// cache TTL ttl (negative: off), and returns the InstancesV2 the node
// controllers use and the framework client's request counter.
func simCloud(t *testing.T, ttl time.Duration, vars ...string) (*ranchersim.Server, *rancher.Provider, cloudprovider.InstancesV2, *cloudapi.Counter) {
	t.Helper()
	sim := ranchersim.NewServer(t, ranchersim.Options{})
	return startCloud(t, sim, sim.URL(), ttl, vars...)
}

// olderCattleCloud is simCloud behind a proxy that drops the include
// parameter of every request: a Cattle that ignores include, as the API
// spec lets a server, and answers hosts without their addresses embedded.
func olderCattleCloud(t *testing.T, ttl time.Duration) (*ranchersim.Server, cloudprovider.InstancesV2, *cloudapi.Counter) {
	t.Helper()
	sim := ranchersim.NewServer(t, ranchersim.Options{})
	target, err := url.Parse(sim.URL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host // the answer's links lead back through the proxy
		q := r.Out.URL.Query()
		q.Del("include")
		r.Out.URL.RawQuery = q.Encode()
	}})
	t.Cleanup(proxy.Close)
	_, _, v2, counter := startCloud(t, sim, proxy.URL, ttl)
	return sim, v2, counter
}

// startCloud starts the provider on sim, reached at baseURL.
func startCloud(t *testing.T, sim *ranchersim.Server, baseURL string, ttl time.Duration, vars ...string) (*ranchersim.Server, *rancher.Provider, cloudprovider.InstancesV2, *cloudapi.Counter) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	p := rancher.New()
	counter := cloudapi.NewCounter()
	cloud, err := newCloud(ctx, p, with(sim.Env(baseURL), vars...), counter, ttl)
	if err != nil {
		t.Fatalf("NewCloud: %v", err)
	}
	v2, ok := cloud.InstancesV2()
	if !ok {
		t.Fatal("no InstancesV2")
	}
	counter.Reset()
	return sim, p, v2, counter
}

func TestInstanceMetadata(t *testing.T) {
	sim, _, inst, _ := simCloud(t, -1)
	_, ctx := ktesting.NewTestContext(t)
	h := sim.AddHost(ranchersim.Host{
		Hostname: "Worker-1.example.com", AgentIPAddress: "10.42.0.7",
		IPAddresses: []ranchersim.IPAddress{{Address: "10.42.0.7"}, {Address: "192.168.5.7"}, {Address: "203.0.113.70"}},
		Labels: map[string]string{
			"topology.kubernetes.io/zone": "zone-b", "topology.kubernetes.io/region": "eu",
			"node.kubernetes.io/instance-type": "m5.large", "io.rancher.host.external_dns_ip": "198.51.100.7",
		},
	})
	sim.AddHost(ranchersim.Host{Hostname: "worker-2.example.com"})
	want := &cloudprovider.InstanceMetadata{
		ProviderID: fmt.Sprintf(providerIDFmt, h.UUID), InstanceType: "m5.large", Zone: "zone-b", Region: "eu",
		NodeAddresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: "10.42.0.7"},
			{Type: corev1.NodeInternalIP, Address: "192.168.5.7"},
			{Type: corev1.NodeExternalIP, Address: "203.0.113.70"},
			{Type: corev1.NodeExternalIP, Address: "198.51.100.7"},
			{Type: corev1.NodeHostName, Address: "Worker-1.example.com"},
		},
	}
	for _, n := range []*corev1.Node{
		node("whatever", fmt.Sprintf(providerIDFmt, h.UUID)),
		node("worker-1.example.com", ""), // case-insensitive
		node("worker-1", ""),             // short name, FQDN hostname
	} {
		got, err := inst.InstanceMetadata(ctx, n)
		if err != nil {
			t.Fatalf("InstanceMetadata(%s, %q): %v", n.Name, n.Spec.ProviderID, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("InstanceMetadata(%s, %q) (-want +got):\n%s", n.Name, n.Spec.ProviderID, diff)
		}
	}
}

// A host without topology labels: no zone or region, the existing CCM's
// instance type; and a short hostname found from an FQDN Node name.
func TestInstanceMetadataDefaults(t *testing.T) {
	sim, _, inst, _ := simCloud(t, -1)
	_, ctx := ktesting.NewTestContext(t)
	h := sim.AddHost(ranchersim.Host{Hostname: "node-7"})
	got, err := inst.InstanceMetadata(ctx, node("node-7.cluster.example", ""))
	if err != nil {
		t.Fatal(err)
	}
	if got.ProviderID != fmt.Sprintf(providerIDFmt, h.UUID) || got.InstanceType != "rancher" || got.Zone != "" || got.Region != "" {
		t.Errorf("InstanceMetadata = %+v; want the host's providerID, type rancher, no zone or region", got)
	}
}

// InstanceExists is false only when Cattle says the host is gone; a
// refused key, a server error, a proxy's 404 or a truncated answer is an
// error, and the Node stays.
func TestInstanceExists(t *testing.T) {
	sim, _, inst, _ := simCloud(t, -1)
	_, ctx := ktesting.NewTestContext(t)
	live := sim.AddHost(ranchersim.Host{Hostname: "live"})
	removed := sim.AddHost(ranchersim.Host{Hostname: "removed"})
	sim.RemoveHost(removed.ID)
	for name, tt := range map[string]struct {
		n    *corev1.Node
		want bool
	}{
		"live by providerID":    {node("x", fmt.Sprintf(providerIDFmt, live.UUID)), true},
		"live by name":          {node("live", ""), true},
		"removed by providerID": {node("x", fmt.Sprintf(providerIDFmt, removed.UUID)), false},
		"removed by name":       {node("removed", ""), false},
		"never existed":         {node("x", "rancher://00000000-0000-0000-0000-000000000000"), false},
		"unknown name":          {node("nobody", ""), false},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := inst.InstanceExists(ctx, tt.n)
			if err != nil || got != tt.want {
				t.Errorf("InstanceExists = %v, %v; want %v, nil", got, err, tt.want)
			}
		})
	}
	for name, f := range map[string]frameworktest.Fault{
		"401":       frameworktest.FaultUnauthorized,
		"500":       frameworktest.FaultServerError,
		"proxy 404": frameworktest.FaultProxyNotFound,
		"truncated": frameworktest.FaultTruncatedBody,
	} {
		t.Run(name, func(t *testing.T) {
			sf := f.SimFault()
			sf.Op = opListHosts
			defer sim.Inject(sf)()
			for _, n := range []*corev1.Node{node("x", fmt.Sprintf(providerIDFmt, removed.UUID)), node("nobody", "")} {
				if got, err := inst.InstanceExists(ctx, n); err == nil {
					t.Errorf("InstanceExists(%s, %q) = %v, nil; want an error", n.Name, n.Spec.ProviderID, got)
				}
			}
		})
	}
}

// Shutdown is a host deactivated or disconnected, not one reconnecting.
func TestInstanceShutdown(t *testing.T) {
	sim, _, inst, _ := simCloud(t, -1)
	_, ctx := ktesting.NewTestContext(t)
	for _, tt := range []struct {
		state string
		want  bool
	}{
		{ranchersim.StateActive, false},
		{ranchersim.StateInactive, true},
		{ranchersim.StateDisconnected, true},
		{ranchersim.StateReconnecting, false},
	} {
		h := sim.AddHost(ranchersim.Host{Hostname: "host-" + tt.state})
		sim.SetHostState(h.ID, tt.state)
		got, err := inst.InstanceShutdown(ctx, node("x", fmt.Sprintf(providerIDFmt, h.UUID)))
		if err != nil || got != tt.want {
			t.Errorf("%s: InstanceShutdown = %v, %v; want %v, nil", tt.state, got, err, tt.want)
		}
		if exists, err := inst.InstanceExists(ctx, node("x", fmt.Sprintf(providerIDFmt, h.UUID))); err != nil || !exists {
			t.Errorf("%s: InstanceExists = %v, %v; want true", tt.state, exists, err)
		}
	}
}

// Two hosts that answer to one Node name are an error, never one of them.
func TestAmbiguousName(t *testing.T) {
	sim, _, inst, _ := simCloud(t, -1)
	_, ctx := ktesting.NewTestContext(t)
	sim.AddHost(ranchersim.Host{Hostname: "node-1.a.example"})
	sim.AddHost(ranchersim.Host{Hostname: "node-1.b.example"})
	if _, err := inst.InstanceMetadata(ctx, node("node-1", "")); err == nil {
		t.Error("InstanceMetadata found one of two hosts named node-1.*")
	}
	if got, err := inst.InstanceMetadata(ctx, node("node-1.b.example", "")); err != nil || got.NodeAddresses[len(got.NodeAddresses)-1].Address != "node-1.b.example" {
		t.Errorf("InstanceMetadata(node-1.b.example) = %+v, %v; want that host", got, err)
	}
}

// TestNodeSweepCost: initializing 2,500 Nodes, by providerID or by name,
// costs one paginated host list (three pages of 1,000, the hosts'
// addresses embedded) and no per-host request, however many lookups; a
// second sweep within the TTL costs nothing.
func TestNodeSweepCost(t *testing.T) {
	const n = 2500
	sim, _, inst, counter := simCloud(t, time.Hour)
	hosts := addHosts(sim, n)
	sweepNodes(t, inst, hosts)
	want := map[string]int64{"hosts.list": 3}
	if diff := cmp.Diff(want, counter.Snapshot()); diff != "" {
		t.Errorf("requests of a sweep of %d Nodes (-want +got):\n%s", n, diff)
	}
	counter.Reset()
	sweepNodes(t, inst, hosts)
	if got := counter.Total(); got != 0 {
		t.Errorf("a second sweep within the TTL made %d requests: %v", got, counter.Snapshot())
	}
}

// TestNodeSweepCostWithoutInclude: a Cattle that ignores include answers
// hosts without their addresses; each host's ipAddresses link is read
// instead, once per TTL, and the Nodes get the same addresses.
func TestNodeSweepCostWithoutInclude(t *testing.T) {
	const n = 250
	sim, inst, counter := olderCattleCloud(t, time.Hour)
	hosts := addHosts(sim, n)
	sweepNodes(t, inst, hosts)
	want := map[string]int64{"hosts.list": 1, "hosts.ipAddresses": n}
	if diff := cmp.Diff(want, counter.Snapshot()); diff != "" {
		t.Errorf("requests of a sweep of %d Nodes (-want +got):\n%s", n, diff)
	}
	counter.Reset()
	sweepNodes(t, inst, hosts)
	if got := counter.Total(); got != 0 {
		t.Errorf("a second sweep within the TTL made %d requests: %v", got, counter.Snapshot())
	}
}

// addHosts adds n hosts named node-000... with the simulator's default
// addresses (the agent IP and a public one).
func addHosts(sim *ranchersim.Server, n int) []ranchersim.Host {
	hosts := make([]ranchersim.Host, n)
	for i := range hosts {
		hosts[i] = sim.AddHost(ranchersim.Host{Hostname: fmt.Sprintf("node-%03d", i)})
	}
	return hosts
}

// sweepNodes initializes a Node for each host, by providerID and by name,
// and checks each gets the host's addresses.
func sweepNodes(t *testing.T, inst cloudprovider.InstancesV2, hosts []ranchersim.Host) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	for _, h := range hosts {
		want := []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: h.AgentIPAddress},
			{Type: corev1.NodeExternalIP, Address: h.IPAddresses[1].Address},
			{Type: corev1.NodeHostName, Address: h.Hostname},
		}
		for _, nd := range []*corev1.Node{node("x", fmt.Sprintf(providerIDFmt, h.UUID)), node(h.Hostname, "")} {
			md, err := inst.InstanceMetadata(ctx, nd)
			if err != nil {
				t.Fatalf("InstanceMetadata(%s, %q): %v", nd.Name, nd.Spec.ProviderID, err)
			}
			if diff := cmp.Diff(want, md.NodeAddresses); diff != "" {
				t.Fatalf("InstanceMetadata(%s, %q) addresses (-want +got):\n%s", nd.Name, nd.Spec.ProviderID, diff)
			}
		}
	}
}

// A host's addresses changed in Cattle reach its Node with the next list
// (here the cache is off), from the embedded addresses: no link is read.
func TestEmbeddedAddressesFollowChanges(t *testing.T) {
	sim, _, inst, counter := simCloud(t, -1)
	_, ctx := ktesting.NewTestContext(t)
	h := sim.AddHost(ranchersim.Host{Hostname: "moving"})
	if _, err := inst.InstanceMetadata(ctx, node("moving", "")); err != nil {
		t.Fatal(err)
	}
	sim.SetHostAddresses(h.ID, "10.9.9.9", "198.51.100.9")
	md, err := inst.InstanceMetadata(ctx, node("moving", ""))
	if err != nil {
		t.Fatal(err)
	}
	want := []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: "10.9.9.9"},
		{Type: corev1.NodeExternalIP, Address: "198.51.100.9"},
		{Type: corev1.NodeHostName, Address: "moving"},
	}
	if diff := cmp.Diff(want, md.NodeAddresses); diff != "" {
		t.Errorf("addresses after the change (-want +got):\n%s", diff)
	}
	if got := counter.Snapshot()["hosts.ipAddresses"]; got != 0 {
		t.Errorf("%d ipAddresses reads; want none (embedded)", got)
	}
}

// Against a Cattle that ignores include, a host whose addresses cannot be
// read is left out of the list, not the list failed: its Node is looked up
// directly (which reads them again), the others are served.
func TestAddressReadFailure(t *testing.T) {
	sim, inst, counter := olderCattleCloud(t, time.Hour)
	_, ctx := ktesting.NewTestContext(t)
	a := sim.AddHost(ranchersim.Host{Hostname: "a"})
	defer sim.Inject(simkit.Fault{Op: opHostIPs, Status: http.StatusInternalServerError, Count: 1})()
	b := sim.AddHost(ranchersim.Host{Hostname: "b"})
	for _, h := range []ranchersim.Host{a, b} {
		if exists, err := inst.InstanceExists(ctx, node("x", fmt.Sprintf(providerIDFmt, h.UUID))); err != nil || !exists {
			t.Errorf("InstanceExists(%s) = %v, %v; want true (the direct lookup retries the addresses)", h.Hostname, exists, err)
		}
	}
	if got := counter.Snapshot()["hosts.ipAddresses"]; got != 3 {
		t.Errorf("%d ipAddresses reads; want 3 (a, b, a's retry)", got)
	}
}
