package dosim

import (
	"net/http"
	"slices"
	"testing"

	"github.com/digitalocean/godo"
)

// TestDropletActions: POST /v2/droplets/{id}/actions answers 201 with the
// action "in-progress"; reading it (GET /v2/actions/{id} as doctl --wait
// polls, or the droplet's action) completes it on the
// ProvisioningReads-th read, and only then does it change the droplet
// (openapi specification/resources/droplets/dropletActions_post.yml,
// actions/models/action.yml). A droplet with an action in progress takes
// no other.
func TestDropletActions(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 2})
	id := s.AddDroplet(Droplet{Name: "web", SizeSlug: "s-1vcpu-1gb"}).ID

	a, resp, err := c.DropletActions.PowerOff(ctx(), id)
	if err != nil || resp.StatusCode != http.StatusCreated || a.Status != ActionInProgress || a.Type != "power_off" ||
		a.ResourceID != id || a.ResourceType != "droplet" || a.RegionSlug != DefaultRegion || a.StartedAt == nil || a.CompletedAt != nil {
		t.Fatalf("power_off: %+v %v %v", a, resp, err)
	}
	_, _, err = c.DropletActions.Reboot(ctx(), id)
	if er := errorResponse(t, err, 422); er.Message != "Droplet already has a pending event." {
		t.Errorf("second action: %q", er.Message)
	}
	if d, _, _ := c.Droplets.Get(ctx(), id); d.Status != StatusActive {
		t.Errorf("status while powering off: %q", d.Status)
	}
	if got, _, _ := c.Actions.Get(ctx(), a.ID); got.Status != ActionInProgress {
		t.Errorf("first read: %q", got.Status)
	}
	got, _, err := c.DropletActions.Get(ctx(), id, a.ID)
	if err != nil || got.Status != ActionCompleted || got.CompletedAt == nil {
		t.Fatalf("second read: %+v %v", got, err)
	}
	if d, _, _ := c.Droplets.Get(ctx(), id); d.Status != StatusOff {
		t.Errorf("status after power_off: %q", d.Status)
	}

	// Resize, allowed powered off: CPU and memory; the disk with disk=true.
	a, _, err = c.DropletActions.Resize(ctx(), id, "s-2vcpu-4gb", false)
	if err != nil {
		t.Fatal(err)
	}
	s.Advance()
	d, _, _ := c.Droplets.Get(ctx(), id)
	if d.SizeSlug != "s-2vcpu-4gb" || d.Memory != 4096 || d.Vcpus != 2 || d.Disk != 25 || d.Size.Disk != 80 {
		t.Errorf("after resize without disk: %s %d/%d/%d", d.SizeSlug, d.Memory, d.Vcpus, d.Disk)
	}
	_, _, err = c.DropletActions.Resize(ctx(), id, "s-99vcpu", true)
	wantStatus(t, err, 422)

	for _, act := range []func() (*godo.Action, *godo.Response, error){
		func() (*godo.Action, *godo.Response, error) { return c.DropletActions.PowerOn(ctx(), id) },
		func() (*godo.Action, *godo.Response, error) { return c.DropletActions.Rename(ctx(), id, "web-2") },
		func() (*godo.Action, *godo.Response, error) { return c.DropletActions.Snapshot(ctx(), id, "snap") },
		func() (*godo.Action, *godo.Response, error) { return c.DropletActions.PowerCycle(ctx(), id) },
	} {
		if _, _, err := act(); err != nil {
			t.Fatal(err)
		}
		s.Advance()
	}
	d, _, _ = c.Droplets.Get(ctx(), id)
	if d.Status != StatusActive || d.Name != "web-2" || len(d.SnapshotIDs) != 1 {
		t.Errorf("after power_on, rename, snapshot, power_cycle: %+v", d)
	}
	_, _, err = c.DropletActions.Resize(ctx(), id, "s-4vcpu-8gb", true)
	if er := errorResponse(t, err, 422); er.Message == "" {
		t.Error("resize of a running droplet accepted")
	}
	actions, _, err := c.Actions.List(ctx(), nil)
	if err != nil || len(actions) != 6 || actions[0].Type != "power_cycle" {
		t.Errorf("actions: %+v %v", actions, err)
	}

	other := s.AddDroplet(Droplet{}).ID
	_, _, err = c.DropletActions.Get(ctx(), other, a.ID)
	wantStatus(t, err, 404)
	_, _, err = c.Actions.Get(ctx(), 1)
	wantStatus(t, err, 404)
	_, _, err = c.DropletActions.PowerOff(ctx(), 42)
	wantStatus(t, err, 404)
}

// TestDropletDelete: DELETE /v2/droplets/{id} answers 204 and the droplet
// is gone; an action of it still in progress ends errored. DELETE
// /v2/droplets?tag_name= deletes every droplet with the tag
// (droplets_destroy.yml, droplets_destroy_byTag.yml).
func TestDropletDelete(t *testing.T) {
	s, c := setup(t, Options{})
	id := s.AddDroplet(Droplet{}).ID
	a, _, err := c.DropletActions.Reboot(ctx(), id)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Droplets.Delete(ctx(), id)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("delete: %v %v", resp, err)
	}
	_, _, err = c.Droplets.Get(ctx(), id)
	wantStatus(t, err, 404)
	_, err = c.Droplets.Delete(ctx(), id)
	wantStatus(t, err, 404)
	if got, _, err := c.Actions.Get(ctx(), a.ID); err != nil || got.Status != ActionErrored {
		t.Errorf("action of the deleted droplet: %+v %v", got, err)
	}

	keep := s.AddDroplet(Droplet{Tags: []string{"keep"}}).ID
	for range 3 {
		s.AddDroplet(Droplet{Tags: []string{"gone"}})
	}
	if _, err := c.Droplets.DeleteByTag(ctx(), "gone"); err != nil {
		t.Fatal(err)
	}
	var ids []int
	for _, d := range s.Droplets() {
		ids = append(ids, d.ID)
	}
	if !slices.Equal(ids, []int{keep}) {
		t.Errorf("droplets left: %v, want [%d]", ids, keep)
	}
}
