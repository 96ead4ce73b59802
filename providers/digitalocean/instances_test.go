package digitalocean_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/providers/digitalocean"
	"github.com/ccmkit/ccmkit/providers/digitalocean/dosim"
)

func node(name, providerID string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: providerID}}
}

// simCloud starts a simulator and the provider on it.
func simCloud(t *testing.T, opts dosim.Options) (*dosim.Server, *framework.Cloud, cloudprovider.InstancesV2, framework.Instances) {
	t.Helper()
	sim := dosim.NewServer(t, opts)
	cloud, _ := mustCloud(t, sim.Env(sim.URL()))
	v2, _ := cloud.InstancesV2()
	return sim, cloud, v2, cloud.Provider().(framework.InstancesProvider).Instances()
}

func TestInstanceMetadata(t *testing.T) {
	sim, _, inst, _ := simCloud(t, dosim.Options{})
	_, ctx := ktesting.NewTestContext(t)
	full := sim.AddDroplet(dosim.Droplet{
		Name: "node-1", SizeSlug: "s-2vcpu-4gb", Region: dosim.Region{Slug: "ams3"},
		Networks: dosim.Networks{
			V4: []dosim.NetworkV4{
				{IPAddress: "203.0.113.1", Type: "public"},
				{IPAddress: "10.110.0.2", Type: "private"},
			},
			V6: []dosim.NetworkV6{{IPAddress: "2001:DB8::1", Type: "public"}},
		},
	}).ID
	privateOnly := sim.AddDroplet(dosim.Droplet{
		Name: "worker-x", SizeSlug: "s-1vcpu-1gb",
		Networks: dosim.Networks{V4: []dosim.NetworkV4{{IPAddress: "10.110.0.9", Type: "private"}}},
	}).ID
	fullAddrs := []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: "10.110.0.2"},
		{Type: corev1.NodeExternalIP, Address: "203.0.113.1"},
		{Type: corev1.NodeExternalIP, Address: "2001:db8::1"},
		{Type: corev1.NodeHostName, Address: "node-1"},
	}
	privateAddrs := []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: "10.110.0.9"},
		{Type: corev1.NodeHostName, Address: "worker-x"},
	}
	tests := []struct {
		name string
		node *corev1.Node
		want *cloudprovider.InstanceMetadata
	}{
		{
			name: "by providerID, every address",
			node: node("node-1", fmt.Sprintf("digitalocean://%d", full)),
			want: &cloudprovider.InstanceMetadata{
				ProviderID: fmt.Sprintf("digitalocean://%d", full), InstanceType: "s-2vcpu-4gb", Region: "ams3",
				NodeAddresses: fullAddrs,
			},
		},
		{
			name: "triple-slash providerID",
			node: node("node-1", fmt.Sprintf("digitalocean:///%d", full)),
			want: &cloudprovider.InstanceMetadata{
				ProviderID: fmt.Sprintf("digitalocean://%d", full), InstanceType: "s-2vcpu-4gb", Region: "ams3",
				NodeAddresses: fullAddrs,
			},
		},
		{
			name: "by exact name",
			node: node("node-1", ""),
			want: &cloudprovider.InstanceMetadata{
				ProviderID: fmt.Sprintf("digitalocean://%d", full), InstanceType: "s-2vcpu-4gb", Region: "ams3",
				NodeAddresses: fullAddrs,
			},
		},
		{
			name: "node named after the private IPv4",
			node: node("10.110.0.9", ""),
			want: &cloudprovider.InstanceMetadata{
				ProviderID: fmt.Sprintf("digitalocean://%d", privateOnly), InstanceType: "s-1vcpu-1gb", Region: "nyc3",
				NodeAddresses: privateAddrs,
			},
		},
		{
			name: "node named after the public IPv6",
			node: node("2001:db8::1", ""),
			want: &cloudprovider.InstanceMetadata{
				ProviderID: fmt.Sprintf("digitalocean://%d", full), InstanceType: "s-2vcpu-4gb", Region: "ams3",
				NodeAddresses: fullAddrs,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := inst.InstanceMetadata(ctx, tt.node)
			if err != nil {
				t.Fatalf("InstanceMetadata: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("InstanceMetadata (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSparseDroplet maps a droplet with only size.slug, no region and no
// networks (a droplet still being created can look like this): REGION
// applies and the Node gets its hostname only.
func TestSparseDroplet(t *testing.T) {
	api := newRawAPI(t, map[string]rawResponse{
		"GET /v2/droplets/5": {body: `{"droplet":{"id":5,"name":"node-5","status":"new","size":{"slug":"s-1vcpu-1gb"}}}`},
	})
	cloud, ctx := mustCloud(t, api.Env())
	got, err := cloud.Provider().(framework.InstancesProvider).Instances().InstanceByID(ctx, "5")
	if err != nil {
		t.Fatalf("InstanceByID: %v", err)
	}
	want := &framework.Instance{
		ID: "5", Name: "node-5", Type: "s-1vcpu-1gb", Region: "nyc3",
		Addresses: []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "node-5"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("InstanceByID (-want +got):\n%s", diff)
	}
}

func TestInstanceShutdown(t *testing.T) {
	sim, _, inst, _ := simCloud(t, dosim.Options{})
	_, ctx := ktesting.NewTestContext(t)
	id := sim.AddDroplet(dosim.Droplet{Name: "node-1"}).ID
	n := node("node-1", fmt.Sprintf("digitalocean://%d", id))
	for _, status := range []string{"new", "active", "off", "archive"} {
		sim.SetDropletStatus(id, status)
		got, err := inst.InstanceShutdown(ctx, n)
		if err != nil {
			t.Fatalf("status %s: InstanceShutdown: %v", status, err)
		}
		if want := status == "off"; got != want {
			t.Errorf("status %s: InstanceShutdown = %v, want %v", status, got, want)
		}
	}
}

// TestNotFoundOnlyOn404 checks the rule that keeps Nodes alive: only the
// API's own 404 for the droplet means it is gone.
func TestNotFoundOnlyOn404(t *testing.T) {
	sim, _, inst, _ := simCloud(t, dosim.Options{})
	_, ctx := ktesting.NewTestContext(t)
	id := sim.Cloud().AddInstance("node-1")
	byID, byName := node("node-1", "digitalocean://"+id), node("node-1", "")

	faults := []struct {
		name  string
		fault dosim.Fault
	}{
		{"500", dosim.Fault{Status: http.StatusInternalServerError}},
		{"503", dosim.Fault{Status: http.StatusServiceUnavailable}},
		{"429", dosim.Fault{Status: http.StatusTooManyRequests}},
		{"401", dosim.Fault{Status: http.StatusUnauthorized}},
		{"403", dosim.Fault{Status: http.StatusForbidden}},
		{"timeout", dosim.Fault{Delay: 2 * time.Second}},
		{"connection reset", dosim.Fault{Reset: true}},
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			for _, n := range []*corev1.Node{byID, byName} {
				restore := sim.Inject(f.fault)
				ok, err := inst.InstanceExists(ctx, n)
				restore()
				if err == nil {
					t.Errorf("InstanceExists(providerID %q) = %v, nil; want an error", n.Spec.ProviderID, ok)
				}
			}
		})
	}

	t.Run("malformed providerID is an error", func(t *testing.T) {
		for _, pid := range []string{"digitalocean://abc", "digitalocean://-1", "digitalocean://0", "aws://i-1"} {
			if ok, err := inst.InstanceExists(ctx, node("x", pid)); err == nil {
				t.Errorf("InstanceExists(%q) = %v, nil; want an error", pid, ok)
			}
		}
	})

	t.Run("deleted", func(t *testing.T) {
		sim.Cloud().DeleteInstance(id)
		for _, n := range []*corev1.Node{byID, byName} {
			if ok, err := inst.InstanceExists(ctx, n); err != nil || ok {
				t.Errorf("InstanceExists(deleted, providerID %q) = %v, %v; want false, nil", n.Spec.ProviderID, ok, err)
			}
		}
	})
}

// TestNotFoundNeedsTheAPIsAnswer: a 404 counts only as the API's JSON
// error, not as a proxy's page or a wrong DO_OVERRIDE_URL path.
func TestNotFoundNeedsTheAPIsAnswer(t *testing.T) {
	tests := []struct {
		name         string
		answer       rawResponse
		wantNotFound bool
	}{
		{"the API's 404", rawResponse{status: 404, body: notFoundRaw}, true},
		{"a proxy's HTML 404", rawResponse{status: 404, contentType: "text/html", body: "<html>404 Not Found</html>"}, false},
		{"a plain-text 404", rawResponse{status: 404, contentType: "text/plain", body: "404 page not found"}, false},
		{"another API's JSON 404", rawResponse{status: 404, body: `{"message":"no route"}`}, false},
		{"a 410", rawResponse{status: 410, body: `{"id":"gone","message":"gone"}`}, false},
		{"200 without a droplet", rawResponse{body: `{}`}, false},
		{"200, not JSON", rawResponse{body: `{"droplet":`}, false},
		{"200, droplet without ID", rawResponse{body: `{"droplet":{"name":"x"}}`}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newRawAPI(t, map[string]rawResponse{"GET /v2/droplets/7": tt.answer})
			cloud, ctx := mustCloud(t, api.Env())
			inst, err := cloud.Provider().(framework.InstancesProvider).Instances().InstanceByID(ctx, "7")
			if err == nil {
				t.Fatalf("InstanceByID = %+v, nil; want an error", inst)
			}
			if got := framework.IsNotFound(err); got != tt.wantNotFound {
				t.Errorf("IsNotFound(%v) = %v, want %v", err, got, tt.wantNotFound)
			}
		})
	}
}

// TestListPagination lists 450 droplets: three pages of 200, read by
// following links.pages.next.
func TestListPagination(t *testing.T) {
	sim, cloud, _, inst := simCloud(t, dosim.Options{})
	_, ctx := ktesting.NewTestContext(t)
	want := map[string]string{}
	for i := range 450 {
		name := fmt.Sprintf("node-%03d", i)
		want[sim.Cloud().AddInstance(name)] = name
	}
	before := sim.Stats()["GET /v2/droplets"]

	list, err := inst.ListInstances(ctx)
	if err != nil {
		t.Fatalf("ListInstances: %v", err)
	}
	got := map[string]string{}
	for _, i := range list {
		got[i.ID] = i.Name
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ListInstances (-want +got):\n%s", diff)
	}
	if calls := sim.Stats()["GET /v2/droplets"] - before; calls != 3 {
		t.Errorf("list calls = %d, want 3", calls)
	}
	if calls := cloud.Env().APICounter.Get("droplets.list"); calls != 3 {
		t.Errorf("APICounter droplets.list = %d, want 3", calls)
	}

	// The last of them is found by name with one call, the API's name
	// filter; by one of its IPs, with the three calls of a full list.
	before = sim.Stats()["GET /v2/droplets"]
	if got, err := inst.InstanceByName(ctx, "node-449"); err != nil || got.Name != "node-449" {
		t.Fatalf("InstanceByName(node-449) = %+v, %v", got, err)
	}
	if calls := sim.Stats()["GET /v2/droplets"] - before; calls != 1 {
		t.Errorf("list calls for InstanceByName = %d, want 1", calls)
	}
	if _, err := inst.InstanceByName(ctx, "node-450"); !framework.IsNotFound(err) {
		t.Errorf("InstanceByName(node-450), which no droplet is named: %v, want not found", err)
	}
	var ip string
	for _, i := range list {
		if i.Name == "node-449" {
			ip = i.Addresses[0].Address
		}
	}
	before = sim.Stats()["GET /v2/droplets"]
	if got, err := inst.InstanceByName(ctx, ip); err != nil || got.Name != "node-449" {
		t.Fatalf("InstanceByName(%s) = %+v, %v", ip, got, err)
	}
	if calls := sim.Stats()["GET /v2/droplets"] - before; calls != 3 {
		t.Errorf("list calls for InstanceByName by IP = %d, want 3", calls)
	}
	// A failed page fails the whole list.
	defer sim.Inject(dosim.Fault{Op: "GET /v2/droplets", Status: 500})()
	if _, err := inst.ListInstances(ctx); err == nil {
		t.Error("ListInstances with a failing list: nil error")
	}
}

// TestNodeInitServedFromCache initializes 450 Nodes without providerIDs,
// as after a cluster's first boot, with the framework's instance cache on:
// the lookups cost one paginated list (3 calls), not 450.
func TestNodeInitServedFromCache(t *testing.T) {
	sim := dosim.NewServer(t, dosim.Options{})
	for i := range 450 {
		sim.Cloud().AddInstance(fmt.Sprintf("node-%03d", i))
	}
	_, ctx := ktesting.NewTestContext(t)
	vars := sim.Env(sim.URL())
	cloud, err := framework.NewCloud(ctx, digitalocean.New(), &framework.Env{
		LookupEnv:        func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		CloudAPI:         cloudapi.Options{MaxRetries: -1},
		InstanceCacheTTL: time.Minute,
	})
	if err != nil {
		t.Fatalf("NewCloud: %v", err)
	}
	inst, _ := cloud.InstancesV2()
	for i := range 450 {
		name := fmt.Sprintf("node-%03d", i)
		md, err := inst.InstanceMetadata(ctx, node(name, ""))
		if err != nil {
			t.Fatalf("InstanceMetadata(%s): %v", name, err)
		}
		if ok, err := inst.InstanceExists(ctx, node(name, md.ProviderID)); err != nil || !ok {
			t.Fatalf("InstanceExists(%s) = %v, %v", md.ProviderID, ok, err)
		}
	}
	stats := sim.Stats()
	got := map[string]int{"list": stats["GET /v2/droplets"], "get": stats["GET /v2/droplets/{id}"]}
	if diff := cmp.Diff(map[string]int{"list": 3, "get": 0}, got); diff != "" {
		t.Errorf("droplet calls (-want +got):\n%s", diff)
	}
}

func TestInstanceByNameErrors(t *testing.T) {
	droplet := func(id int, name, privateIP string) string {
		return fmt.Sprintf(`{"id":%d,"name":%q,"networks":{"v4":[{"ip_address":%q,"type":"private"}]}}`, id, name, privateIP)
	}
	list := func(droplets ...string) string {
		return `{"droplets":[` + strings.Join(droplets, ",") + `],"links":{},"meta":{"total":` + strconv.Itoa(len(droplets)) + `}}`
	}
	tests := []struct {
		name         string
		list         string
		node         string
		wantID       string
		wantErr      string
		wantNotFound bool
	}{
		{
			name:    "two droplets with the node's name",
			list:    list(droplet(1, "twin", "10.0.0.1"), droplet(2, "twin", "10.0.0.2")),
			node:    "twin",
			wantErr: `both match node "twin"`,
		},
		{
			name:   "a name wins over an IP",
			list:   list(droplet(1, "other", "10.0.0.2"), droplet(2, "10.0.0.2", "10.0.0.3")),
			node:   "10.0.0.2",
			wantID: "2",
		},
		{
			name:         "complete list, no match",
			list:         list(droplet(1, "node-1", "10.0.0.1")),
			node:         "node-2",
			wantErr:      `no droplet named "node-2"`,
			wantNotFound: true,
		},
		{
			name:    "malformed droplet in the list",
			list:    list(`{"name":"node-1"}`),
			node:    "node-2",
			wantErr: "1 malformed droplet",
		},
		{
			name:    "not JSON",
			list:    `{"droplets":[`,
			node:    "node-1",
			wantErr: "listing droplets",
		},
		{
			name:    "wrong shape",
			list:    `{"droplets":{"id":1}}`,
			node:    "node-1",
			wantErr: "listing droplets",
		},
		{
			name:    "a next page after an empty one",
			list:    `{"droplets":[],"links":{"pages":{"next":"http://x/v2/droplets?page=2"}},"meta":{"total":1}}`,
			node:    "node-1",
			wantErr: "empty but links to a next page",
		},
		{
			// A body without its "droplets" member decodes as no droplets.
			name:    "an answer without meta",
			list:    `{}`,
			node:    "node-1",
			wantErr: "without meta.total",
		},
		{
			name:    "fewer droplets than meta.total",
			list:    `{"droplets":[],"links":{},"meta":{"total":1}}`,
			node:    "node-1",
			wantErr: "0 listed, meta.total says 1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newRawAPI(t, map[string]rawResponse{"GET /v2/droplets": {body: tt.list}})
			cloud, ctx := mustCloud(t, api.Env())
			inst, err := cloud.Provider().(framework.InstancesProvider).Instances().InstanceByName(ctx, tt.node)
			if tt.wantErr == "" {
				if err != nil || inst.ID != tt.wantID {
					t.Fatalf("InstanceByName = %+v, %v; want ID %s", inst, err, tt.wantID)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("InstanceByName error = %v, want one containing %q", err, tt.wantErr)
			}
			if got := framework.IsNotFound(err); got != tt.wantNotFound {
				t.Errorf("IsNotFound = %v, want %v (err %v)", got, tt.wantNotFound, err)
			}
		})
	}
}

// TestListSkipsMalformed keeps the well-formed droplets of a list that
// holds one without an ID.
func TestListSkipsMalformed(t *testing.T) {
	api := newRawAPI(t, map[string]rawResponse{
		"GET /v2/droplets": {body: `{"droplets":[{"name":"broken"},{"id":7,"name":"node-7","size_slug":"s-1"}],"links":{},"meta":{"total":2}}`},
	})
	cloud, ctx := mustCloud(t, api.Env())
	list, err := cloud.Provider().(framework.InstancesProvider).Instances().ListInstances(ctx)
	if err != nil {
		t.Fatalf("ListInstances: %v", err)
	}
	var got []string
	for _, inst := range list {
		got = append(got, inst.ID+"="+inst.Name)
	}
	if diff := cmp.Diff([]string{"7=node-7"}, got); diff != "" {
		t.Errorf("ListInstances (-want +got):\n%s", diff)
	}
}
