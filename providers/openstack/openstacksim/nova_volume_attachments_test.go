package openstacksim

import (
	"net/http"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/volumeattach"
)

// TestVolumeAttach: Nova attaches a volume at once on its side (200 with
// /dev/vdb; the attachment listed) while Cinder shows it "reserved"
// without attachments; the ProvisioningReads-th read settles it: the
// Hypervisor attaches it to the server under virtio-<id[:20]>, the
// volume is in-use with Cinder's attachment, the server lists it in
// volumes_attached. A detach is 202, "detaching" (the attachment still
// shown), then available, the Hypervisor detaching it.
func TestVolumeAttach(t *testing.T) {
	hv := &recorder{}
	s, c := setup(t, Options{Hypervisor: hv, ProvisioningReads: 2})
	srv := s.AddServer(NovaServer{Name: "node-1"}).ID
	vol, err := s.AddVolume(Volume{Name: "data", Size: 5})
	if err != nil || vol.Status != VolumeAvailable {
		t.Fatalf("AddVolume: %+v %v", vol, err)
	}
	hv.Want(t, "AddVolume", hvCall{Method: "Create", Disk: disk(vol.ID, 5, "")})

	att, err := volumeattach.Create(ctx(), c.compute, srv, volumeattach.CreateOpts{VolumeID: vol.ID}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if att.ID != vol.ID || att.VolumeID != vol.ID || att.ServerID != srv || att.Device != "/dev/vdb" {
		t.Fatalf("attachment %+v", att)
	}
	if v := getVolume(t, c.volume, vol.ID); v.Status != VolumeReserved || len(v.Attachments) != 0 {
		t.Fatalf("first read after attach: %s %+v", v.Status, v.Attachments)
	}
	hv.Want(t, "before the attach settles")
	v := getVolume(t, c.volume, vol.ID)
	if v.Status != VolumeInUse || len(v.Attachments) != 1 {
		t.Fatalf("second read: %+v", v)
	}
	if a := v.Attachments[0]; a.ServerID != srv || a.Device != "/dev/vdb" || a.VolumeID != vol.ID || a.ID != vol.ID ||
		a.AttachmentID == "" || a.HostName != "" || a.AttachedAt.IsZero() {
		t.Errorf("cinder attachment %+v", a)
	}
	hv.Want(t, "attach", hvCall{Method: "Attach", Disk: disk(vol.ID, 5, srv)})
	if st := s.State(); st.Volumes[0].Attachments[0].Status != AttachAttached {
		t.Errorf("state: %+v", st.Volumes[0].Attachments)
	}
	var show struct { // ExtractInto unwraps "server"
		Volumes []map[string]any `json:"os-extended-volumes:volumes_attached"`
	}
	if err := servers.Get(ctx(), atVersion(c.compute, "2.3"), srv).ExtractInto(&show); err != nil || len(show.Volumes) != 1 ||
		show.Volumes[0]["id"] != vol.ID || show.Volumes[0]["delete_on_termination"] != false {
		t.Errorf("volumes_attached %+v %v", show.Volumes, err)
	}

	// A second volume takes the next letter.
	vol2, _ := s.AddVolume(Volume{Size: 1})
	hv.Want(t, "second AddVolume", hvCall{Method: "Create", Disk: disk(vol2.ID, 1, "")})
	att2, err := volumeattach.Create(ctx(), c.compute, srv, volumeattach.CreateOpts{VolumeID: vol2.ID, Device: "/dev/vdq"}).Extract()
	if err != nil || att2.Device != "/dev/vdc" {
		t.Fatalf("second attach (libvirt ignores the device asked for): %+v %v", att2, err)
	}
	s.Advance()
	hv.Want(t, "second attach", hvCall{Method: "Attach", Disk: disk(vol2.ID, 1, srv)})
	all, err := volumeattach.List(c.compute, srv).AllPages(ctx())
	if err != nil {
		t.Fatal(err)
	}
	list, _ := volumeattach.ExtractVolumeAttachments(all)
	if len(list) != 2 || list[0].VolumeID != vol.ID || list[1].Device != "/dev/vdc" {
		t.Errorf("attachments %+v", list)
	}

	if err := volumeattach.Delete(ctx(), c.compute, srv, vol.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if v := getVolume(t, c.volume, vol.ID); v.Status != VolumeDetaching || len(v.Attachments) != 1 {
		t.Fatalf("first read after detach: %+v", v)
	}
	if v := getVolume(t, c.volume, vol.ID); v.Status != VolumeAvailable || len(v.Attachments) != 0 {
		t.Fatalf("second read after detach: %+v", v)
	}
	hv.Want(t, "detach", hvCall{Method: "Detach", Disk: disk(vol.ID, 5, srv)})
	_, err = volumeattach.Get(ctx(), c.compute, srv, vol.ID).Extract()
	wantFault(t, err, 404, "itemNotFound", "Instance "+srv+" is not attached to volume "+vol.ID)
	for _, op := range []string{
		"POST /compute/v2.1/servers/{id}/os-volume_attachments", "GET /compute/v2.1/servers/{id}/os-volume_attachments",
		"GET /compute/v2.1/servers/{id}/os-volume_attachments/{volume}", "DELETE /compute/v2.1/servers/{id}/os-volume_attachments/{volume}",
	} {
		if s.Stats()[op] == 0 {
			t.Errorf("stats have no %q", op)
		}
	}
}

// TestVolumeAttachmentMicroversions: Nova's attachment view: id until
// 2.88, tag from 2.70, delete_on_termination from 2.79 (which the
// request may set from then, tag from 2.49), attachment_id and bdm_uuid
// from 2.89; the create answer never has the 2.89 fields.
func TestVolumeAttachmentMicroversions(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	srv := s.AddServer(NovaServer{Name: "node-1"}).ID
	vol, _ := s.AddVolume(Volume{Size: 1})
	_, err := volumeattach.Create(ctx(), atVersion(c.compute, "2.48"), srv, volumeattach.CreateOpts{VolumeID: vol.ID, Tag: "db"}).Extract()
	wantFault(t, err, 400, "badRequest", "")
	_, err = volumeattach.Create(ctx(), atVersion(c.compute, "2.78"), srv, volumeattach.CreateOpts{VolumeID: vol.ID, DeleteOnTermination: true}).Extract()
	wantFault(t, err, 400, "badRequest", "")
	var created map[string]map[string]any
	_, err = c.compute.Post(ctx(), c.compute.ServiceURL("servers", srv, "os-volume_attachments"),
		map[string]any{"volumeAttachment": map[string]any{"volumeId": vol.ID, "tag": "db", "delete_on_termination": true}},
		&created, &gophercloud.RequestOpts{OkCodes: []int{200}, MoreHeaders: map[string]string{"X-OpenStack-Nova-API-Version": "2.89"}})
	if err != nil {
		t.Fatal(err)
	}
	if a := created["volumeAttachment"]; a["id"] != vol.ID || a["tag"] != "db" || a["delete_on_termination"] != true || a["attachment_id"] != nil {
		t.Errorf("create at 2.89: %v", a)
	}
	show := func(v string) map[string]any {
		var body map[string]map[string]any
		if _, err := atVersion(c.compute, v).Get(ctx(), c.compute.ServiceURL("servers", srv, "os-volume_attachments", vol.ID), &body, nil); err != nil {
			t.Fatal(err)
		}
		return body["volumeAttachment"]
	}
	for _, tc := range []struct {
		v        string
		has, not []string
	}{
		{"2.1", []string{"id", "device", "serverId", "volumeId"}, []string{"tag", "delete_on_termination", "attachment_id"}},
		{"2.70", []string{"id", "tag"}, []string{"delete_on_termination"}},
		{"2.79", []string{"id", "tag", "delete_on_termination"}, []string{"attachment_id", "bdm_uuid"}},
		{"2.89", []string{"attachment_id", "bdm_uuid", "tag", "delete_on_termination"}, []string{"id"}},
	} {
		a := show(tc.v)
		for _, k := range tc.has {
			if _, ok := a[k]; !ok {
				t.Errorf("%s: no %s in %v", tc.v, k, a)
			}
		}
		for _, k := range tc.not {
			if _, ok := a[k]; ok {
				t.Errorf("%s: %s in %v", tc.v, k, a)
			}
		}
	}
	st := s.State().Volumes[0].Attachments[0]
	if a := show("2.89"); a["attachment_id"] != st.ID || a["bdm_uuid"] != st.BDMUUID || st.Tag != "db" || !st.DeleteOnTermination {
		t.Errorf("2.89 view %v of %+v", a, st)
	}

	// PUT: a swap (an admin's) before 2.85, delete_on_termination from it.
	put := func(v string, dot bool) error {
		_, err := atVersion(c.compute, v).Put(ctx(), c.compute.ServiceURL("servers", srv, "os-volume_attachments", vol.ID),
			map[string]any{"volumeAttachment": map[string]any{"volumeId": vol.ID, "delete_on_termination": dot}}, nil,
			&gophercloud.RequestOpts{OkCodes: []int{202}})
		return err
	}
	wantFault(t, put("2.84", false), 403, "forbidden", "Policy doesn't allow os_compute_api:os-volumes-attachments:swap to be performed.")
	for _, dot := range []bool{false, true} {
		if err := put("2.85", dot); err != nil || s.State().Volumes[0].Attachments[0].DeleteOnTermination != dot {
			t.Fatalf("PUT delete_on_termination %v: %v", dot, err)
		}
	}

	// Deleting the server detaches the volume and, delete_on_termination
	// being set, deletes it.
	if err := servers.Delete(ctx(), c.compute, srv).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if n := len(s.Volumes()); n != 0 {
		t.Errorf("%d volumes after deleting a server with a delete_on_termination volume", n)
	}
}

// TestVolumeAttachRefused: Nova's answers to attaches and detaches it
// refuses, with its messages.
func TestVolumeAttachRefused(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 3, MaxDiskDevices: 3})
	srv := s.AddServer(NovaServer{Name: "node-1"}).ID
	other := s.AddServer(NovaServer{Name: "node-2"}).ID
	attach := func(server, vol string) error {
		_, err := volumeattach.Create(ctx(), c.compute, server, volumeattach.CreateOpts{VolumeID: vol}).Extract()
		return err
	}
	missing := "00000000-0000-4000-8000-00000000dead"
	wantFault(t, attach(srv, missing), 404, "itemNotFound", "Volume "+missing+" could not be found.")
	wantFault(t, attach(missing, missing), 404, "itemNotFound", "Instance "+missing+" could not be found.")
	wantFault(t, attach(srv, "not-a-uuid"), 400, "badRequest", "")

	creating := createVolume(t, c.volume, volumes.CreateOpts{Size: 1})
	wantFault(t, attach(srv, creating.ID), 400, "badRequest", "")
	a, _ := s.AddVolume(Volume{Size: 1})
	if err := attach(srv, a.ID); err != nil {
		t.Fatal(err)
	}
	wantFault(t, attach(srv, a.ID), 400, "badRequest", "Invalid volume: volume "+a.ID+" already attached")
	wantFault(t, attach(other, a.ID), 400, "badRequest", "Invalid volume: volume "+a.ID+" is already attached to instances: "+srv)
	// Detaching an attachment still being made: Cinder's begin_detaching
	// wants it in-use.
	err := volumeattach.Delete(ctx(), c.compute, srv, a.ID).ExtractErr()
	wantFault(t, err, 400, "badRequest", "")
	s.Advance()

	// The third disk (vda, vdb, vdc) is the last with MaxDiskDevices 3.
	b, _ := s.AddVolume(Volume{Size: 1})
	d, _ := s.AddVolume(Volume{Size: 1})
	if err := attach(srv, b.ID); err != nil {
		t.Fatal(err)
	}
	wantFault(t, attach(srv, d.ID), 403, "forbidden", "The maximum allowed number of disk devices (3) to attach to a single instance has been exceeded.")

	// A server powering off, or in error, takes no attach.
	s.SetServerStatus(other, StatusError)
	wantFault(t, attach(other, d.ID), 409, "conflictingRequest", "Cannot 'attach_volume' instance "+other+" while it is in vm_state error")
	s.SetServerStatus(other, StatusActive)
	if err := servers.Stop(ctx(), c.compute, other).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	wantFault(t, attach(other, d.ID), 409, "conflictingRequest", "Cannot 'attach_volume' instance "+other+" while it is in task_state powering-off")

	err = volumeattach.Delete(ctx(), c.compute, other, a.ID).ExtractErr()
	wantFault(t, err, 404, "itemNotFound", "Instance "+other+" is not attached to volume "+a.ID)

	// A multiattach volume attaches to two servers, from 2.60.
	m, _ := s.AddVolume(Volume{Size: 1, VolumeType: "multiattach"})
	third := s.AddServer(NovaServer{Name: "node-3"}).ID
	fourth := s.AddServer(NovaServer{Name: "node-4"}).ID
	wantFault(t, attach(third, m.ID), 400, "badRequest", "Multiattach volumes are only supported starting with compute API version 2.60.")
	c60 := atVersion(c.compute, "2.60")
	for _, server := range []string{third, fourth} {
		if _, err := volumeattach.Create(ctx(), c60, server, volumeattach.CreateOpts{VolumeID: m.ID}).Extract(); err != nil {
			t.Fatalf("multiattach to %s: %v", server, err)
		}
		s.Advance()
	}
	if v := getVolume(t, c.volume, m.ID); v.Status != VolumeInUse || len(v.Attachments) != 2 {
		t.Errorf("multiattach volume %+v", v)
	}
	// A volume in use is not deleted.
	err = volumes.Delete(ctx(), c.volume, m.ID, nil).ExtractErr()
	wantFault(t, err, 400, "badRequest", "")
}

// TestVolumeExtend: os-extend grows an available volume ("extending",
// then available at the new size, the Hypervisor resizing it); an in-use
// one only from 3.42 (the Hypervisor resizing it on its server); a size
// that does not grow is 400.
func TestVolumeExtend(t *testing.T) {
	hv := &recorder{}
	s, c := setup(t, Options{Hypervisor: hv, ProvisioningReads: 2})
	srv := s.AddServer(NovaServer{Name: "node-1"}).ID
	v, _ := s.AddVolume(Volume{Size: 1})
	hv.Want(t, "AddVolume", hvCall{Method: "Create", Disk: disk(v.ID, 1, "")})
	if err := volumes.ExtendSize(ctx(), c.volume, v.ID, volumes.ExtendSizeOpts{NewSize: 3}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if got := getVolume(t, c.volume, v.ID); got.Status != VolumeExtending || got.Size != 1 {
		t.Fatalf("first read: %+v", got)
	}
	if got := getVolume(t, c.volume, v.ID); got.Status != VolumeAvailable || got.Size != 3 {
		t.Fatalf("second read: %+v", got)
	}
	hv.Want(t, "extend", hvCall{Method: "Resize", Disk: disk(v.ID, 3, "")})
	err := volumes.ExtendSize(ctx(), c.volume, v.ID, volumes.ExtendSizeOpts{NewSize: 3}).ExtractErr()
	wantFault(t, err, 400, "badRequest", "Invalid input received: New size for extend must be greater than current size. (current: 3, extended: 3).")

	if _, err := volumeattach.Create(ctx(), c.compute, srv, volumeattach.CreateOpts{VolumeID: v.ID}).Extract(); err != nil {
		t.Fatal(err)
	}
	s.Advance()
	hv.Want(t, "attach", hvCall{Method: "Attach", Disk: disk(v.ID, 3, srv)})
	err = volumes.ExtendSize(ctx(), c.volume, v.ID, volumes.ExtendSizeOpts{NewSize: 4}).ExtractErr()
	wantFault(t, err, 400, "badRequest", "Invalid volume: Volume "+v.ID+" status must be '{'status': 'available'}' to extend, currently in-use.")
	if err := volumes.ExtendSize(ctx(), atVersion(c.volume, "3.42"), v.ID, volumes.ExtendSizeOpts{NewSize: 4}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	wantVolumeStatus(t, c.volume, v.ID, VolumeInUse)
	hv.Want(t, "extend in use", hvCall{Method: "Resize", Disk: disk(v.ID, 4, srv)})
}

// TestVolumeHypervisorFailures: a Hypervisor that fails leaves what the
// real cloud leaves after a failed driver call: error after a create, no
// attachment after an attach (available again), in-use after a detach
// (rolled back), error_extending at the old size after an extend,
// error_deleting after a delete, an error snapshot.
func TestVolumeHypervisorFailures(t *testing.T) {
	hv := &recorder{}
	s, c := setup(t, Options{Hypervisor: hv, ProvisioningReads: -1})
	srv := s.AddServer(NovaServer{Name: "node-1"}).ID

	hv.Fail("Create", true)
	bad := createVolume(t, c.volume, volumes.CreateOpts{Size: 1})
	if bad.Status != VolumeError {
		t.Fatalf("create with a failing hypervisor: %s", bad.Status)
	}
	hv.Fail("Create", false)
	if err := volumes.Delete(ctx(), c.volume, bad.ID, nil).ExtractErr(); err != nil {
		t.Fatalf("a volume in error is deleted: %v", err)
	}
	v := createVolume(t, c.volume, volumes.CreateOpts{Size: 1})
	hv.Want(t, "creates", hvCall{Method: "Create", Disk: disk(bad.ID, 1, "")}, hvCall{Method: "Create", Disk: disk(v.ID, 1, "")})

	hv.Fail("Attach", true)
	if _, err := volumeattach.Create(ctx(), c.compute, srv, volumeattach.CreateOpts{VolumeID: v.ID}).Extract(); err != nil {
		t.Fatal(err)
	}
	if got := getVolume(t, c.volume, v.ID); got.Status != VolumeAvailable || len(s.State().Volumes[0].Attachments) != 0 {
		t.Fatalf("after a failed attach: %+v", got)
	}
	hv.Fail("Attach", false)
	if _, err := volumeattach.Create(ctx(), c.compute, srv, volumeattach.CreateOpts{VolumeID: v.ID}).Extract(); err != nil {
		t.Fatal(err)
	}
	hv.Fail("Detach", true)
	if err := volumeattach.Delete(ctx(), c.compute, srv, v.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if got := getVolume(t, c.volume, v.ID); got.Status != VolumeInUse || len(got.Attachments) != 1 {
		t.Fatalf("after a failed detach: %+v", got)
	}
	hv.Fail("Detach", false)
	hv.Fail("Snapshot", true)
	sn := createSnapshot(t, c.volume, v.ID, true)
	if sn.Status != SnapshotError {
		t.Errorf("snapshot with a failing hypervisor: %s", sn.Status)
	}
	hv.Fail("Snapshot", false)
	if err := volumeattach.Delete(ctx(), c.compute, srv, v.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	hv.Fail("Resize", true)
	if err := volumes.ExtendSize(ctx(), c.volume, v.ID, volumes.ExtendSizeOpts{NewSize: 2}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if got := getVolume(t, c.volume, v.ID); got.Status != VolumeErrorExtending || got.Size != 1 {
		t.Fatalf("after a failed extend: %+v", got)
	}
	hv.Fail("Delete", true)
	deleteSnapshot(t, c.volume, sn.ID)
	if err := volumes.Delete(ctx(), c.volume, v.ID, nil).ExtractErr(); err != nil {
		t.Fatalf("a volume in error_extending is deleted: %v", err)
	}
	if got := getVolume(t, c.volume, v.ID); got.Status != VolumeErrorDeleting {
		t.Fatalf("after a failed delete: %+v", got)
	}
	err := volumes.Delete(ctx(), c.volume, v.ID, nil).ExtractErr()
	wantFault(t, err, 400, "badRequest", "")
	if !s.SetVolumeStatus(v.ID, VolumeAvailable) {
		t.Fatal("SetVolumeStatus")
	}
	hv.Fail("Delete", false)
	if err := volumes.Delete(ctx(), c.volume, v.ID, nil).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if n := len(s.Volumes()); n != 0 {
		t.Errorf("%d volumes left", n)
	}
	_ = http.StatusOK
}
