package gbsim

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"testing"

	"github.com/brightbox/gobrightbox/v2/enums/serverstatus"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

func TestCloud(t *testing.T) {
	cloud := StartCloud(simkit.Common{})
	t.Cleanup(cloud.Close)
	env := cloud.Env()
	for _, k := range []string{"BRIGHTBOX_CLIENT", "BRIGHTBOX_CLIENT_SECRET", "BRIGHTBOX_API_URL", "BRIGHTBOX_ACCOUNT"} {
		if env[k] == "" {
			t.Errorf("Env has no %s: %v", k, env)
		}
	}
	if env["BRIGHTBOX_API_URL"] != cloud.URL() {
		t.Errorf("BRIGHTBOX_API_URL = %q, want %q", env["BRIGHTBOX_API_URL"], cloud.URL())
	}
	c := connect(t, cloud.Server)

	a, b := cloud.AddInstance("node-a"), cloud.AddInstance("node-b")
	cloud.ShutdownInstance(b)
	if srv, err := c.Server(ctx(), b); err != nil || srv.Status != serverstatus.Inactive || srv.Name != "node-b" {
		t.Errorf("shut down = %+v, %v", srv, err)
	}
	lb, err := c.CreateLoadBalancer(ctx(), lbOptions(b, a))
	if err != nil {
		t.Fatal(err)
	}
	cloud.Advance()
	lbs := cloud.LoadBalancers()
	want := simkit.LoadBalancer{ID: lb.ID, Name: "web.default.kubernetes", Listeners: []string{"TCP:80->:31080"}, Members: slices.Sorted(slices.Values([]string{a, b}))}
	if len(lbs) != 1 || !reflect.DeepEqual(lbs[0], want) {
		t.Errorf("LoadBalancers = %+v, want %+v", lbs, want)
	}
	cloud.DeleteInstance(a)
	if srv, err := c.Server(ctx(), a); err != nil || srv.Status != serverstatus.Deleted {
		t.Errorf("deleted = %+v, %v", srv, err)
	}
	if _, err := c.DestroyLoadBalancer(ctx(), lb.ID); err != nil {
		t.Fatal(err)
	}
	cloud.Advance()
	if lbs := cloud.LoadBalancers(); len(lbs) != 0 {
		t.Errorf("LoadBalancers after deletion = %+v", lbs)
	}

	cloud.RotateSecret("rotated")
	_, err = c.Servers(ctx())
	wantStatus(t, err, http.StatusUnauthorized)
	if _, err := connectAs(t, cloud.Server, env["BRIGHTBOX_CLIENT"], env["BRIGHTBOX_CLIENT_SECRET"]).Servers(ctx()); err == nil {
		t.Error("the old secret still works")
	}
	if _, err := connectAs(t, cloud.Server, env["BRIGHTBOX_CLIENT"], "rotated").Servers(ctx()); err != nil {
		t.Errorf("the new secret: %v", err)
	}
	if got := cloud.Env()["BRIGHTBOX_CLIENT_SECRET"]; got != "rotated" {
		t.Errorf("Env's secret after rotation = %q", got)
	}
}

func TestSimEndpoints(t *testing.T) {
	s, c := setup(t, Options{})
	srv := s.AddServer(CloudServer{Name: "a"})
	s.AddCloudIP(CloudIP{Name: "ip", Target: srv.ID})
	if _, err := c.Servers(ctx()); err != nil {
		t.Fatal(err)
	}
	var state Snapshot
	getSim(t, s.URL()+"/_sim/state", &state)
	if len(state.Servers) != 1 || len(state.CloudIPs) != 1 || state.CloudIPs[0].Target != srv.Interface ||
		len(state.ServerGroups) != 1 || len(state.FirewallPolicies) != 1 || state.Account != s.Account() {
		t.Errorf("/_sim/state = %+v", state)
	}
	var stats struct {
		Operations map[string]int `json:"operations"`
	}
	getSim(t, s.URL()+"/_sim/stats", &stats)
	if stats.Operations["GET /1.0/servers"] != 1 || stats.Operations[opToken] != 1 {
		t.Errorf("/_sim/stats operations = %v", stats.Operations)
	}
}

func getSim(t *testing.T, url string, v any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}
