package skeleton

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/ccmkit/ccmkit/examples/skeleton/skeletonsim"
	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/config"
)

const testToken = "client-test-token"

// rawServer answers every request with status and body, and records the
// Authorization header it saw. A JSON body is sent as application/json, as
// the API sends it; anything else gets the type Go sniffs, as a proxy's
// page would.
func rawServer(t *testing.T, status int, body string) (*client, *string) {
	t.Helper()
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		if json.Valid([]byte(body)) {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	c, err := newClient(srv.URL, &http.Client{}, config.NewSecret(testToken))
	if err != nil {
		t.Fatal(err)
	}
	return c, &auth
}

// TestClientAnswers covers how the client reads what a server, a proxy in
// front of it, or a broken server may answer. Nothing may panic, and only
// the API's own not-found for one resource is ErrNotFound.
func TestClientAnswers(t *testing.T) {
	tests := []struct {
		name         string
		status       int
		body         string
		call         func(context.Context, *client) error
		wantErr      string
		wantNotFound bool
	}{
		{name: "instance", status: 200, body: `{"instance":{"id":"i-1"}}`, call: getInst},
		{name: "API not found", status: 404, body: `{"error":{"code":"not_found","message":"instance \"i-1\" not found"}}`, call: getInst,
			wantErr: `404 not_found: instance "i-1" not found`, wantNotFound: true},
		{name: "proxy 404 page", status: 404, body: `<html>Not Found</html>`, call: getInst, wantErr: "404 : Not Found"},
		{name: "wrong endpoint", status: 404, body: `{"error":{"code":"unknown_endpoint","message":"no endpoint"}}`, call: getInst, wantErr: "unknown_endpoint"},
		{name: "list not found", status: 404, body: `{"error":{"code":"not_found","message":"gone"}}`, call: listInst, wantErr: "not_found"},
		{name: "server error", status: 500, body: `{"error":{"code":"internal_error","message":"boom"}}`, call: getInst, wantErr: "500 internal_error: boom"},
		{name: "not JSON", status: 200, body: `<html>`, call: getInst, wantErr: "malformed response"},
		{name: "no envelope", status: 200, body: `{}`, call: getInst, wantErr: `no "instance"`},
		{name: "null object", status: 200, body: `{"instance":null}`, call: getInst, wantErr: `no "instance"`},
		{name: "wrong type", status: 200, body: `{"instance":{"id":7}}`, call: getInst, wantErr: "malformed response"},
		{name: "list without items", status: 200, body: `{"meta":{}}`, call: listInst, wantErr: `no "instances"`},
		{name: "list pointing back", status: 200, body: `{"instances":[],"meta":{"next_page":1}}`, call: listInst, wantErr: "points back"},
		{name: "update while provisioning", status: 409, body: `{"error":{"code":"conflict","message":"provisioning"}}`, call: updateLB, wantErr: "409 conflict"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, auth := rawServer(t, tt.status, tt.body)
			err := tt.call(context.Background(), c)
			if *auth != "Bearer "+testToken {
				t.Errorf("Authorization header = %q, want the bearer token", *auth)
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
			if framework.IsNotFound(err) != tt.wantNotFound {
				t.Errorf("IsNotFound = %v, want %v", !tt.wantNotFound, tt.wantNotFound)
			}
			if strings.Contains(err.Error(), testToken) {
				t.Errorf("error reveals the token: %v", err)
			}
		})
	}
}

func TestUpdateWhileProvisioningIsProvisioning(t *testing.T) {
	c, _ := rawServer(t, 409, `{"error":{"code":"conflict","message":"provisioning"}}`)
	if err := updateLB(context.Background(), c); !errors.Is(err, framework.ErrProvisioning) {
		t.Errorf("err = %v, want ErrProvisioning", err)
	}
}

// TestTokenStaysOnTheAPIHost: a redirect to another host must not carry the
// token.
func TestTokenStaysOnTheAPIHost(t *testing.T) {
	var leaked string
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked = r.Header.Get("Authorization")
		_, _ = w.Write([]byte(`{"instance":{"id":"i-1"}}`))
	}))
	t.Cleanup(elsewhere.Close)
	api := httptest.NewServer(http.RedirectHandler(elsewhere.URL+"/v1/instances/i-1", http.StatusFound))
	t.Cleanup(api.Close)
	c, err := newClient(api.URL, &http.Client{}, config.NewSecret(testToken)) // another port: another host
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.getInstance(context.Background(), "i-1"); err != nil {
		t.Fatal(err)
	}
	if leaked != "" {
		t.Errorf("the redirect target got Authorization %q", leaked)
	}
}

func getInst(ctx context.Context, c *client) error {
	_, err := c.getInstance(ctx, "i-1")
	return err
}

func listInst(ctx context.Context, c *client) error {
	_, err := c.listInstances(ctx)
	return err
}

func updateLB(ctx context.Context, c *client) error {
	_, err := c.updateLoadBalancer(ctx, "lb-1", &lbSpec{Name: "x"})
	return err
}

// TestLoadBalancersShareMemberLists: the load balancers of a cluster list
// the same nodes, and the client keeps one copy of each distinct list,
// whether it read them in a list, a GET or as a write's answer.
func TestLoadBalancersShareMemberLists(t *testing.T) {
	sim := skeletonsim.NewServer(t, skeletonsim.Options{})
	var nodes []string
	for range 3 {
		nodes = append(nodes, sim.AddInstance(skeletonsim.Instance{}).ID)
	}
	spec := func(name string, members []string) skeletonsim.LoadBalancer {
		return skeletonsim.LoadBalancer{LoadBalancerSpec: skeletonsim.LoadBalancerSpec{
			Name: name, Members: members,
			Listeners:   []skeletonsim.Listener{{Protocol: "TCP", Port: 80, TargetPort: 30080}},
			HealthCheck: skeletonsim.HealthCheck{Protocol: "tcp", Port: 30080, IntervalSeconds: 10},
		}}
	}
	for _, name := range []string{"a", "b", "c"} {
		sim.AddLoadBalancer(spec(name, nodes))
	}
	sim.AddLoadBalancer(spec("d", nodes[:2]))
	c, err := newClient(sim.URL(), &http.Client{}, config.NewSecret(sim.Token()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	lbs, err := c.listAllLoadBalancers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(lbs) != 4 {
		t.Fatalf("listed %d load balancers, want 4", len(lbs))
	}
	shared := &lbs[0].Members[0]
	for _, lb := range lbs[1:3] {
		if !slices.Equal(lb.Members, nodes) || &lb.Members[0] != shared {
			t.Fatalf("load balancer %s: members %v not shared with the others'", lb.Name, lb.Members)
		}
	}
	if got := lbs[3].Members; !slices.Equal(got, nodes[:2]) || &got[0] == shared {
		t.Fatalf("load balancer d: members %v, want its own %v", got, nodes[:2])
	}
	got, err := c.getLoadBalancer(ctx, lbs[1].ID)
	if err != nil {
		t.Fatal(err)
	}
	updated, err := c.updateLoadBalancer(ctx, lbs[2].ID, &lbs[2].lbSpec)
	if err != nil {
		t.Fatal(err)
	}
	again := lbs[0].lbSpec
	again.Name += "-copy"
	created, err := c.createLoadBalancer(ctx, &again)
	if err != nil {
		t.Fatal(err)
	}
	for _, lb := range []*loadBalancer{got, updated, created} {
		if &lb.Members[0] != shared {
			t.Fatalf("load balancer %s as read alone: members not shared", lb.ID)
		}
	}
}
