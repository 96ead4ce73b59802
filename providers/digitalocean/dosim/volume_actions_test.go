package dosim

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/digitalocean/godo"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// volumeAction posts a raw volume action body, for what godo's
// StorageActions cannot send (no droplet_id, by name, unknown types).
func volumeAction(c *godo.Client, path string, body map[string]any) (*godo.Action, error) {
	req, err := c.NewRequest(ctx(), http.MethodPost, path, body)
	if err != nil {
		return nil, err
	}
	var root struct {
		Action *godo.Action `json:"action"`
	}
	_, err = c.Do(ctx(), req, &root)
	return root.Action, err
}

// wantMessage fails unless err is a godo error with status and message.
func wantMessage(t *testing.T, what string, err error, status int, message string) {
	t.Helper()
	if er := errorResponse(t, err, status); er.Message != message {
		t.Errorf("%s: message %q, want %q", what, er.Message, message)
	}
}

// TestVolumeActionErrors: the API's answers to attach, detach and resize
// requests it refuses, with the messages godo's storage.go names
// (ErrDropletPendingEvent, ErrVolumeAlreadyAttached,
// ErrPerDropletVolumeCountLimit, ErrAttachmentNotFound) and
// csi-digitalocean's controller matches: 422 for each.
func TestVolumeActionErrors(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 2, VolumesPerDroplet: 2})
	d1 := s.AddDroplet(Droplet{Name: "d1"}).ID
	d2 := s.AddDroplet(Droplet{Name: "d2"}).ID
	far := s.AddDroplet(Droplet{Name: "far", Region: region("sfo3")}).ID
	vol := func(name string) string {
		t.Helper()
		v, _, err := c.Storage.CreateVolume(ctx(), &godo.VolumeCreateRequest{Name: name, Region: "nyc3", SizeGigaBytes: 10})
		if err != nil {
			t.Fatal(err)
		}
		return v.ID
	}
	a, b, x, y := vol("a"), vol("b"), vol("x"), vol("y")

	_, _, err := c.StorageActions.Attach(ctx(), a, 999)
	wantStatus(t, err, 404)
	_, _, err = c.StorageActions.Attach(ctx(), a, far)
	wantStatus(t, err, 422)
	_, _, err = c.StorageActions.Attach(ctx(), "nope", d1)
	wantStatus(t, err, 404)

	// An attach in progress keeps both the volume and the droplet busy,
	// for volume actions and droplet actions alike.
	act, _, err := c.StorageActions.Attach(ctx(), a, d1)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.StorageActions.Attach(ctx(), a, d2)
	wantMessage(t, "attach of a volume being attached", err, 422, msgPendingEvent)
	_, _, err = c.StorageActions.Attach(ctx(), b, d1)
	wantMessage(t, "attach to a droplet with an attach in progress", err, 422, msgPendingEvent)
	_, _, err = c.StorageActions.Resize(ctx(), a, 20, "nyc3")
	wantMessage(t, "resize of a volume being attached", err, 422, msgPendingEvent)
	_, _, err = c.DropletActions.PowerOff(ctx(), d1)
	wantMessage(t, "droplet action while a volume attaches", err, 422, msgPendingEvent)
	waitVolumeAction(t, c, a, act)

	// A droplet action in progress refuses volume attaches.
	pa, _, err := c.DropletActions.PowerOff(ctx(), d2)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.StorageActions.Attach(ctx(), b, d2)
	wantMessage(t, "attach to a droplet powering off", err, 422, msgPendingEvent)
	s.Advance()
	if got, _, _ := c.Actions.Get(ctx(), pa.ID); got.Status != ActionCompleted {
		t.Fatalf("power_off: %q", got.Status)
	}

	// Attached: to the same droplet or another, "already attached".
	_, _, err = c.StorageActions.Attach(ctx(), a, d1)
	wantMessage(t, "attach again", err, 422, msgAlreadyAttached)
	_, _, err = c.StorageActions.Attach(ctx(), a, d2)
	wantMessage(t, "attach attached elsewhere", err, 422, msgAlreadyAttached)

	// The per-droplet limit (2 here).
	if _, _, err := c.StorageActions.Attach(ctx(), x, d1); err != nil {
		t.Fatal(err)
	}
	s.Advance()
	_, _, err = c.StorageActions.Attach(ctx(), y, d1)
	wantMessage(t, "third attach with a limit of 2", err, 422, msgVolumeLimit)
	if d, _, _ := c.Droplets.Get(ctx(), d1); len(d.VolumeIDs) != 2 {
		t.Errorf("droplet volume_ids: %v", d.VolumeIDs)
	}

	// Detach: only from the droplet it is attached to; without droplet_id
	// "Attachment not found" too (godo issue 102).
	_, _, err = c.StorageActions.DetachByDropletID(ctx(), b, d1)
	wantMessage(t, "detach of a detached volume", err, 422, msgAttachmentNotFound)
	_, _, err = c.StorageActions.DetachByDropletID(ctx(), a, d2)
	wantMessage(t, "detach from the wrong droplet", err, 422, msgAttachmentNotFound)
	_, err = volumeAction(c, "v2/volumes/"+a+"/actions", map[string]any{"type": "detach"})
	wantMessage(t, "detach without droplet_id", err, 422, msgAttachmentNotFound)
	_, _, err = c.StorageActions.DetachByDropletID(ctx(), a, 999)
	wantStatus(t, err, 404)

	// Resize: only upwards, at most 16 TiB, in the volume's region.
	for _, size := range []int{10, 5, MaxVolumeSize + 1} {
		_, _, err = c.StorageActions.Resize(ctx(), b, size, "nyc3")
		wantStatus(t, err, 422)
	}
	_, _, err = c.StorageActions.Resize(ctx(), b, 20, "sfo3")
	wantStatus(t, err, 422)
	_, err = volumeAction(c, "v2/volumes/"+b+"/actions", map[string]any{"type": "snapshot"})
	wantStatus(t, err, 422)

	// Nothing refused changed anything.
	for _, v := range s.Volumes() {
		want := map[string][]int{a: {d1}, x: {d1}}[v.ID]
		if !slices.Equal(v.DropletIDs, want) || v.SizeGigabytes != 10 {
			t.Errorf("volume %s: droplet_ids %v, size %d", v.Name, v.DropletIDs, v.SizeGigabytes)
		}
	}
}

// TestVolumeActionsByName: POST /v2/volumes/actions attaches and detaches
// the volume called volume_name in region (openapi
// volumes/volumeActions_post.yml); resize is by ID only (openapi pull
// request 376).
func TestVolumeActionsByName(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 1})
	d := s.AddDroplet(Droplet{}).ID
	v, _, _ := c.Storage.CreateVolume(ctx(), &godo.VolumeCreateRequest{Name: "data", Region: "nyc3", SizeGigaBytes: 1})
	a, err := volumeAction(c, "v2/volumes/actions", map[string]any{"type": "attach", "volume_name": "data", "region": "nyc3", "droplet_id": d})
	if err != nil || a.Type != "attach_volume" || a.Status != ActionInProgress {
		t.Fatalf("attach by name: %+v %v", a, err)
	}
	waitVolumeAction(t, c, v.ID, a)
	if got, _, _ := c.Storage.GetVolume(ctx(), v.ID); len(got.DropletIDs) != 1 {
		t.Fatalf("not attached: %+v", got)
	}
	// Without region: the droplet's.
	a, err = volumeAction(c, "v2/volumes/actions", map[string]any{"type": "detach", "volume_name": "data", "droplet_id": d})
	if err != nil {
		t.Fatal(err)
	}
	waitVolumeAction(t, c, v.ID, a)
	if got, _, _ := c.Storage.GetVolume(ctx(), v.ID); len(got.DropletIDs) != 0 {
		t.Fatalf("not detached: %+v", got)
	}
	_, err = volumeAction(c, "v2/volumes/actions", map[string]any{"type": "resize", "volume_name": "data", "region": "nyc3", "size_gigabytes": 5})
	wantStatus(t, err, 422)
	_, err = volumeAction(c, "v2/volumes/actions", map[string]any{"type": "attach", "volume_name": "nope", "region": "nyc3", "droplet_id": d})
	wantStatus(t, err, 404)
	_, err = volumeAction(c, "v2/volumes/actions", map[string]any{"type": "attach", "region": "nyc3", "droplet_id": d})
	wantStatus(t, err, 422)
}

// TestVolumeHypervisorFailures: a Hypervisor that fails fails the request
// (create, snapshot, delete: 500, nothing changed) or ends the action
// "errored" with the volume as it was (attach, detach, resize), as
// simkit.Hypervisor says.
func TestVolumeHypervisorFailures(t *testing.T) {
	hv := &recorder{}
	s, c := setup(t, Options{ProvisioningReads: 1, Hypervisor: hv})
	d := s.AddDroplet(Droplet{}).ID

	hv.Fail("Create", true)
	_, _, err := c.Storage.CreateVolume(ctx(), &godo.VolumeCreateRequest{Name: "v", Region: "nyc3", SizeGigaBytes: 1})
	wantStatus(t, err, 500)
	if vs := s.Volumes(); len(vs) != 0 {
		t.Fatalf("volume left by a failed create: %+v", vs)
	}
	hv.Fail("Create", false)
	v, _, err := c.Storage.CreateVolume(ctx(), &godo.VolumeCreateRequest{Name: "v", Region: "nyc3", SizeGigaBytes: 1})
	if err != nil {
		t.Fatal(err)
	}

	action := func(what string, start func() (*godo.Action, *godo.Response, error)) string {
		t.Helper()
		a, _, err := start()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return waitVolumeAction(t, c, v.ID, a).Status
	}
	attach := func() (*godo.Action, *godo.Response, error) { return c.StorageActions.Attach(ctx(), v.ID, d) }
	hv.Fail("Attach", true)
	if st := action("attach", attach); st != ActionErrored {
		t.Errorf("attach with a failing hypervisor: %q", st)
	}
	if got, _, _ := c.Storage.GetVolume(ctx(), v.ID); len(got.DropletIDs) != 0 {
		t.Errorf("attached after a failed attach: %v", got.DropletIDs)
	}
	if drop, _, _ := c.Droplets.Get(ctx(), d); len(drop.VolumeIDs) != 0 {
		t.Errorf("droplet volume_ids after a failed attach: %v", drop.VolumeIDs)
	}
	hv.Fail("Attach", false)
	if st := action("attach", attach); st != ActionCompleted {
		t.Fatalf("attach: %q", st)
	}

	hv.Fail("Resize", true)
	if st := action("resize", func() (*godo.Action, *godo.Response, error) { return c.StorageActions.Resize(ctx(), v.ID, 2, "") }); st != ActionErrored {
		t.Errorf("resize with a failing hypervisor: %q", st)
	}
	if got, _, _ := c.Storage.GetVolume(ctx(), v.ID); got.SizeGigaBytes != 1 {
		t.Errorf("size after a failed resize: %d", got.SizeGigaBytes)
	}

	hv.Fail("Detach", true)
	if st := action("detach", func() (*godo.Action, *godo.Response, error) {
		return c.StorageActions.DetachByDropletID(ctx(), v.ID, d)
	}); st != ActionErrored {
		t.Errorf("detach with a failing hypervisor: %q", st)
	}
	if got, _, _ := c.Storage.GetVolume(ctx(), v.ID); len(got.DropletIDs) != 1 {
		t.Errorf("detached after a failed detach: %v", got.DropletIDs)
	}
	if drop, _, _ := c.Droplets.Get(ctx(), d); len(drop.VolumeIDs) != 1 {
		t.Errorf("droplet volume_ids after a failed detach: %v", drop.VolumeIDs)
	}

	hv.Fail("Snapshot", true)
	_, _, err = c.Storage.CreateSnapshot(ctx(), &godo.SnapshotCreateRequest{VolumeID: v.ID, Name: "s"})
	wantStatus(t, err, 500)
	if n := len(s.State().Snapshots); n != 0 {
		t.Errorf("%d snapshots after a failed one", n)
	}
	hv.Fail("Snapshot", false)
	snap, _, err := c.Storage.CreateSnapshot(ctx(), &godo.SnapshotCreateRequest{VolumeID: v.ID, Name: "s"})
	if err != nil {
		t.Fatal(err)
	}
	hv.Fail("DeleteSnapshot", true)
	_, err = c.Storage.DeleteSnapshot(ctx(), snap.ID)
	wantStatus(t, err, 500)
	if _, _, err := c.Snapshots.Get(ctx(), snap.ID); err != nil {
		t.Errorf("snapshot gone after a failed delete: %v", err)
	}

	hv.Fail("Detach", false)
	if st := action("detach", func() (*godo.Action, *godo.Response, error) {
		return c.StorageActions.DetachByDropletID(ctx(), v.ID, d)
	}); st != ActionCompleted {
		t.Fatalf("detach: %q", st)
	}
	hv.Fail("Delete", true)
	_, err = c.Storage.DeleteVolume(ctx(), v.ID)
	wantStatus(t, err, 500)
	if _, _, err := c.Storage.GetVolume(ctx(), v.ID); err != nil {
		t.Errorf("volume gone after a failed delete: %v", err)
	}
}

// TestVolumeActionsSettleAfter: with Common.SettleAfter a volume action
// completes that long after it started, read or not, as the real cloud
// moves on.
func TestVolumeActionsSettleAfter(t *testing.T) {
	opts := Options{ProvisioningReads: 1000}
	opts.SettleAfter = 5 * time.Millisecond
	s, c := setup(t, opts)
	d := s.AddDroplet(Droplet{}).ID
	v, _, _ := c.Storage.CreateVolume(ctx(), &godo.VolumeCreateRequest{Name: "v", Region: "nyc3", SizeGigaBytes: 1})
	if _, _, err := c.StorageActions.Attach(ctx(), v.ID, d); err != nil {
		t.Fatal(err)
	}
	simkit.WaitFor(t, "attach completes with time", func() bool {
		st := s.State()
		return len(st.Volumes[0].DropletIDs) == 1 && st.VolumeActions[0].Status == ActionCompleted &&
			len(st.Droplets[0].VolumeIDs) == 1
	})
}
