package brightbox_test

import (
	"fmt"
	"net/http"
	"testing"

	brightboxapi "github.com/brightbox/gobrightbox/v2"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
	"github.com/ccmkit/ccmkit/providers/brightbox"
	"github.com/ccmkit/ccmkit/providers/brightbox/gbsim"
)

func node(name, providerID string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: providerID}}
}

// simCloud starts a simulator and the provider on it, with the instance
// cache off (ttl < 0) or on, and returns the InstancesV2 the node
// controllers use.
func simCloud(t *testing.T, vars func(*gbsim.Server) map[string]string) (*gbsim.Server, *brightbox.Provider, cloudprovider.InstancesV2) {
	t.Helper()
	sim := gbsim.NewServer(t, gbsim.Options{})
	env := sim.Env(sim.URL())
	if vars != nil {
		env = vars(sim)
	}
	_, ctx := ktesting.NewTestContext(t)
	p := brightbox.New()
	cloud, err := newCloud(ctx, p, env, nil)
	if err != nil {
		t.Fatalf("NewCloud: %v", err)
	}
	v2, ok := cloud.InstancesV2()
	if !ok {
		t.Fatal("no InstancesV2")
	}
	return sim, p, v2
}

// mapCloudIP gives server id a cloud IP through the API, as a user would,
// and returns it.
func mapCloudIP(t *testing.T, p *brightbox.Provider, id string) *brightboxapi.CloudIP {
	t.Helper()
	ctx := t.Context()
	c := p.APIClient()
	cip, err := c.CreateCloudIP(ctx, brightboxapi.CloudIPOptions{})
	if err != nil {
		t.Fatalf("creating a cloud IP: %v", err)
	}
	srv, err := c.Server(ctx, id)
	if err != nil || len(srv.Interfaces) == 0 {
		t.Fatalf("reading server %s: %v", id, err)
	}
	if _, err := c.MapCloudIP(ctx, cip.ID, brightboxapi.CloudIPAttachment{Destination: srv.Interfaces[0].ID}); err != nil {
		t.Fatalf("mapping cloud IP %s to %s: %v", cip.ID, id, err)
	}
	return cip
}

func TestInstanceMetadata(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(fmt.Sprintf("legacy=%v", legacy), func(t *testing.T) {
			sim, p, inst := simCloud(t, func(sim *gbsim.Server) map[string]string {
				return with(sim.Env(sim.URL()), "BRIGHTBOX_LEGACY_ADDRESSES", fmt.Sprint(legacy))
			})
			_, ctx := ktesting.NewTestContext(t)
			srv := sim.AddServer(gbsim.CloudServer{Name: "worker-1", Zone: "gb1-b", Type: "4gb.ssd", IPv4: "10.241.0.7", IPv6: "2a02:1348:17c:7::1"})
			cip := mapCloudIP(t, p, srv.ID)
			cipv4 := cip.PublicIPv4
			if cipv4 == "" {
				cipv4 = cip.PublicIP
			}
			addrs := []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: "10.241.0.7"},
				{Type: corev1.NodeExternalIP, Address: cipv4},
				{Type: corev1.NodeExternalIP, Address: "2a02:1348:17c:7::1"},
				{Type: corev1.NodeExternalIP, Address: cip.PublicIPv6},
				{Type: corev1.NodeExternalDNS, Address: cip.Fqdn},
				{Type: corev1.NodeExternalDNS, Address: srv.FQDN},
				{Type: corev1.NodeHostName, Address: srv.Hostname},
			}
			if legacy {
				addrs = []corev1.NodeAddress{
					{Type: corev1.NodeHostName, Address: srv.Hostname},
					{Type: corev1.NodeExternalDNS, Address: srv.FQDN},
					{Type: corev1.NodeExternalIP, Address: "10.241.0.7"},
					{Type: corev1.NodeExternalIP, Address: "2a02:1348:17c:7::1"},
					{Type: corev1.NodeExternalIP, Address: cipv4},
					{Type: corev1.NodeExternalDNS, Address: cip.Fqdn},
				}
			}
			want := &cloudprovider.InstanceMetadata{
				ProviderID: "brightbox://" + srv.ID, InstanceType: "4gb.ssd", Zone: "gb1-b", Region: "gb1",
				NodeAddresses: addrs,
			}
			for _, n := range []*corev1.Node{
				node("whatever", "brightbox://"+srv.ID),
				node(srv.ID, ""),     // the existing CCM's convention
				node("worker-1", ""), // the server's name
			} {
				got, err := inst.InstanceMetadata(ctx, n)
				if err != nil {
					t.Fatalf("InstanceMetadata(%s, %q): %v", n.Name, n.Spec.ProviderID, err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("InstanceMetadata(%s, %q) (-want +got):\n%s", n.Name, n.Spec.ProviderID, diff)
				}
			}
		})
	}
}

// TestInstanceExistsAndShutdown: a server is gone only on the API's own
// 404 or when deleted or failed; inactive and unavailable are shut down.
func TestInstanceExistsAndShutdown(t *testing.T) {
	sim, _, inst := simCloud(t, nil)
	_, ctx := ktesting.NewTestContext(t)
	tests := []struct {
		status         string
		exists, isDown bool
	}{
		{gbsim.StatusActive, true, false},
		{"creating", true, false},
		{"inactive", true, true},
		{"unavailable", true, true},
		{"deleting", true, false},
		{"failed", false, false},
		{gbsim.StatusDeleted, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.status, func(t *testing.T) {
			id := sim.AddServer(gbsim.CloudServer{Name: "n-" + tt.status, Status: tt.status}).ID
			for _, n := range []*corev1.Node{node("x", "brightbox://"+id), node(id, ""), node("n-"+tt.status, "")} {
				exists, err := inst.InstanceExists(ctx, n)
				if err != nil || exists != tt.exists {
					t.Errorf("InstanceExists(%s, %q) = %v, %v; want %v", n.Name, n.Spec.ProviderID, exists, err, tt.exists)
				}
				down, err := inst.InstanceShutdown(ctx, n)
				if err != nil || down != tt.isDown {
					t.Errorf("InstanceShutdown(%s, %q) = %v, %v; want %v", n.Name, n.Spec.ProviderID, down, err, tt.isDown)
				}
			}
		})
	}
	t.Run("unknown", func(t *testing.T) {
		for _, n := range []*corev1.Node{node("x", "brightbox://srv-nope1"), node("srv-nope1", ""), node("nobody", "")} {
			if exists, err := inst.InstanceExists(ctx, n); err != nil || exists {
				t.Errorf("InstanceExists(%s, %q) = %v, %v; want false", n.Name, n.Spec.ProviderID, exists, err)
			}
		}
	})
}

// TestNotFoundIsAuthoritative: only the API's own 404 makes a server gone;
// a proxy's HTML 404, an error status or an auth failure keeps the Node.
func TestNotFoundIsAuthoritative(t *testing.T) {
	sim, _, inst := simCloud(t, nil)
	_, ctx := ktesting.NewTestContext(t)
	id := sim.AddServer(gbsim.CloudServer{}).ID
	n := node("x", "brightbox://"+id)
	for name, f := range map[string]simkit.Fault{
		"proxy's HTML 404":  {Status: http.StatusNotFound, ContentType: "text/html", Body: "<html>Not Found</html>"},
		"JSON 404 not API":  {Status: http.StatusNotFound, ContentType: "application/json", Body: `{"message":"no route"}`},
		"server error":      {Status: http.StatusInternalServerError},
		"forbidden":         {Status: http.StatusForbidden},
		"bad gateway":       {Status: http.StatusBadGateway, ContentType: "text/plain", Body: "bad gateway"},
		"connection reset":  {Reset: true},
		"truncated answer":  {Truncate: true},
		"unknown enum":      {Status: http.StatusOK, Body: map[string]any{"id": id, "status": "hibernating"}},
		"not a JSON object": {Status: http.StatusOK, ContentType: "application/json", Body: `[`},
	} {
		t.Run(name, func(t *testing.T) {
			f.Op = "GET /1.0/servers/{id}"
			remove := sim.Inject(f)
			defer remove()
			exists, err := inst.InstanceExists(ctx, n)
			if err == nil {
				t.Errorf("InstanceExists = %v, nil; want an error", exists)
			}
			if _, err := inst.InstanceMetadata(ctx, n); err == nil {
				t.Error("InstanceMetadata succeeded, want an error")
			}
		})
	}
}

// TestMalformedList: a list the API garbles is an error, never a panic and
// never a not-found: the lookup by name of a Node without providerID fails.
func TestMalformedList(t *testing.T) {
	sim, _, inst := simCloud(t, nil)
	_, ctx := ktesting.NewTestContext(t)
	sim.AddServer(gbsim.CloudServer{Name: "worker-1"})
	for name, f := range map[string]simkit.Fault{
		"truncated":    {Truncate: true},
		"unknown enum": {Status: http.StatusOK, Body: []map[string]any{{"id": "srv-aaaaa", "name": "worker-1", "status": "zombie"}}},
	} {
		t.Run(name, func(t *testing.T) {
			f.Op = "GET /1.0/servers"
			remove := sim.Inject(f)
			defer remove()
			if exists, err := inst.InstanceExists(ctx, node("worker-1", "")); err == nil {
				t.Errorf("InstanceExists = %v, nil; want an error", exists)
			}
		})
	}
}

// TestDuplicateNames: two servers with a Node's name are an error, not a
// guess; the server ID still finds each.
func TestDuplicateNames(t *testing.T) {
	sim, _, inst := simCloud(t, nil)
	_, ctx := ktesting.NewTestContext(t)
	a := sim.AddServer(gbsim.CloudServer{Name: "twin"}).ID
	sim.AddServer(gbsim.CloudServer{Name: "twin"})
	if _, err := inst.InstanceMetadata(ctx, node("twin", "")); err == nil || framework.IsNotFound(err) {
		t.Errorf("InstanceMetadata(twin) = %v, want an error that is not not-found", err)
	}
	if md, err := inst.InstanceMetadata(ctx, node(a, "")); err != nil || md.ProviderID != "brightbox://"+a {
		t.Errorf("InstanceMetadata(%s) = %v, %v", a, md, err)
	}
}

// TestOneListPerTTL: with the instance cache on, the metadata of many
// Nodes, by providerID, named after their server's ID or after its name,
// costs one GET /1.0/servers and no GET of a server.
func TestOneListPerTTL(t *testing.T) {
	sim := gbsim.NewServer(t, gbsim.Options{})
	var ids []string
	for i := range 50 {
		ids = append(ids, sim.AddServer(gbsim.CloudServer{Name: fmt.Sprintf("node-%d", i)}).ID)
	}
	_, ctx := ktesting.NewTestContext(t)
	counter := cloudapi.NewCounter()
	cloud, err := framework.NewCloud(ctx, brightbox.New(), &framework.Env{
		LookupEnv: func(k string) (string, bool) { v, ok := sim.Env(sim.URL())[k]; return v, ok },
		CloudAPI:  cloudapi.Options{Counter: counter},
	})
	if err != nil {
		t.Fatal(err)
	}
	inst, _ := cloud.InstancesV2()
	counter.Reset()
	for i, id := range ids {
		n := node(id, "")
		switch i % 3 {
		case 1:
			n = node("ignored", "brightbox://"+id)
		case 2:
			n = node(fmt.Sprintf("node-%d", i), "")
		}
		if _, err := inst.InstanceMetadata(ctx, n); err != nil {
			t.Fatalf("InstanceMetadata(%s): %v", id, err)
		}
	}
	if got := counter.Snapshot(); got["servers.list"] != 1 || got["servers.get"] != 0 || counter.Total() != 1 {
		t.Errorf("requests for 50 Nodes: %v, want one servers.list", got)
	}
}
