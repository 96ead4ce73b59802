package dosim

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/digitalocean/godo"
)

// TestSnapshots: volume snapshots (POST/GET /v2/volumes/{id}/snapshots)
// and droplet snapshots (the snapshot action) under /v2/snapshots, with
// godo's ListVolume, ListDroplet and ListVolumeSnapshotByRegion filters
// (openapi specification/resources/snapshots/snapshots_list.yml); a
// restore takes at least the snapshot's min_disk_size in its region.
func TestSnapshots(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	d := s.AddDroplet(Droplet{Name: "web"})
	v, _, _ := c.Storage.CreateVolume(ctx(), &godo.VolumeCreateRequest{Name: "v", Region: "nyc3", SizeGigaBytes: 10})
	w, _, _ := c.Storage.CreateVolume(ctx(), &godo.VolumeCreateRequest{Name: "w", Region: "sfo3", SizeGigaBytes: 5})

	snap, _, err := c.Storage.CreateSnapshot(ctx(), &godo.SnapshotCreateRequest{VolumeID: v.ID, Name: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Storage.CreateSnapshot(ctx(), &godo.SnapshotCreateRequest{VolumeID: w.ID, Name: "s2"}); err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Storage.CreateSnapshot(ctx(), &godo.SnapshotCreateRequest{VolumeID: w.ID, Name: "s1"})
	wantStatus(t, err, 409)
	_, _, err = c.Storage.CreateSnapshot(ctx(), &godo.SnapshotCreateRequest{VolumeID: v.ID})
	wantStatus(t, err, 400)
	_, _, err = c.Storage.CreateSnapshot(ctx(), &godo.SnapshotCreateRequest{VolumeID: "nope", Name: "s3"})
	wantStatus(t, err, 404)
	if _, _, err := c.DropletActions.Snapshot(ctx(), d.ID, "web-snap"); err != nil {
		t.Fatal(err)
	}

	names := func(list func() ([]godo.Snapshot, *godo.Response, error)) []string {
		t.Helper()
		snaps, _, err := list()
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, sn := range snaps {
			out = append(out, sn.Name)
		}
		return out
	}
	for what, tc := range map[string]struct {
		list func() ([]godo.Snapshot, *godo.Response, error)
		want string
	}{
		"of v":    {func() ([]godo.Snapshot, *godo.Response, error) { return c.Storage.ListSnapshots(ctx(), v.ID, nil) }, "[s1]"},
		"all":     {func() ([]godo.Snapshot, *godo.Response, error) { return c.Snapshots.List(ctx(), nil) }, "[s1 s2 web-snap]"},
		"volume":  {func() ([]godo.Snapshot, *godo.Response, error) { return c.Snapshots.ListVolume(ctx(), nil) }, "[s1 s2]"},
		"droplet": {func() ([]godo.Snapshot, *godo.Response, error) { return c.Snapshots.ListDroplet(ctx(), nil) }, "[web-snap]"},
		"sfo3 volume": {func() ([]godo.Snapshot, *godo.Response, error) {
			return c.Snapshots.ListVolumeSnapshotByRegion(ctx(), "sfo3", nil)
		}, "[s2]"},
	} {
		if got := names(tc.list); fmt.Sprint(got) != tc.want {
			t.Errorf("snapshots %s: %v, want %s", what, got, tc.want)
		}
	}
	_, _, err = c.Storage.ListSnapshots(ctx(), "nope", nil)
	wantStatus(t, err, 404)

	got, _, err := c.Snapshots.Get(ctx(), snap.ID)
	if err != nil || got.Name != "s1" || got.ResourceID != v.ID || got.MinDiskSize != 10 {
		t.Errorf("get: %+v %v", got, err)
	}
	drop, _, _ := c.Droplets.Get(ctx(), d.ID)
	ds, _, _ := c.Snapshots.ListDroplet(ctx(), nil)
	if len(drop.SnapshotIDs) != 1 || strconv.Itoa(drop.SnapshotIDs[0]) != ds[0].ID || ds[0].ResourceID != strconv.Itoa(d.ID) ||
		ds[0].ResourceType != "droplet" || ds[0].MinDiskSize != drop.Disk {
		t.Errorf("droplet snapshot %+v, droplet snapshot_ids %v", ds[0], drop.SnapshotIDs)
	}

	// Restores: min_disk_size and region.
	_, _, err = c.Storage.CreateVolume(ctx(), &godo.VolumeCreateRequest{Name: "r", SnapshotID: snap.ID, SizeGigaBytes: 5})
	wantStatus(t, err, 422)
	_, _, err = c.Storage.CreateVolume(ctx(), &godo.VolumeCreateRequest{Name: "r", SnapshotID: snap.ID, Region: "sfo3"})
	wantStatus(t, err, 422)
	_, _, err = c.Storage.CreateVolume(ctx(), &godo.VolumeCreateRequest{Name: "r", SnapshotID: ds[0].ID})
	wantStatus(t, err, 404)
	r, _, err := c.Storage.CreateVolume(ctx(), &godo.VolumeCreateRequest{Name: "r", SnapshotID: snap.ID, SizeGigaBytes: 20})
	if err != nil || r.SizeGigaBytes != 20 || r.Region.Slug != "nyc3" {
		t.Errorf("restore to 20 GiB: %+v %v", r, err)
	}

	// Snapshots outlive their volume; deleting one is 204, then 404.
	if _, err := c.Storage.DeleteVolume(ctx(), v.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Snapshots.Get(ctx(), snap.ID); err != nil {
		t.Errorf("snapshot gone with its volume: %v", err)
	}
	if _, err := c.Snapshots.Delete(ctx(), snap.ID); err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Snapshots.Get(ctx(), snap.ID)
	wantStatus(t, err, 404)
	_, err = c.Snapshots.Delete(ctx(), snap.ID)
	wantStatus(t, err, 404)
	if _, err := c.Snapshots.Delete(ctx(), ds[0].ID); err != nil {
		t.Fatal(err)
	}
	if drop, _, _ := c.Droplets.Get(ctx(), d.ID); len(drop.SnapshotIDs) != 0 {
		t.Errorf("droplet snapshot_ids after its snapshot was deleted: %v", drop.SnapshotIDs)
	}
}

// TestVolumeTags: csi-digitalocean tags volumes through
// POST /v2/tags/{name}/resources with resource_type "volume" (godo's
// VolumeResourceType); volume snapshots are "volume_snapshot".
func TestVolumeTags(t *testing.T) {
	_, c := setup(t, Options{})
	v, _, _ := c.Storage.CreateVolume(ctx(), &godo.VolumeCreateRequest{Name: "v", Region: "nyc3", SizeGigaBytes: 1})
	sn, _, _ := c.Storage.CreateSnapshot(ctx(), &godo.SnapshotCreateRequest{VolumeID: v.ID, Name: "s"})
	if _, _, err := c.Tags.Create(ctx(), &godo.TagCreateRequest{Name: "k8s"}); err != nil {
		t.Fatal(err)
	}
	_, err := c.Tags.TagResources(ctx(), "k8s", &godo.TagResourcesRequest{Resources: []godo.Resource{
		{ID: v.ID, Type: godo.VolumeResourceType}, {ID: sn.ID, Type: godo.VolumeSnapshotResourceType},
	}})
	if err != nil {
		t.Fatal(err)
	}
	got, _, _ := c.Storage.GetVolume(ctx(), v.ID)
	gs, _, _ := c.Snapshots.Get(ctx(), sn.ID)
	if fmt.Sprint(got.Tags) != "[k8s]" || fmt.Sprint(gs.Tags) != "[k8s]" {
		t.Errorf("tags: volume %v, snapshot %v", got.Tags, gs.Tags)
	}
	tag, _, _ := c.Tags.Get(ctx(), "k8s")
	if tag.Resources.Count != 2 {
		t.Errorf("tag resources: %+v", tag.Resources)
	}
	_, err = c.Tags.TagResources(ctx(), "k8s", &godo.TagResourcesRequest{Resources: []godo.Resource{{ID: "nope", Type: godo.VolumeResourceType}}})
	wantStatus(t, err, 422)
}
