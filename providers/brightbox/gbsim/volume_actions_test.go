package gbsim

import (
	"net/http"
	"testing"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"github.com/brightbox/gobrightbox/v2/enums/volumestatus"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// TestVolumeAttachDetach: an attach is accepted (202) with the volume
// still detached, and done (attached, the server set, the device linked
// as virtio-<serial>) after the provisioning reads; meanwhile another
// attach is 409 and the same one accepted again; a detach likewise; the
// server shows the volumes attached to it.
func TestVolumeAttachDetach(t *testing.T) {
	hv := &recorder{}
	s, c := setup(t, Options{Hypervisor: hv, ProvisioningReads: 2})
	srv := s.AddServer(CloudServer{Name: "a"})
	other := s.AddServer(CloudServer{Name: "b"})
	v, err := s.AddVolume(Volume{Serial: "data"})
	if err != nil {
		t.Fatal(err)
	}
	hv.Want(t, "seed", hvCall{Method: "Create", Disk: disk(v.ID, "data", MinVolumeSize, "")})

	got, err := c.AttachVolume(ctx(), v.ID, brightbox.VolumeAttachment{Server: srv.ID})
	if err != nil || got.Status != volumestatus.Detached || got.Server != nil {
		t.Fatalf("attach: %+v, %v; want accepted, still detached", got, err)
	}
	if _, err := c.AttachVolume(ctx(), v.ID, brightbox.VolumeAttachment{Server: srv.ID}); err != nil {
		t.Errorf("the same attach again: %v", err)
	}
	_, err = c.AttachVolume(ctx(), v.ID, brightbox.VolumeAttachment{Server: other.ID})
	wantStatus(t, err, http.StatusConflict)
	_, err = c.DetachVolume(ctx(), v.ID)
	wantStatus(t, err, http.StatusConflict)
	_, err = c.DestroyVolume(ctx(), v.ID)
	wantStatus(t, err, http.StatusConflict)
	hv.Want(t, "attach accepted")
	volume(t, c, v.ID)
	if got := volume(t, c, v.ID); got.Status != volumestatus.Attached || got.Server == nil || got.Server.ID != srv.ID {
		t.Fatalf("after two reads: %+v, want attached to %s", got, srv.ID)
	}
	hv.Want(t, "attach done", hvCall{Method: "Attach", Disk: disk(v.ID, "data", MinVolumeSize, srv.ID)})
	sv, err := c.Server(ctx(), srv.ID)
	if err != nil || len(sv.Volumes) != 1 || sv.Volumes[0].ID != v.ID {
		t.Errorf("server's volumes: %+v, %v", sv.Volumes, err)
	}
	_, err = c.AttachVolume(ctx(), v.ID, brightbox.VolumeAttachment{Server: other.ID})
	wantStatus(t, err, http.StatusConflict)
	_, err = c.DestroyVolume(ctx(), v.ID)
	wantStatus(t, err, http.StatusConflict)

	got, err = c.DetachVolume(ctx(), v.ID)
	if err != nil || got.Status != volumestatus.Attached {
		t.Fatalf("detach: %+v, %v; want accepted, still attached", got, err)
	}
	if _, err := c.DetachVolume(ctx(), v.ID); err != nil {
		t.Errorf("the same detach again: %v", err)
	}
	s.Advance()
	hv.Want(t, "detach done", hvCall{Method: "Detach", Disk: disk(v.ID, "data", MinVolumeSize, srv.ID)})
	if got := volume(t, c, v.ID); got.Status != volumestatus.Detached || got.Server != nil {
		t.Errorf("after the detach: %+v", got)
	}
	_, err = c.DetachVolume(ctx(), v.ID)
	wantStatus(t, err, http.StatusConflict)
	if sv, err := c.Server(ctx(), srv.ID); err != nil || len(sv.Volumes) != 0 {
		t.Errorf("server's volumes after the detach: %+v, %v", sv.Volumes, err)
	}
	// A server that does not exist, a volume that does not.
	_, err = c.AttachVolume(ctx(), v.ID, brightbox.VolumeAttachment{Server: "srv-nope0"})
	wantStatus(t, err, http.StatusUnprocessableEntity)
	_, err = c.AttachVolume(ctx(), "vol-nope0", brightbox.VolumeAttachment{Server: srv.ID})
	wantStatus(t, err, http.StatusNotFound)
	stats := s.Stats()
	if stats["POST /1.0/volumes/{id}/attach"] != 6 || stats["POST /1.0/volumes/{id}/detach"] != 4 {
		t.Errorf("stats: %v", stats)
	}
}

// TestVolumesPerServer: a server takes Options.VolumesPerServer volumes
// (the documented 6 by default), those being attached included.
func TestVolumesPerServer(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 5})
	srv := s.AddServer(CloudServer{Name: "a"})
	for i := range DefaultVolumesPerServer + 1 {
		v, err := s.AddVolume(Volume{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.AttachVolume(ctx(), v.ID, brightbox.VolumeAttachment{Server: srv.ID})
		if i < DefaultVolumesPerServer && err != nil {
			t.Fatalf("attach %d: %v", i+1, err)
		}
		if i == DefaultVolumesPerServer {
			wantStatus(t, err, http.StatusUnprocessableEntity)
		}
	}
}

// TestVolumeBoot: a boot volume goes to a stopped server without one, and
// is not detached from a running one.
func TestVolumeBoot(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	srv := s.AddServer(CloudServer{Name: "a"})
	v, _ := s.AddVolume(Volume{})
	_, err := c.AttachVolume(ctx(), v.ID, brightbox.VolumeAttachment{Server: srv.ID, Boot: true})
	wantStatus(t, err, http.StatusConflict)
	s.SetServerStatus(srv.ID, StatusInactive)
	if got, err := c.AttachVolume(ctx(), v.ID, brightbox.VolumeAttachment{Server: srv.ID, Boot: true}); err != nil || !got.Boot {
		t.Fatalf("boot attach to a stopped server: %+v, %v", got, err)
	}
	w, _ := s.AddVolume(Volume{})
	_, err = c.AttachVolume(ctx(), w.ID, brightbox.VolumeAttachment{Server: srv.ID, Boot: true})
	wantStatus(t, err, http.StatusConflict)
	s.SetServerStatus(srv.ID, StatusActive)
	_, err = c.DetachVolume(ctx(), v.ID)
	wantStatus(t, err, http.StatusConflict)
}

// TestVolumeResize: a volume grows at once, attached or not, from the
// size the client saw; a stale from is 409, a smaller or too large size
// 422.
func TestVolumeResize(t *testing.T) {
	hv := &recorder{}
	s, c := setup(t, Options{Hypervisor: hv, ProvisioningReads: -1})
	srv := s.AddServer(CloudServer{Name: "a"})
	v, _ := s.AddVolume(Volume{Server: srv.ID})
	hv.Want(t, "seed", hvCall{Method: "Create", Disk: disk(v.ID, v.ID, MinVolumeSize, "")}, hvCall{Method: "Attach", Disk: disk(v.ID, v.ID, MinVolumeSize, srv.ID)})
	got, err := c.ResizeVolume(ctx(), v.ID, brightbox.VolumeNewSize{From: MinVolumeSize, To: 61440})
	if err != nil || got.Size != 61440 {
		t.Fatalf("resize: %+v, %v", got, err)
	}
	hv.Want(t, "resize", hvCall{Method: "Resize", Disk: disk(v.ID, v.ID, 61440, srv.ID)})
	_, err = c.ResizeVolume(ctx(), v.ID, brightbox.VolumeNewSize{From: MinVolumeSize, To: 81920})
	wantStatus(t, err, http.StatusConflict)
	_, err = c.ResizeVolume(ctx(), v.ID, brightbox.VolumeNewSize{From: 61440, To: 61440})
	wantStatus(t, err, http.StatusUnprocessableEntity)
	_, err = c.ResizeVolume(ctx(), v.ID, brightbox.VolumeNewSize{From: 61440, To: MaxVolumeSize + 1024})
	wantStatus(t, err, http.StatusUnprocessableEntity)
	hv.Fail("Resize", true)
	_, err = c.ResizeVolume(ctx(), v.ID, brightbox.VolumeNewSize{From: 61440, To: 81920})
	wantStatus(t, err, http.StatusInternalServerError)
	if got := volume(t, c, v.ID); got.Size != 61440 {
		t.Errorf("after a failed resize: %d MiB, want 61440", got.Size)
	}
}

// TestVolumeHypervisorFailures: a failed create leaves nothing; a failed
// attach leaves the volume detached.
func TestVolumeHypervisorFailures(t *testing.T) {
	hv := &recorder{}
	s, c := setup(t, Options{Hypervisor: hv, ProvisioningReads: -1})
	srv := s.AddServer(CloudServer{Name: "a"})
	hv.Fail("Create", true)
	_, err := c.CreateVolume(ctx(), brightbox.VolumeOptions{})
	wantStatus(t, err, http.StatusInternalServerError)
	if n := len(s.Volumes()); n != 0 {
		t.Errorf("%d volumes after a failed create", n)
	}
	hv.Fail("Create", false)
	hv.Fail("Attach", true)
	v, err := c.CreateVolume(ctx(), brightbox.VolumeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.AttachVolume(ctx(), v.ID, brightbox.VolumeAttachment{Server: srv.ID}); err != nil {
		t.Fatal(err)
	}
	if got := volume(t, c, v.ID); got.Status != volumestatus.Detached {
		t.Errorf("after a failed attach: %s, want detached", got.Status)
	}
}

// TestVolumesOfADeletedServer: a server's deletion detaches its volumes,
// and deletes those with delete_with_server.
func TestVolumesOfADeletedServer(t *testing.T) {
	hv := &recorder{}
	s, c := setup(t, Options{Hypervisor: hv, ProvisioningReads: -1, DeletedReads: -1})
	srv := s.AddServer(CloudServer{Name: "a"})
	keep, _ := s.AddVolume(Volume{Server: srv.ID})
	drop, _ := s.AddVolume(Volume{Server: srv.ID, DeleteWithServer: true})
	hv.Want(t, "seed", hvCall{Method: "Create", Disk: disk(keep.ID, keep.ID, MinVolumeSize, "")}, hvCall{Method: "Attach", Disk: disk(keep.ID, keep.ID, MinVolumeSize, srv.ID)},
		hvCall{Method: "Create", Disk: disk(drop.ID, drop.ID, MinVolumeSize, "")}, hvCall{Method: "Attach", Disk: disk(drop.ID, drop.ID, MinVolumeSize, srv.ID)})
	s.DeleteServer(srv.ID)
	hv.Want(t, "server deleted", hvCall{Method: "Detach", Disk: disk(keep.ID, keep.ID, MinVolumeSize, srv.ID)},
		hvCall{Method: "Detach", Disk: disk(drop.ID, drop.ID, MinVolumeSize, srv.ID)}, hvCall{Method: "Delete", Disk: disk(drop.ID, drop.ID, MinVolumeSize, "")})
	if got := volume(t, c, keep.ID); got.Status != volumestatus.Detached || got.Server != nil {
		t.Errorf("kept volume: %+v", got)
	}
	vols, err := c.Volumes(ctx())
	if err != nil || len(vols) != 1 || vols[0].ID != keep.ID {
		t.Errorf("volumes: %+v, %v; want only %s", vols, err, keep.ID)
	}
}

// TestVolumesSettleWithTime: a new volume, an attach, a detach and a
// deletion are done with time, unread, as the real API moves on.
func TestVolumesSettleWithTime(t *testing.T) {
	s, c := setup(t, timeOnly())
	srv := s.AddServer(CloudServer{Name: "a"})
	v, err := c.CreateVolume(ctx(), brightbox.VolumeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	status := func() string {
		for _, x := range s.Volumes() {
			if x.ID == v.ID {
				return x.Status
			}
		}
		return ""
	}
	simkit.WaitFor(t, "volume detached", func() bool { return status() == VolumeDetached })
	if _, err := c.AttachVolume(ctx(), v.ID, brightbox.VolumeAttachment{Server: srv.ID}); err != nil {
		t.Fatal(err)
	}
	simkit.WaitFor(t, "volume attached", func() bool { return status() == VolumeAttached })
	if _, err := c.DetachVolume(ctx(), v.ID); err != nil {
		t.Fatal(err)
	}
	simkit.WaitFor(t, "volume detached again", func() bool { return status() == VolumeDetached })
	if _, err := c.DestroyVolume(ctx(), v.ID); err != nil {
		t.Fatal(err)
	}
	simkit.WaitFor(t, "volume gone", func() bool { return status() == "" })
}
