package dosim

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/digitalocean/godo"
)

// waitVolumeAction polls a volume action (GET /v2/volumes/{id}/actions/
// {action}, as csi-digitalocean's waitAction does) until it is no longer
// in progress; each read counts towards ProvisioningReads, so no sleep.
func waitVolumeAction(t *testing.T, c *godo.Client, volumeID string, a *godo.Action) *godo.Action {
	t.Helper()
	for range 10 {
		got, _, err := c.StorageActions.Get(ctx(), volumeID, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != ActionInProgress {
			return got
		}
	}
	t.Fatalf("action %d still in progress after 10 reads", a.ID)
	return nil
}

// TestVolumeLifecycle drives a volume's whole life with the real godo
// client over HTTP, as csi-digitalocean does: create, attach and wait,
// snapshot, resize, detach, restore from the snapshot, delete (openapi
// specification/resources/volumes/*.yml, snapshots/*.yml). Attach, detach
// and resize answer 202 "in-progress" and change the volume only when
// they complete; the Hypervisor hears of each step, with the by-id name a
// DigitalOcean droplet gives the device.
func TestVolumeLifecycle(t *testing.T) {
	hv := &recorder{}
	s, c := setup(t, Options{ProvisioningReads: 2, Hypervisor: hv})
	d := s.AddDroplet(Droplet{Name: "node-1"})
	server := strconv.Itoa(d.ID)

	v, resp, err := c.Storage.CreateVolume(ctx(), &godo.VolumeCreateRequest{
		Name: "pvc-1", Region: "nyc3", SizeGigaBytes: 10, Description: "data",
		FilesystemType: "ext4", FilesystemLabel: "data", Tags: []string{"k8s"},
	})
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %v %v", resp, err)
	}
	if v.ID == "" || v.Name != "pvc-1" || v.Region.Slug != "nyc3" || v.SizeGigaBytes != 10 || v.DropletIDs == nil ||
		len(v.DropletIDs) != 0 || v.FilesystemType != "ext4" || v.FilesystemLabel != "data" || v.Tags[0] != "k8s" ||
		v.CreatedAt.IsZero() || v.Description != "data" {
		t.Fatalf("created %+v", v)
	}
	hv.Want(t, "create", hvCall{Method: "Create", Disk: disk(v.ID, "pvc-1", 10, "")})

	// Attach: in progress, then completed on the second read; only then
	// does droplet_ids (and the droplet's volume_ids) show it.
	a, resp, err := c.StorageActions.Attach(ctx(), v.ID, d.ID)
	if err != nil || resp.StatusCode != http.StatusAccepted || a.Status != ActionInProgress || a.Type != "attach_volume" ||
		a.ResourceType != "volume" || a.ResourceID != 0 || a.RegionSlug != "nyc3" || a.CompletedAt != nil {
		t.Fatalf("attach: %+v %v %v", a, resp, err)
	}
	if got, _, _ := c.Storage.GetVolume(ctx(), v.ID); len(got.DropletIDs) != 0 {
		t.Errorf("droplet_ids while attaching: %v", got.DropletIDs)
	}
	hv.Want(t, "attach started")
	if done := waitVolumeAction(t, c, v.ID, a); done.Status != ActionCompleted || done.CompletedAt == nil {
		t.Fatalf("attach ended %+v", done)
	}
	got, _, _ := c.Storage.GetVolume(ctx(), v.ID)
	drop, _, _ := c.Droplets.Get(ctx(), d.ID)
	if len(got.DropletIDs) != 1 || got.DropletIDs[0] != d.ID || len(drop.VolumeIDs) != 1 || drop.VolumeIDs[0] != v.ID {
		t.Fatalf("after attach: volume droplet_ids %v, droplet volume_ids %v", got.DropletIDs, drop.VolumeIDs)
	}
	hv.Want(t, "attach completed", hvCall{Method: "Attach", Disk: disk(v.ID, "pvc-1", 10, server)})
	// doctl --wait polls GET /v2/actions/{id}: the action is there too.
	if ga, _, err := c.Actions.Get(ctx(), a.ID); err != nil || ga.Status != ActionCompleted || ga.Type != "attach_volume" {
		t.Errorf("GET /v2/actions/%d: %+v %v", a.ID, ga, err)
	}

	// A snapshot of the attached volume, at once.
	snap, resp, err := c.Storage.CreateSnapshot(ctx(), &godo.SnapshotCreateRequest{VolumeID: v.ID, Name: "snap-1", Tags: []string{"k8s"}})
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("snapshot: %v %v", resp, err)
	}
	if snap.ResourceType != "volume" || snap.ResourceID != v.ID || snap.MinDiskSize != 10 || snap.SizeGigaBytes != 10 ||
		len(snap.Regions) != 1 || snap.Regions[0] != "nyc3" || snap.Created == "" || snap.Tags[0] != "k8s" {
		t.Fatalf("snapshot %+v", snap)
	}
	hv.Want(t, "snapshot", hvCall{Method: "Snapshot", Disk: disk(v.ID, "pvc-1", 10, server), Snapshot: snap.ID})

	// Resize, attached: the size changes when it completes.
	a, _, err = c.StorageActions.Resize(ctx(), v.ID, 20, "nyc3")
	if err != nil || a.Type != "resize_volume" || a.Status != ActionInProgress {
		t.Fatalf("resize: %+v %v", a, err)
	}
	if got, _, _ := c.Storage.GetVolume(ctx(), v.ID); got.SizeGigaBytes != 10 {
		t.Errorf("size while resizing: %d", got.SizeGigaBytes)
	}
	waitVolumeAction(t, c, v.ID, a)
	if got, _, _ := c.Storage.GetVolume(ctx(), v.ID); got.SizeGigaBytes != 20 {
		t.Errorf("size after resize: %d", got.SizeGigaBytes)
	}
	hv.Want(t, "resize", hvCall{Method: "Resize", Disk: disk(v.ID, "pvc-1", 20, server)})

	// Detach.
	a, _, err = c.StorageActions.DetachByDropletID(ctx(), v.ID, d.ID)
	if err != nil || a.Type != "detach_volume" {
		t.Fatalf("detach: %+v %v", a, err)
	}
	waitVolumeAction(t, c, v.ID, a)
	got, _, _ = c.Storage.GetVolume(ctx(), v.ID)
	drop, _, _ = c.Droplets.Get(ctx(), d.ID)
	if len(got.DropletIDs) != 0 || len(drop.VolumeIDs) != 0 {
		t.Fatalf("after detach: %v %v", got.DropletIDs, drop.VolumeIDs)
	}
	hv.Want(t, "detach", hvCall{Method: "Detach", Disk: disk(v.ID, "pvc-1", 20, server)})
	acts, _, err := c.StorageActions.List(ctx(), v.ID, nil)
	if err != nil || len(acts) != 3 || acts[0].Type != "detach_volume" || acts[2].Type != "attach_volume" {
		t.Errorf("volume actions: %+v %v", acts, err)
	}

	// Restore: region and size come from the snapshot.
	r, _, err := c.Storage.CreateVolume(ctx(), &godo.VolumeCreateRequest{Name: "pvc-2", SnapshotID: snap.ID})
	if err != nil || r.Region.Slug != "nyc3" || r.SizeGigaBytes != 10 {
		t.Fatalf("restore: %+v %v", r, err)
	}
	hv.Want(t, "restore", hvCall{Method: "Create", Disk: disk(r.ID, "pvc-2", 10, ""), Snapshot: snap.ID})

	// Delete both volumes (one by name) and the snapshot.
	if _, err := c.Storage.DeleteVolume(ctx(), v.ID); err != nil {
		t.Fatal(err)
	}
	req, _ := c.NewRequest(ctx(), http.MethodDelete, "v2/volumes?name=pvc-2&region=nyc3", nil)
	if resp, err := c.Do(ctx(), req, nil); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("delete by name: %v %v", resp, err)
	}
	if _, err := c.Storage.DeleteSnapshot(ctx(), snap.ID); err != nil {
		t.Fatal(err)
	}
	hv.Want(t, "delete",
		hvCall{Method: "Delete", Disk: disk(v.ID, "pvc-1", 20, "")},
		hvCall{Method: "Delete", Disk: disk(r.ID, "pvc-2", 10, "")},
		hvCall{Method: "DeleteSnapshot", Snapshot: snap.ID})
	if _, _, err := c.Storage.GetVolume(ctx(), v.ID); err == nil {
		t.Error("deleted volume still there")
	}
	st := s.State()
	if len(st.Volumes) != 0 || len(st.Snapshots) != 0 || len(st.VolumeActions) != 3 {
		t.Errorf("state after delete: %d volumes, %d snapshots, %d volume actions", len(st.Volumes), len(st.Snapshots), len(st.VolumeActions))
	}
}

// TestVolumeCreateErrors: the create rules of openapi
// volumes/models/volume_base.yml (name), volumes_ext4.yml/volumes_xfs.yml
// (filesystem_label lengths), volumeActions_post_byId.yml (16 TiB); one
// name per region ("You can only create one volume per region with the
// same name", volumes_list.yml) answered 409 "already exists" as the API
// did (hashicorp/terraform issue 8023).
func TestVolumeCreateErrors(t *testing.T) {
	_, c := setup(t, Options{})
	ok := func(mod func(*godo.VolumeCreateRequest)) *godo.VolumeCreateRequest {
		r := &godo.VolumeCreateRequest{Name: "vol-a", Region: "nyc3", SizeGigaBytes: 1}
		mod(r)
		return r
	}
	if _, _, err := c.Storage.CreateVolume(ctx(), ok(func(*godo.VolumeCreateRequest) {})); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		req    *godo.VolumeCreateRequest
		status int
	}{
		"uppercase name":        {ok(func(r *godo.VolumeCreateRequest) { r.Name = "Vol" }), 422},
		"name with digit first": {ok(func(r *godo.VolumeCreateRequest) { r.Name = "1vol" }), 422},
		"name of 65":            {ok(func(r *godo.VolumeCreateRequest) { r.Name = "v" + string(make([]byte, 64)) }), 422},
		"no region":             {ok(func(r *godo.VolumeCreateRequest) { r.Region = "" }), 422},
		"unknown region":        {ok(func(r *godo.VolumeCreateRequest) { r.Region = "mars1" }), 422},
		"no size":               {ok(func(r *godo.VolumeCreateRequest) { r.SizeGigaBytes = 0 }), 422},
		"over 16 TiB":           {ok(func(r *godo.VolumeCreateRequest) { r.SizeGigaBytes = 16385 }), 422},
		"btrfs":                 {ok(func(r *godo.VolumeCreateRequest) { r.FilesystemType = "btrfs" }), 422},
		"xfs label of 13": {ok(func(r *godo.VolumeCreateRequest) {
			r.FilesystemType, r.FilesystemLabel = "xfs", "abcdefghijklm"
		}), 422},
		"ext4 label of 17": {ok(func(r *godo.VolumeCreateRequest) {
			r.FilesystemType, r.FilesystemLabel = "ext4", "abcdefghijklmnopq"
		}), 422},
		"label alone":      {ok(func(r *godo.VolumeCreateRequest) { r.FilesystemLabel = "x" }), 422},
		"bad tag":          {ok(func(r *godo.VolumeCreateRequest) { r.Name, r.Tags = "vol-b", []string{"a tag"} }), 422},
		"unknown snapshot": {ok(func(r *godo.VolumeCreateRequest) { r.Name, r.SnapshotID = "vol-b", "nope" }), 404},
		"same name":        {ok(func(*godo.VolumeCreateRequest) {}), 409},
	} {
		_, _, err := c.Storage.CreateVolume(ctx(), tc.req)
		er := errorResponse(t, err, tc.status)
		if tc.status == 409 && er.Message != msgVolumeExists {
			t.Errorf("%s: %q", name, er.Message)
		}
		if er.Message == "" {
			t.Errorf("%s: no message", name)
		}
	}
	// The same name in another region is another volume; xfs takes a
	// label of 12, ext4 of 16.
	for _, r := range []*godo.VolumeCreateRequest{
		ok(func(r *godo.VolumeCreateRequest) { r.Region = "sfo3" }),
		ok(func(r *godo.VolumeCreateRequest) {
			r.Name, r.FilesystemType, r.FilesystemLabel = "vol-x", "xfs", "abcdefghijkl"
		}),
		ok(func(r *godo.VolumeCreateRequest) {
			r.Name, r.FilesystemType, r.FilesystemLabel = "vol-e", "ext4", "abcdefghijklmnop"
		}),
		ok(func(r *godo.VolumeCreateRequest) { r.Name, r.SizeGigaBytes = "vol-max", MaxVolumeSize }),
	} {
		if _, _, err := c.Storage.CreateVolume(ctx(), r); err != nil {
			t.Errorf("%+v: %v", r, err)
		}
	}
}

// TestVolumeListAndDelete: name= and region= narrow the list each, and
// together to one volume (openapi volumes/volumes_list.yml), paginated
// with links; DELETE refuses an attached volume with 409 and the API's
// message (hashicorp/terraform issue 17964) and one with an action in
// progress with 422; by name it needs both name and region.
func TestVolumeListAndDelete(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 2})
	d := s.AddDroplet(Droplet{}).ID
	for _, r := range []struct {
		name, region string
	}{{"a", "nyc3"}, {"b", "nyc3"}, {"a", "sfo3"}} {
		if _, _, err := c.Storage.CreateVolume(ctx(), &godo.VolumeCreateRequest{Name: r.name, Region: r.region, SizeGigaBytes: 1}); err != nil {
			t.Fatal(err)
		}
	}
	count := func(p *godo.ListVolumeParams) int {
		t.Helper()
		vs, _, err := c.Storage.ListVolumes(ctx(), p)
		if err != nil {
			t.Fatal(err)
		}
		return len(vs)
	}
	if n := count(nil); n != 3 {
		t.Errorf("all: %d", n)
	}
	if n := count(&godo.ListVolumeParams{Name: "a"}); n != 2 {
		t.Errorf("name=a: %d", n)
	}
	if n := count(&godo.ListVolumeParams{Region: "nyc3"}); n != 2 {
		t.Errorf("region=nyc3: %d", n)
	}
	vs, _, _ := c.Storage.ListVolumes(ctx(), &godo.ListVolumeParams{Name: "a", Region: "sfo3"})
	if len(vs) != 1 || vs[0].Region.Slug != "sfo3" {
		t.Errorf("name=a&region=sfo3: %+v", vs)
	}
	vs, resp, err := c.Storage.ListVolumes(ctx(), &godo.ListVolumeParams{ListOptions: &godo.ListOptions{Page: 2, PerPage: 2}})
	if page, _ := resp.Links.CurrentPage(); err != nil || len(vs) != 1 || page != 2 || !resp.Links.IsLastPage() || resp.Meta.Total != 3 {
		t.Errorf("page 2: %d volumes, links %+v, meta %+v, %v", len(vs), resp.Links, resp.Meta, err)
	}

	nyc, _, _ := c.Storage.ListVolumes(ctx(), &godo.ListVolumeParams{Region: "nyc3"})
	a, b := nyc[0].ID, nyc[1].ID
	act, _, _ := c.StorageActions.Attach(ctx(), a, d)
	_, err = c.Storage.DeleteVolume(ctx(), a)
	if er := errorResponse(t, err, 422); er.Message != msgPendingEvent {
		t.Errorf("delete while attaching: %q", er.Message)
	}
	waitVolumeAction(t, c, a, act)
	_, err = c.Storage.DeleteVolume(ctx(), a)
	if er := errorResponse(t, err, 409); er.Message != msgDeleteAttached {
		t.Errorf("delete attached: %q", er.Message)
	}
	_, err = c.Storage.DeleteVolume(ctx(), "nope")
	wantStatus(t, err, 404)
	_, _, err = c.Storage.GetVolume(ctx(), "nope")
	wantStatus(t, err, 404)

	del := func(query string) error {
		req, _ := c.NewRequest(ctx(), http.MethodDelete, "v2/volumes"+query, nil)
		_, err := c.Do(ctx(), req, nil)
		return err
	}
	wantStatus(t, del("?name=b"), 422)
	wantStatus(t, del("?name=b&region=sfo3"), 404)
	if err := del("?name=b&region=nyc3"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Storage.GetVolume(ctx(), b); err == nil {
		t.Error("b not deleted by name")
	}
	if n := count(nil); n != 2 {
		t.Errorf("after deletes: %d", n)
	}
}

// TestDropletDeleteDetachesVolumes: deleting a droplet leaves its volumes,
// detached, and ends an attach to it errored.
func TestDropletDeleteDetachesVolumes(t *testing.T) {
	hv := &recorder{}
	s, c := setup(t, Options{ProvisioningReads: -1, Hypervisor: hv})
	d := s.AddDroplet(Droplet{}).ID
	v, _, _ := c.Storage.CreateVolume(ctx(), &godo.VolumeCreateRequest{Name: "v", Region: "nyc3", SizeGigaBytes: 1})
	if _, _, err := c.StorageActions.Attach(ctx(), v.ID, d); err != nil {
		t.Fatal(err)
	}
	hv.Take()
	if _, err := c.Droplets.Delete(ctx(), d); err != nil {
		t.Fatal(err)
	}
	got, _, err := c.Storage.GetVolume(ctx(), v.ID)
	if err != nil || len(got.DropletIDs) != 0 {
		t.Errorf("volume after its droplet was deleted: %+v %v", got, err)
	}
	hv.Want(t, "droplet deleted", hvCall{Method: "Detach", Disk: disk(v.ID, "v", 1, strconv.Itoa(d))})

	s2, c2 := setup(t, Options{ProvisioningReads: 5})
	d2 := s2.AddDroplet(Droplet{}).ID
	v2, _, _ := c2.Storage.CreateVolume(ctx(), &godo.VolumeCreateRequest{Name: "v", Region: "nyc3", SizeGigaBytes: 1})
	a, _, _ := c2.StorageActions.Attach(ctx(), v2.ID, d2)
	s2.DeleteDroplet(d2)
	if got, _, _ := c2.StorageActions.Get(ctx(), v2.ID, a.ID); got.Status != ActionErrored {
		t.Errorf("attach to a deleted droplet: %q", got.Status)
	}
	if got, _, _ := c2.Storage.GetVolume(ctx(), v2.ID); len(got.DropletIDs) != 0 {
		t.Errorf("attached to a deleted droplet: %v", got.DropletIDs)
	}
}
