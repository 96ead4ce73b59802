package skeletonsim_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ccmkit/ccmkit/examples/skeleton/skeletonsim"
	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

func TestCloud(t *testing.T) {
	sim := skeletonsim.NewServer(t, skeletonsim.Options{})
	var cloud simkit.Cloud = sim.Cloud()
	c := newClient(t, sim)

	id := cloud.AddInstance("node-1")
	other := cloud.AddInstance("node-2")
	want := skeletonsim.Instance{
		ID: id, Name: "node-1", Type: "s-2", Region: "sk-1", Zone: "sk-1a", Status: "running",
		PrivateIPv4: "10.0.0.2", PublicIPv4: "203.0.113.2", PublicIPv6: "2001:db8::2",
	}
	if diff := cmp.Diff(want, sim.Instances()[0]); diff != "" {
		t.Errorf("AddInstance (-want +got):\n%s", diff)
	}

	cloud.ShutdownInstance(id)
	cloud.DeleteInstance(other)
	if diff := cmp.Diff([]string{id + " stopped"}, instanceStatuses(sim)); diff != "" {
		t.Errorf("after ShutdownInstance and DeleteInstance (-want +got):\n%s", diff)
	}

	restore := cloud.Inject(simkit.Fault{Status: http.StatusInternalServerError})
	if got := c.do("GET", "/v1/instances", nil).status; got != http.StatusInternalServerError {
		t.Errorf("while failing: status %d, want 500", got)
	}
	restore()

	created := c.do("POST", "/v1/load-balancers", map[string]any{
		"name":      "lb",
		"listeners": []map[string]any{{"protocol": "TCP", "port": 443, "target_port": 30443}, {"protocol": "TCP", "port": 80, "target_port": 30080}},
		"members":   []string{id},
	})
	if created.status != http.StatusCreated {
		t.Fatalf("create: %d %s", created.status, created.body)
	}
	if got := cloud.Writes(); got != 1 {
		t.Errorf("Writes = %d, want 1", got)
	}
	wantLBs := []simkit.LoadBalancer{{
		ID: "lb-000001", Name: "lb", Listeners: []string{"TCP:443->:30443", "TCP:80->:30080"}, Members: []string{id},
	}}
	if diff := cmp.Diff(wantLBs, cloud.LoadBalancers()); diff != "" {
		t.Errorf("LoadBalancers (-want +got):\n%s", diff)
	}
	cloud.Advance()
	if got := sim.LoadBalancers()[0].Status; got != skeletonsim.StatusActive {
		t.Errorf("after Advance: status %q, want active", got)
	}
	wantLBs[0].Addresses = []string{"198.18.0.1"}
	if diff := cmp.Diff(wantLBs, cloud.LoadBalancers()); diff != "" {
		t.Errorf("LoadBalancers once active (-want +got):\n%s", diff)
	}
	if got := c.do("POST", "/v1/routes", map[string]any{"destination_cidr": "10.244.1.0/24", "target_instance_id": id}); got.status != http.StatusCreated {
		t.Fatalf("create route: %d %s", got.status, got.body)
	}
	if diff := cmp.Diff(map[string]string{"10.244.1.0/24": id}, cloud.Routes()); diff != "" {
		t.Errorf("Routes (-want +got):\n%s", diff)
	}
	if env := cloud.Env(); env["SKELETON_API_URL"] != sim.URL() || cloud.CloudConfig() != "" {
		t.Errorf("Env = %v, CloudConfig = %q", env, cloud.CloudConfig())
	}
}

// TestStartCloud: the one-line start internal/cluster uses, with the
// common settings applied.
func TestStartCloud(t *testing.T) {
	cloud := skeletonsim.StartCloud(simkit.Common{Latency: 5 * time.Millisecond})
	t.Cleanup(cloud.Close)
	resp, err := http.Get(cloud.URL() + "/v1/instances")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || cloud.InjectedLatency() < 5*time.Millisecond {
		t.Errorf("status %d, latency %v", resp.StatusCode, cloud.InjectedLatency())
	}
}

func instanceStatuses(sim *skeletonsim.Server) []string {
	var out []string
	for _, inst := range sim.Instances() {
		out = append(out, inst.ID+" "+inst.Status)
	}
	return out
}

func TestEnv(t *testing.T) {
	sim := skeletonsim.New(skeletonsim.Options{Token: "tok"})
	want := map[string]string{"SKELETON_API_URL": "http://127.0.0.1:1", "SKELETON_TOKEN": "tok"}
	if diff := cmp.Diff(want, sim.Env("http://127.0.0.1:1")); diff != "" {
		t.Errorf("Env (-want +got):\n%s", diff)
	}
}
