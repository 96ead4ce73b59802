package dosim

import (
	"net/http"
	"slices"
	"testing"

	"github.com/digitalocean/godo"
)

var anywhere = &godo.Sources{Addresses: []string{"0.0.0.0/0", "::/0"}}

// TestFirewallRealShape: the API answers "0" for the ports of a rule sent
// with "all" and for every ICMP rule (openapi
// specification/resources/firewalls/models/firewall_rule.yml: '"0" when all
// ports are open for a protocol. For ICMP rules this parameter will always
// return "0"'; godo's firewalls_test.go fixtures; godo issue 149), refuses
// "0" in a request (doctl issue 247, api-v2 issue 171), and a create or
// update answers "waiting" with a pending change per droplet
// (create_firewall_response.yml) that settles to "succeeded" with none.
func TestFirewallRealShape(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 2})
	tagged := s.AddDroplet(Droplet{Tags: []string{"web"}}).ID
	direct := s.AddDroplet(Droplet{}).ID
	s.AddDroplet(Droplet{}) // not in the firewall
	req := &godo.FirewallRequest{
		Name: "fw", Tags: []string{"web"}, DropletIDs: []int{direct},
		InboundRules: []godo.InboundRule{
			{Protocol: "icmp", Sources: anywhere},
			{Protocol: "tcp", PortRange: "all", Sources: anywhere},
			{Protocol: "udp", PortRange: "30053", Sources: anywhere},
		},
		OutboundRules: []godo.OutboundRule{{Protocol: "tcp", PortRange: "all", Destinations: &godo.Destinations{Addresses: []string{"0.0.0.0/0"}}}},
	}
	fw, resp, err := c.Firewalls.Create(ctx(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("create answered %d, want 202", resp.StatusCode)
	}
	var ports []string
	for _, r := range fw.InboundRules {
		ports = append(ports, r.Protocol+":"+r.PortRange)
	}
	if want := []string{"icmp:0", "tcp:0", "udp:30053"}; !slices.Equal(ports, want) || fw.OutboundRules[0].PortRange != "0" {
		t.Errorf("ports answered %v and outbound %q, want %v and 0", ports, fw.OutboundRules[0].PortRange, want)
	}
	wantPending := []godo.PendingChange{{DropletID: tagged, Status: "waiting"}, {DropletID: direct, Status: "waiting"}}
	if fw.Status != "waiting" || !slices.Equal(fw.PendingChanges, wantPending) {
		t.Errorf("created: status %q, pending %+v; want waiting, %+v", fw.Status, fw.PendingChanges, wantPending)
	}
	if got, _, _ := c.Firewalls.Get(ctx(), fw.ID); got.Status != "waiting" {
		t.Errorf("first read: %q, want still waiting", got.Status)
	}
	got, _, err := c.Firewalls.Get(ctx(), fw.ID)
	if err != nil || got.Status != "succeeded" || len(got.PendingChanges) != 0 || got.PendingChanges == nil {
		t.Errorf("second read: %+v %v; want succeeded with pending_changes []", got, err)
	}

	// Dropping the directly assigned droplet: it is removed.
	req.DropletIDs = nil
	got, _, err = c.Firewalls.Update(ctx(), fw.ID, req)
	wantPending = []godo.PendingChange{{DropletID: tagged, Status: "waiting"}, {DropletID: direct, Removing: true, Status: "waiting"}}
	if err != nil || got.Status != "waiting" || !slices.Equal(got.PendingChanges, wantPending) {
		t.Errorf("update: %+v %v; want waiting with %+v", got, err, wantPending)
	}

	// "0" is what the API answers, not what it takes.
	bad := *req
	bad.InboundRules = []godo.InboundRule{{Protocol: "tcp", PortRange: "0", Sources: anywhere}}
	_, _, err = c.Firewalls.Update(ctx(), fw.ID, &bad)
	if er := errorResponse(t, err, 422); er.Message != "You must specify a positive value for ports." {
		t.Errorf("ports 0: %q", er.Message)
	}
	bad.InboundRules = []godo.InboundRule{{Protocol: "tcp", PortRange: "22", Action: "drop", Sources: anywhere}}
	_, _, err = c.Firewalls.Update(ctx(), fw.ID, &bad)
	wantStatus(t, err, 422)
}

// TestFirewallSubresources: POST and DELETE /v2/firewalls/{id}/droplets,
// /tags and /rules answer 204 and change that part alone, leaving the
// firewall waiting on its droplets; DELETE /rules matches a rule sent
// with "all" to the one answered "0"; GET /v2/droplets/{id}/firewalls
// lists the firewalls that apply to a droplet, by ID or tag (openapi
// specification/resources/firewalls/firewalls_*.yml,
// droplets/droplets_list_firewalls.yml).
func TestFirewallSubresources(t *testing.T) {
	s, c := setup(t, Options{})
	d1 := s.AddDroplet(Droplet{}).ID
	d2 := s.AddDroplet(Droplet{Tags: []string{"db"}}).ID
	fw, _, err := c.Firewalls.Create(ctx(), &godo.FirewallRequest{
		Name: "fw", InboundRules: []godo.InboundRule{{Protocol: "tcp", PortRange: "22", Sources: anywhere}},
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Advance()
	resp, err := c.Firewalls.AddDroplets(ctx(), fw.ID, d1)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("add droplets: %v %v", resp, err)
	}
	if _, err := c.Firewalls.AddTags(ctx(), fw.ID, "db"); err != nil {
		t.Fatal(err)
	}
	rules := &godo.FirewallRulesRequest{
		InboundRules:  []godo.InboundRule{{Protocol: "udp", PortRange: "all", Sources: &godo.Sources{Tags: []string{"db"}}}},
		OutboundRules: []godo.OutboundRule{{Protocol: "icmp", Destinations: &godo.Destinations{Addresses: []string{"0.0.0.0/0"}}}},
	}
	if _, err := c.Firewalls.AddRules(ctx(), fw.ID, rules); err != nil {
		t.Fatal(err)
	}
	got := s.Firewalls()[0]
	if !slices.Equal(got.DropletIDs, []int{d1}) || !slices.Equal(got.Tags, []string{"db"}) || len(got.InboundRules) != 2 ||
		got.InboundRules[1].PortRange != "0" || got.OutboundRules[0].PortRange != "0" || got.Status != FirewallWaiting ||
		len(got.PendingChanges) != 2 {
		t.Errorf("after adding: %+v", got)
	}
	for _, id := range []int{d1, d2} {
		fws, _, err := c.Firewalls.ListByDroplet(ctx(), id, nil)
		if err != nil || len(fws) != 1 || fws[0].ID != fw.ID {
			t.Errorf("firewalls of droplet %d: %+v %v", id, fws, err)
		}
	}
	if _, err := c.Firewalls.RemoveRules(ctx(), fw.ID, rules); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Firewalls.RemoveTags(ctx(), fw.ID, "db"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Firewalls.RemoveDroplets(ctx(), fw.ID, d1); err != nil {
		t.Fatal(err)
	}
	got = s.Firewalls()[0]
	if len(got.DropletIDs)+len(got.Tags)+len(got.OutboundRules) != 0 || len(got.InboundRules) != 1 {
		t.Errorf("after removing: %+v", got)
	}
	if fws, _, err := c.Firewalls.ListByDroplet(ctx(), d2, nil); err != nil || len(fws) != 0 {
		t.Errorf("firewalls of droplet %d after removing: %+v %v", d2, fws, err)
	}

	_, err = c.Firewalls.AddDroplets(ctx(), fw.ID, 42)
	wantStatus(t, err, 422)
	_, err = c.Firewalls.AddTags(ctx(), fw.ID, "nope")
	wantStatus(t, err, 422)
	_, err = c.Firewalls.AddRules(ctx(), "missing", rules)
	wantStatus(t, err, 404)
	_, _, err = c.Firewalls.ListByDroplet(ctx(), 42, nil)
	wantStatus(t, err, 404)

	// A deleted droplet leaves the firewalls it was assigned to.
	if _, err := c.Firewalls.AddDroplets(ctx(), fw.ID, d1); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Droplets.Delete(ctx(), d1); err != nil {
		t.Fatal(err)
	}
	if got := s.Firewalls()[0]; len(got.DropletIDs) != 0 {
		t.Errorf("droplet_ids after deleting the droplet: %v", got.DropletIDs)
	}
}
