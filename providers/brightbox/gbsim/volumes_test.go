package gbsim

import (
	"net/http"
	"strings"
	"testing"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"github.com/brightbox/gobrightbox/v2/enums/filesystemtype"
	"github.com/brightbox/gobrightbox/v2/enums/storagetype"
	"github.com/brightbox/gobrightbox/v2/enums/volumestatus"
	"github.com/brightbox/gobrightbox/v2/enums/volumetype"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// The simulator's Hypervisor in tests: simkit's recorder.
type (
	hvCall   = simkit.HypervisorCall
	recorder = simkit.RecordingHypervisor
)

// disk is the Disk of a volume as the Hypervisor gets it.
func disk(id, serial string, mib int, server string) simkit.Disk {
	return simkit.Disk{ID: id, ByIDName: "virtio-" + serial, SizeBytes: int64(mib) << 20, Server: server}
}

func volume(t *testing.T, c *brightbox.Client, id string) *brightbox.Volume {
	t.Helper()
	v, err := c.Volume(ctx(), id)
	if err != nil {
		t.Fatalf("volume %s: %v", id, err)
	}
	return v
}

// TestVolumeLifecycle: a volume is created (202, creating, then detached
// after the provisioning reads), listed, renamed, locked against
// deletion, destroyed (deleting, then deleted, listed a while, then gone),
// and the Hypervisor makes and forgets its blocks.
func TestVolumeLifecycle(t *testing.T) {
	hv := &recorder{}
	_, c := setup(t, Options{Hypervisor: hv, ProvisioningReads: 2, DeletedReads: 1})
	if vols, err := c.Volumes(ctx()); err != nil || len(vols) != 0 {
		t.Fatalf("volumes of a fresh cloud: %v, %v", vols, err)
	}
	size := uint(61440)
	v, err := c.CreateVolume(ctx(), brightbox.VolumeOptions{Name: ptr("data"), Description: ptr("pvc-1"), Size: &size})
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != volumestatus.Creating || v.Size != size || v.Serial != v.ID || v.StorageType != storagetype.Network ||
		v.SourceType != volumetype.Raw || v.Image == nil || v.Image.ID != BlankImage || v.Server != nil || v.FilesystemType != 0 {
		t.Errorf("created %+v", v)
	}
	if !strings.HasPrefix(v.ID, "vol-") || len(v.ID) != 9 {
		t.Errorf("ID %q, want vol-xxxxx", v.ID)
	}
	hv.Want(t, "create", hvCall{Method: "Create", Disk: disk(v.ID, v.ID, 61440, "")})
	if got := volume(t, c, v.ID); got.Status != volumestatus.Creating {
		t.Errorf("after one read: %s, want creating", got.Status)
	}
	if got := volume(t, c, v.ID); got.Status != volumestatus.Detached {
		t.Errorf("after two reads: %s, want detached", got.Status)
	}

	up, err := c.UpdateVolume(ctx(), brightbox.VolumeOptions{ID: v.ID, Name: ptr("renamed"), Serial: ptr("data-1"), DeleteWithServer: ptr(true)})
	if err != nil || up.Name != "renamed" || up.Serial != "data-1" || !up.DeleteWithServer || up.Description != "pvc-1" {
		t.Errorf("update: %+v, %v", up, err)
	}
	if _, err := c.LockVolume(ctx(), v.ID); err != nil {
		t.Fatal(err)
	}
	_, err = c.DestroyVolume(ctx(), v.ID)
	wantStatus(t, err, http.StatusConflict)
	if _, err := c.UnlockVolume(ctx(), v.ID); err != nil {
		t.Fatal(err)
	}
	d, err := c.DestroyVolume(ctx(), v.ID)
	if err != nil || d.Status != volumestatus.Deleting {
		t.Fatalf("destroy: %+v, %v", d, err)
	}
	hv.Want(t, "destroy", hvCall{Method: "Delete", Disk: disk(v.ID, "data-1", 61440, "")})
	_, err = c.DestroyVolume(ctx(), v.ID)
	wantStatus(t, err, http.StatusConflict)
	volume(t, c, v.ID)
	if got := volume(t, c, v.ID); got.Status != volumestatus.Deleted || got.DeletedAt == nil {
		t.Errorf("after two reads: %+v, want deleted", got)
	}
	for i, want := range []int{1, 0} {
		if vols, err := c.Volumes(ctx()); err != nil || len(vols) != want {
			t.Errorf("list %d: %d volumes, %v; want %d", i, len(vols), err, want)
		}
	}
	_, err = c.Volume(ctx(), v.ID)
	wantStatus(t, err, http.StatusNotFound)
}

// TestVolumeCreateValidation: sizes within the documented 40 GB to 4 TB
// (in MiB, default the minimum), filesystems xfs or ext4 and not with an
// image, a label only with a filesystem and at most 12 characters, a
// serial of at most 20, the account's block storage.
func TestVolumeCreateValidation(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1, BlockStorageLimit: 3 * MinVolumeSize})
	for _, tc := range []struct {
		name string
		opts brightbox.VolumeOptions
	}{
		{"too small", brightbox.VolumeOptions{Size: ptr(uint(MinVolumeSize - 1))}},
		{"too large", brightbox.VolumeOptions{Size: ptr(uint(MaxVolumeSize + 1))}},
		{"filesystem and image", brightbox.VolumeOptions{FilesystemType: filesystemtype.Ext4, Image: ptr(UbuntuImage)}},
		{"label without filesystem", brightbox.VolumeOptions{FilesystemLabel: ptr("data")}},
		{"long label", brightbox.VolumeOptions{FilesystemType: filesystemtype.Xfs, FilesystemLabel: ptr("1234567890123")}},
		{"long serial", brightbox.VolumeOptions{Serial: ptr(strings.Repeat("s", 21))}},
		{"serial with a slash", brightbox.VolumeOptions{Serial: ptr("../../x")}},
		{"unknown image", brightbox.VolumeOptions{Image: ptr("img-nope0")}},
		{"long name", brightbox.VolumeOptions{Name: ptr(strings.Repeat("n", 256))}},
	} {
		_, err := c.CreateVolume(ctx(), tc.opts)
		if ae := wantAPIError(t, err, http.StatusUnprocessableEntity); ae.ErrorName != "invalid_arguments" {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	// Unknown filesystem types never leave gobrightbox; the API refuses
	// them too.
	bearer := token(t, s)
	status, body := call(t, s, bearer, http.MethodPost, "/1.0/volumes", `{"filesystem_type":"btrfs"}`)
	if status != http.StatusUnprocessableEntity {
		t.Errorf("btrfs: %d %s", status, body)
	}

	v, err := c.CreateVolume(ctx(), brightbox.VolumeOptions{})
	if err != nil || v.Size != MinVolumeSize || v.Status != volumestatus.Detached {
		t.Errorf("create with no options: %+v, %v; want %d MiB, detached", v, err, MinVolumeSize)
	}
	f, err := c.CreateVolume(ctx(), brightbox.VolumeOptions{FilesystemType: filesystemtype.Xfs, FilesystemLabel: ptr("123456789012"),
		Serial: ptr(strings.Repeat("s", 20)), Encrypted: ptr(true)})
	if err != nil || f.FilesystemType != filesystemtype.Xfs || f.FilesystemLabel != "123456789012" || !f.Encrypted ||
		f.Serial != strings.Repeat("s", 20) {
		t.Errorf("formatted: %+v, %v", f, err)
	}
	im, err := c.CreateVolume(ctx(), brightbox.VolumeOptions{Image: ptr(UbuntuImage)})
	if err != nil || im.SourceType != volumetype.Image || im.Source != UbuntuImage || im.Image.ID != UbuntuImage {
		t.Errorf("from an image: %+v, %v", im, err)
	}
	// The account's block storage is full.
	_, err = c.CreateVolume(ctx(), brightbox.VolumeOptions{})
	if ae := wantAPIError(t, err, http.StatusForbidden); !strings.Contains(strings.Join(ae.Errors, ""), "Account limit reached") {
		t.Errorf("beyond the block storage limit: %v", err)
	}
	acc, err := c.Account(ctx(), s.Account())
	if err != nil || acc.BlockStorageUsed != 3*MinVolumeSize || acc.BlockStorageLimit != 3*MinVolumeSize {
		t.Errorf("account: used %d of %d, %v", acc.BlockStorageUsed, acc.BlockStorageLimit, err)
	}
}

// TestVolumeUpdateRules: the serial changes only while the volume is
// detached; the filesystem and size never through an update.
func TestVolumeUpdateRules(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	srv := s.AddServer(CloudServer{Name: "a"})
	v, err := s.AddVolume(Volume{Server: srv.ID})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.UpdateVolume(ctx(), brightbox.VolumeOptions{ID: v.ID, Serial: ptr("new")})
	wantStatus(t, err, http.StatusConflict)
	if got, err := c.UpdateVolume(ctx(), brightbox.VolumeOptions{ID: v.ID, Name: ptr("n"), Serial: ptr(v.ID)}); err != nil || got.Name != "n" {
		t.Errorf("rename an attached volume (same serial): %+v, %v", got, err)
	}
	_, err = c.UpdateVolume(ctx(), brightbox.VolumeOptions{ID: v.ID, Size: ptr(uint(MinVolumeSize * 2))})
	wantStatus(t, err, http.StatusUnprocessableEntity)
	_, err = c.UpdateVolume(ctx(), brightbox.VolumeOptions{ID: v.ID, FilesystemType: filesystemtype.Ext4})
	wantStatus(t, err, http.StatusUnprocessableEntity)
	_, err = c.UpdateVolume(ctx(), brightbox.VolumeOptions{ID: "vol-nope0", Name: ptr("x")})
	wantStatus(t, err, http.StatusNotFound)
}

// TestVolumeDocuments decodes every volume document with unknown fields
// refused, and a server's with its volumes.
func TestVolumeDocuments(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	c.DisallowUnknownFields()
	srv := s.AddServer(CloudServer{Name: "a"})
	v, err := s.AddVolume(Volume{Name: "data", Server: srv.ID, FilesystemType: "ext4", FilesystemLabel: "data"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateVolume(ctx(), brightbox.VolumeOptions{Image: ptr(UbuntuImage)}); err != nil {
		t.Errorf("create: %v", err)
	}
	if _, err := c.Volumes(ctx()); err != nil {
		t.Errorf("volumes: %v", err)
	}
	got, err := c.Volume(ctx(), v.ID)
	if err != nil || got.Server == nil || got.Server.ID != srv.ID || got.Status != volumestatus.Attached || got.FilesystemType != filesystemtype.Ext4 {
		t.Errorf("volume: %+v, %v", got, err)
	}
	sv, err := c.Server(ctx(), srv.ID)
	if err != nil || len(sv.Volumes) != 1 || sv.Volumes[0].ID != v.ID || sv.Volumes[0].Status != volumestatus.Attached {
		t.Errorf("server: volumes %+v, %v", sv.Volumes, err)
	}
	if _, err := c.Account(ctx(), s.Account()); err != nil {
		t.Errorf("account: %v", err)
	}
}

// TestVolumeMalformedAnswers: a corrupted status or a truncated answer is
// an error gobrightbox reports, not a volume.
func TestVolumeMalformedAnswers(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	v, err := s.AddVolume(Volume{})
	if err != nil {
		t.Fatal(err)
	}
	s.CorruptStatus("GET /1.0/volumes*", 2)
	_, err = c.Volume(ctx(), v.ID)
	parseError(t, err)
	_, err = c.Volumes(ctx())
	parseError(t, err)
	remove := s.Inject(Fault{Op: "GET /1.0/volumes/{id}", Truncate: true, Count: 1})
	_, err = c.Volume(ctx(), v.ID)
	parseError(t, err)
	remove()
	if _, err := c.Volume(ctx(), v.ID); err != nil {
		t.Errorf("after the faults ran out: %v", err)
	}
	if n := s.Stats()["GET /1.0/volumes/{id}"]; n != 3 {
		t.Errorf("GET /1.0/volumes/{id} counted %d times, want 3", n)
	}
}
