package digitalocean

import (
	"slices"
	"testing"

	"github.com/digitalocean/godo"
)

func TestSpecChanges(t *testing.T) {
	sixty := uint64(60)
	// lb is a load balancer as the API returns it, with the defaults it
	// fills in and lists in its own order.
	lb := func() *godo.LoadBalancer {
		return &godo.LoadBalancer{
			Name: "a", Algorithm: "round_robin", Type: "REGIONAL", Region: &godo.Region{Slug: "nyc3"}, SizeUnit: 1,
			ForwardingRules: []godo.ForwardingRule{
				{EntryProtocol: "udp", EntryPort: 53, TargetProtocol: "udp", TargetPort: 30053},
				{EntryProtocol: "tcp", EntryPort: 80, TargetProtocol: "tcp", TargetPort: 30080},
			},
			HealthCheck:            &godo.HealthCheck{Protocol: "http", Port: 10256, Path: "/healthz", CheckIntervalSeconds: 3, ResponseTimeoutSeconds: 5, HealthyThreshold: 5, UnhealthyThreshold: 3},
			StickySessions:         &godo.StickySessions{Type: "none"},
			DropletIDs:             []int{2, 1},
			Tags:                   []string{"team:web", "k8s:c1"},
			HTTPIdleTimeoutSeconds: &sixty,
			Firewall:               &godo.LBFirewall{},
			Network:                "EXTERNAL", NetworkStack: "IPV4",
		}
	}
	// want is the CCM's desired spec for the same thing.
	want := func() *godo.LoadBalancerRequest {
		return &godo.LoadBalancerRequest{
			Name: "a", Algorithm: "round_robin", Type: "REGIONAL", Region: "nyc3", SizeUnit: 1,
			ForwardingRules: []godo.ForwardingRule{
				{EntryProtocol: "tcp", EntryPort: 80, TargetProtocol: "tcp", TargetPort: 30080},
				{EntryProtocol: "udp", EntryPort: 53, TargetProtocol: "udp", TargetPort: 30053},
			},
			HealthCheck: &godo.HealthCheck{Protocol: "http", Port: 10256, Path: "/healthz", CheckIntervalSeconds: 3, ResponseTimeoutSeconds: 5, HealthyThreshold: 5, UnhealthyThreshold: 3},
			DropletIDs:  []int{1, 2},
			Tags:        []string{"k8s:c1", "team:web"},
			Network:     "EXTERNAL", NetworkStack: "IPV4",
		}
	}
	if got := specChanges(lb(), want()); len(got) != 0 {
		t.Fatalf("the API's defaults and order count as changes: %v", got)
	}
	for name, tc := range map[string]struct {
		edit func(*godo.LoadBalancerRequest)
		want string
	}{
		"a droplet leaves":  {func(r *godo.LoadBalancerRequest) { r.DropletIDs = []int{1} }, "droplets"},
		"a node port moves": {func(r *godo.LoadBalancerRequest) { r.ForwardingRules[0].TargetPort = 31000 }, "forwarding rules"},
		"source ranges":     {func(r *godo.LoadBalancerRequest) { r.Firewall = &godo.LBFirewall{Allow: []string{"cidr:10.0.0.0/8"}} }, "firewall"},
		"proxy protocol on": {func(r *godo.LoadBalancerRequest) { r.EnableProxyProtocol = true }, "proxy protocol"},
		"idle timeout":      {func(r *godo.LoadBalancerRequest) { v := uint64(90); r.HTTPIdleTimeoutSeconds = &v }, "http idle timeout"},
		"sticky cookies": {func(r *godo.LoadBalancerRequest) {
			r.StickySessions = &godo.StickySessions{Type: "cookies", CookieName: "c", CookieTtlSeconds: 5}
		}, "sticky sessions"},
		"health check":        {func(r *godo.LoadBalancerRequest) { r.HealthCheck.Port = 32000 }, "health check"},
		"renamed":             {func(r *godo.LoadBalancerRequest) { r.Name = "b" }, "name"},
		"cluster tag missing": {func(r *godo.LoadBalancerRequest) { r.Tags = append(r.Tags, "k8s:c2") }, "tags"},
		"to the droplet tag":  {func(r *godo.LoadBalancerRequest) { r.DropletIDs, r.Tag = nil, "lb-nodes" }, "droplet tag"},
	} {
		t.Run(name, func(t *testing.T) {
			w := want()
			tc.edit(w)
			if got := specChanges(lb(), w); !slices.Equal(got, []string{tc.want}) {
				t.Errorf("changes = %v, want [%s]", got, tc.want)
			}
		})
	}
}

// TestSpecChangesTagMode: a load balancer on the droplet tag answers the
// droplets carrying it in droplet_ids; they are no change, the tag is.
func TestSpecChangesTagMode(t *testing.T) {
	lb := &godo.LoadBalancer{Name: "a", Tag: "lb-nodes", DropletIDs: []int{1, 2}, Tags: []string{"k8s:c1"}}
	want := &godo.LoadBalancerRequest{Name: "a", Tag: "lb-nodes", Tags: []string{"k8s:c1"}}
	if got := specChanges(lb, want); len(got) != 0 {
		t.Errorf("the tag's droplets count as changes: %v", got)
	}
	want.Tag = "other"
	if got := specChanges(lb, want); !slices.Equal(got, []string{"droplet tag"}) {
		t.Errorf("another tag: changes = %v", got)
	}
	// Back to droplet IDs: the tag goes, and the droplets are compared.
	want.Tag, want.DropletIDs = "", []int{1, 2}
	if got := specChanges(lb, want); !slices.Equal(got, []string{"droplet tag"}) {
		t.Errorf("to droplet IDs: changes = %v", got)
	}
	want.DropletIDs = []int{1}
	if got := specChanges(lb, want); !slices.Equal(got, []string{"droplet tag", "droplets"}) {
		t.Errorf("to fewer droplet IDs: changes = %v", got)
	}
}
