package openstacksim

import (
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/snapshots"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/volumeattach"
)

// createSnapshot snapshots volume id, failing the test on error.
func createSnapshot(t *testing.T, c *gophercloud.ServiceClient, id string, force bool) *snapshots.Snapshot {
	t.Helper()
	sn, err := snapshots.Create(ctx(), c, snapshots.CreateOpts{VolumeID: id, Force: force, Name: "snap-of-" + id[:8]}).Extract()
	if err != nil {
		t.Fatalf("snapshot %s: %v", id, err)
	}
	return sn
}

// deleteSnapshot deletes a snapshot, failing the test on error.
func deleteSnapshot(t *testing.T, c *gophercloud.ServiceClient, id string) {
	t.Helper()
	if err := snapshots.Delete(ctx(), c, id).ExtractErr(); err != nil {
		t.Fatalf("delete snapshot %s: %v", id, err)
	}
}

// TestVolumeSnapshots: a snapshot is "creating" and available on the
// ProvisioningReads-th read (the Hypervisor copying the volume's
// blocks); its volume cannot be deleted meanwhile (400); a volume made
// from it is at least its size and gets its blocks; deleted, it is
// "deleting" and gone, the Hypervisor forgetting it; an in-use volume
// is snapshotted with force (before 3.66) or without it (from 3.66,
// where force=false is 400).
func TestVolumeSnapshots(t *testing.T) {
	hv := &recorder{}
	s, c := setup(t, Options{Hypervisor: hv, ProvisioningReads: 2})
	v, _ := s.AddVolume(Volume{Name: "src", Size: 2})
	hv.Want(t, "AddVolume", hvCall{Method: "Create", Disk: disk(v.ID, 2, "")})
	sn := createSnapshot(t, c.volume, v.ID, false)
	if sn.Status != SnapshotCreating || sn.Size != 2 || sn.VolumeID != v.ID || sn.Progress != "0%" || sn.ProjectID != s.opts.Users[0].ProjectID {
		t.Fatalf("created %+v", sn)
	}
	err := volumes.Delete(ctx(), c.volume, v.ID, nil).ExtractErr()
	wantFault(t, err, 400, "badRequest", "Invalid volume: Volume status must be available or error or error_restoring or error_extending or error_managing and must not be migrating, attached, belong to a group, have snapshots, awaiting a transfer, or be disassociated from snapshots after volume transfer.")
	if got := wantSnapshotStatus(t, c.volume, sn.ID, SnapshotAvailable); got.Progress != "100%" {
		t.Errorf("available snapshot %+v", got)
	}
	hv.Want(t, "snapshot", hvCall{Method: "Snapshot", Disk: disk(v.ID, 2, ""), Snapshot: sn.ID})

	_, err = volumes.Create(ctx(), c.volume, volumes.CreateOpts{Size: 1, SnapshotID: sn.ID}, nil).Extract()
	wantFault(t, err, 400, "badRequest", "Invalid input received: Volume size '1'GB cannot be smaller than the snapshot size 2GB. They must be >= original snapshot size.")
	restored := createVolume(t, c.volume, volumes.CreateOpts{SnapshotID: sn.ID, Name: "restored"})
	if restored.Size != 2 || restored.SnapshotID != sn.ID {
		t.Fatalf("restored %+v", restored)
	}
	wantVolumeStatus(t, c.volume, restored.ID, VolumeAvailable)
	hv.Want(t, "restore", hvCall{Method: "Create", Disk: disk(restored.ID, 2, ""), Snapshot: sn.ID})
	clone := createVolume(t, c.volume, volumes.CreateOpts{SourceVolID: v.ID, Size: 3})
	wantVolumeStatus(t, c.volume, clone.ID, VolumeAvailable)
	tmp := clone.ID + "-clone-source"
	hv.Want(t, "clone", hvCall{Method: "Snapshot", Disk: disk(v.ID, 2, ""), Snapshot: tmp}, hvCall{Method: "Create", Disk: disk(clone.ID, 3, ""), Snapshot: tmp},
		hvCall{Method: "DeleteSnapshot", Snapshot: tmp})

	all, err := snapshots.ListDetail(c.volume, snapshots.ListOpts{VolumeID: v.ID}).AllPages(ctx())
	if err != nil {
		t.Fatal(err)
	}
	if list, _ := snapshots.ExtractSnapshots(all); len(list) != 1 || list[0].ID != sn.ID {
		t.Errorf("snapshots of %s: %+v", v.ID, list)
	}
	deleteSnapshot(t, c.volume, sn.ID)
	if got, _ := snapshots.Get(ctx(), c.volume, sn.ID).Extract(); got == nil || got.Status != SnapshotDeleting {
		t.Fatalf("after delete: %+v", got)
	}
	_, err = snapshots.Get(ctx(), c.volume, sn.ID).Extract()
	wantFault(t, err, 404, "itemNotFound", "Snapshot "+sn.ID+" could not be found.")
	hv.Want(t, "delete snapshot", hvCall{Method: "DeleteSnapshot", Snapshot: sn.ID})

	// In use.
	srv := s.AddServer(NovaServer{Name: "node-1"}).ID
	if _, err := volumeattach.Create(ctx(), c.compute, srv, volumeattach.CreateOpts{VolumeID: v.ID}).Extract(); err != nil {
		t.Fatal(err)
	}
	s.Advance()
	hv.Want(t, "attach", hvCall{Method: "Attach", Disk: disk(v.ID, 2, srv)})
	_, err = snapshots.Create(ctx(), c.volume, snapshots.CreateOpts{VolumeID: v.ID}).Extract()
	wantFault(t, err, 400, "badRequest", "Invalid volume: Volume "+v.ID+" status must be available, but current status is: in-use.")
	forced := createSnapshot(t, c.volume, v.ID, true)
	_, err = snapshots.Create(ctx(), atVersion(c.volume, "3.66"), snapshots.CreateOpts{VolumeID: v.ID}).Extract()
	if err != nil {
		t.Errorf("snapshot of an in-use volume at 3.66: %v", err)
	}
	var body map[string]any
	_, err = atVersion(c.volume, "3.66").Post(ctx(), c.volume.ServiceURL("snapshots"),
		map[string]any{"snapshot": map[string]any{"volume_id": v.ID, "force": false}}, &body, nil)
	wantFault(t, err, 400, "badRequest", snapshotInUseMsg)
	s.Advance()
	hv.Want(t, "snapshots in use",
		hvCall{Method: "Snapshot", Disk: disk(v.ID, 2, srv), Snapshot: forced.ID}, hvCall{Method: "Snapshot", Disk: disk(v.ID, 2, srv), Snapshot: s.VolumeSnapshots()[1].ID})
	err = snapshots.Delete(ctx(), c.volume, "nope").ExtractErr()
	wantFault(t, err, 404, "itemNotFound", "Snapshot nope could not be found.")
}

// TestVolumeCascadeDelete: ?cascade=true deletes a volume with its
// available snapshots, the Hypervisor forgetting the snapshots' blocks
// and then the volume's; a snapshot still being made stops it (400).
func TestVolumeCascadeDelete(t *testing.T) {
	hv := &recorder{}
	s, c := setup(t, Options{Hypervisor: hv, ProvisioningReads: 2})
	v, _ := s.AddVolume(Volume{Size: 1})
	sn := createSnapshot(t, c.volume, v.ID, false)
	err := volumes.Delete(ctx(), c.volume, v.ID, volumes.DeleteOpts{Cascade: true}).ExtractErr()
	wantFault(t, err, 400, "badRequest", "")
	wantSnapshotStatus(t, c.volume, sn.ID, SnapshotAvailable)
	hv.Want(t, "setup", hvCall{Method: "Create", Disk: disk(v.ID, 1, "")}, hvCall{Method: "Snapshot", Disk: disk(v.ID, 1, ""), Snapshot: sn.ID})
	if err := volumes.Delete(ctx(), c.volume, v.ID, volumes.DeleteOpts{Cascade: true}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if got, _ := snapshots.Get(ctx(), c.volume, sn.ID).Extract(); got == nil || got.Status != SnapshotDeleting {
		t.Errorf("snapshot during the cascade delete: %+v", got)
	}
	s.Advance()
	hv.Want(t, "cascade delete", hvCall{Method: "DeleteSnapshot", Snapshot: sn.ID}, hvCall{Method: "Delete", Disk: disk(v.ID, 1, "")})
	if st := s.State(); len(st.Volumes) != 0 || len(st.VolumeSnapshots) != 0 {
		t.Errorf("left after the cascade delete: %+v %+v", st.Volumes, st.VolumeSnapshots)
	}
}
