package digitalocean

import (
	"context"
	"slices"
	"testing"

	"github.com/ccmkit/ccmkit/providers/digitalocean/dosim"
)

// TestLoadBalancersShareDropletLists: the load balancers of a cluster list
// the same droplets, and the driver keeps one copy of each distinct list,
// whether it read them in a list (page by page: a page of 200 load
// balancers of 5,000 droplets is 8 MB as decoded) or alone.
func TestLoadBalancersShareDropletLists(t *testing.T) {
	sim := dosim.NewServer(t, dosim.Options{})
	droplets := []int{101, 102, 103}
	for _, name := range []string{"a", "b", "c"} {
		sim.AddLoadBalancer(dosim.LoadBalancer{Name: name, DropletIDs: droplets})
	}
	sim.AddLoadBalancer(dosim.LoadBalancer{Name: "d", DropletIDs: droplets[:2]})
	d := &lbDriver{client: withToken(t, sim)}
	ctx := context.Background()
	lbs, err := d.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(lbs) != 4 {
		t.Fatalf("listed %d load balancers, want 4", len(lbs))
	}
	byName := map[string]*loadBalancer{}
	for _, lb := range lbs {
		byName[lb.Name] = lb
	}
	shared := &byName["a"].DropletIDs[0]
	for _, name := range []string{"b", "c"} {
		if got := byName[name].DropletIDs; !slices.Equal(got, droplets) || &got[0] != shared {
			t.Fatalf("load balancer %s: droplets %v not shared with a's", name, got)
		}
	}
	if got := byName["d"].DropletIDs; !slices.Equal(got, droplets[:2]) || &got[0] == shared {
		t.Fatalf("load balancer d: droplets %v, want its own %v", got, droplets[:2])
	}
	got, err := d.Get(ctx, byName["b"].ID)
	if err != nil {
		t.Fatal(err)
	}
	if &got.DropletIDs[0] != shared {
		t.Fatal("a load balancer read alone does not share its droplet list")
	}
}
