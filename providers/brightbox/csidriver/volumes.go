package csidriver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"github.com/brightbox/gobrightbox/v2/enums/volumestatus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/providers/brightbox/internal/cloud"
)

// maxVolumeName is the longest volume name the driver gives: Brightbox's
// Terraform provider takes names of up to 255 characters.
const maxVolumeName = 255

// volumeName is the Brightbox name of the volume a CSI CreateVolume names:
// the CSI name itself (external-provisioner's pvc-<UID>), or, beyond
// maxVolumeName bytes, its start and a hash of the whole. The same CSI
// name always gives the same volume name, for the lookup by name.
func volumeName(csiName string) string {
	if len(csiName) <= maxVolumeName {
		return csiName
	}
	sum := sha256.Sum256([]byte(csiName))
	return csiName[:maxVolumeName-13] + "-" + hex.EncodeToString(sum[:6])
}

// volumeGone reports whether the API shows v deleted or being deleted:
// for the driver it no longer exists.
func volumeGone(v *brightbox.Volume) bool {
	return v.Status == volumestatus.Deleting || v.Status == volumestatus.Deleted
}

// serverOf is the server v is attached to, "" when none.
func serverOf(v *brightbox.Volume) string {
	if v.Server == nil {
		return ""
	}
	return v.Server.ID
}

// toVolume is the framework's view of a Brightbox volume.
func toVolume(v *brightbox.Volume) *csi.Volume {
	out := &csi.Volume{ID: v.ID, Name: v.Name, SizeBytes: int64(v.Size) * mib}
	if s := serverOf(v); v.Status == volumestatus.Attached && s != "" {
		out.Nodes = []string{s}
	}
	return out
}

// getVolume reads volume id (one GET): csi.ErrNotFound only when the API
// answered its own 404; an answer that is not that volume is an error.
func (p *Driver) getVolume(ctx context.Context, c *brightbox.Client, id string) (*brightbox.Volume, error) {
	v, err := cloud.One(ctx, "volumes.get", func(ctx context.Context) (*brightbox.Volume, error) { return c.Volume(ctx, id) })
	switch {
	case cloud.IsNotFound(err):
		return nil, fmt.Errorf("volume %s: %w (%w)", id, csi.ErrNotFound, err)
	case err != nil:
		return nil, fmt.Errorf("getting volume %s: %w", id, err)
	case v == nil || v.ID != id:
		return nil, fmt.Errorf("getting volume %s: malformed response: not that volume", id)
	}
	return v, nil
}

// Create creates a volume (the framework has looked it up by name): of the
// size asked for (whole GiB, in the API's MiB), named as the CSI name,
// described as the driver's, encrypted when the StorageClass says so.
// One POST; the volume is creating, and attaching it waits (Attach).
//
// It is not pre-formatted, though the API can (filesystem_type): the
// driver does not know at create whether the volume will be a filesystem
// or a raw block device (a raw block claim from a StorageClass that names
// a filesystem would get one on its device), and the filesystem the API
// makes (its mkfs options, reserved blocks) is not documented, whereas
// the node formats a volume whose device holds none with the driver's
// own options, in seconds.
func (p *Driver) Create(ctx context.Context, req csi.CreateRequest) (*csi.Volume, error) {
	c, err := p.api()
	if err != nil {
		return nil, err
	}
	size := uint(req.SizeBytes / mib)
	name, desc := volumeName(req.Name), volumeDescription+" ("+p.Name()+")"
	opts := brightbox.VolumeOptions{Name: &name, Description: &desc, Size: &size}
	if enc, ok := encryptedParameter(req.Parameters); ok {
		opts.Encrypted = &enc
	}
	v, err := c.CreateVolume(cloudapi.WithOperation(ctx, "volumes.create"), opts)
	switch {
	case cloud.APIStatus(err) == http.StatusForbidden:
		return nil, status.Errorf(codes.ResourceExhausted, "creating volume %s: the account's block storage limit is reached (%s)", name, apiMessage(err))
	case cloud.APIStatus(err) == http.StatusUnprocessableEntity:
		return nil, status.Errorf(codes.InvalidArgument, "creating volume %s of %d MiB: the API refused it (%s)", name, size, apiMessage(err))
	case err != nil:
		return nil, fmt.Errorf("creating volume %s: %w", name, err)
	case v == nil || !isVolumeID(v.ID):
		return nil, fmt.Errorf("creating volume %s: malformed response: no volume ID", name)
	}
	return toVolume(v), nil
}

// Get returns volume id: csi.ErrNotFound only when the API said so (its
// 404, or the volume deleted or being deleted).
func (p *Driver) Get(ctx context.Context, id string) (*csi.Volume, error) {
	c, err := p.api()
	if err != nil {
		return nil, err
	}
	if !isVolumeID(id) {
		return nil, noSuchVolume(id)
	}
	v, err := p.getVolume(ctx, c, id)
	if err != nil {
		return nil, err
	}
	if volumeGone(v) {
		return nil, fmt.Errorf("volume %s is %s: %w", id, v.Status, csi.ErrNotFound)
	}
	return toVolume(v), nil
}

// GetByName returns the volume a CreateVolume named name made, nil when
// there is none (the API has no filter: one list of the account's
// volumes). Deleted volumes do not count; a failed one, or two of the
// name, is an error, not a guess.
func (p *Driver) GetByName(ctx context.Context, name, _ string) (*csi.Volume, error) {
	c, err := p.api()
	if err != nil {
		return nil, err
	}
	all, err := c.Volumes(cloudapi.WithOperation(ctx, "volumes.list"))
	if err != nil {
		return nil, fmt.Errorf("listing volumes: %w", err)
	}
	want := volumeName(name)
	var found []*brightbox.Volume
	for i := range all {
		if v := &all[i]; v.Name == want && !volumeGone(v) {
			found = append(found, v)
		}
	}
	switch {
	case len(found) == 0:
		return nil, nil //nolint:nilnil // the framework's "none"
	case len(found) > 1:
		ids := make([]string, 0, len(found))
		for _, v := range found {
			ids = append(ids, v.ID)
		}
		return nil, fmt.Errorf("several volumes are named %q (%s): delete all but one", want, strings.Join(ids, ", "))
	case !isVolumeID(found[0].ID):
		return nil, fmt.Errorf("listing volumes: malformed response: volume %q has ID %q", want, truncateText(found[0].ID, 40))
	case found[0].Status == volumestatus.Failed:
		return nil, fmt.Errorf("volume %s (%s) has failed: delete it, and the next CreateVolume makes another", found[0].ID, want)
	}
	return toVolume(found[0]), nil
}

// Delete destroys volume id: csi.ErrNotFound when the API says it is
// gone, csi.ErrInUse while it is attached, FailedPrecondition while it is
// locked, csi.ErrPending while the API is busy with it. One DELETE; a
// refusal costs one GET, to say why.
func (p *Driver) Delete(ctx context.Context, id string) error {
	c, err := p.api()
	if err != nil {
		return err
	}
	if !isVolumeID(id) {
		return noSuchVolume(id)
	}
	_, err = cloud.One(ctx, "volumes.delete", func(ctx context.Context) (*brightbox.Volume, error) { return c.DestroyVolume(ctx, id) })
	switch {
	case err == nil:
		p.forget(id)
		return nil
	case cloud.IsNotFound(err):
		p.forget(id)
		return fmt.Errorf("volume %s: %w (%w)", id, csi.ErrNotFound, err)
	case cloud.APIStatus(err) != http.StatusConflict:
		return fmt.Errorf("deleting volume %s: %w", id, err)
	}
	v, gerr := p.getVolume(ctx, c, id)
	switch {
	case gerr != nil:
		return gerr
	case volumeGone(v):
		p.forget(id)
		return nil
	case v.Locked:
		return status.Errorf(codes.FailedPrecondition,
			"volume %s is locked against deletion: unlock it (PUT /1.0/volumes/%s/unlock_resource, brightbox volumes unlock) to delete it", id, id)
	case v.Status == volumestatus.Attached || serverOf(v) != "":
		return fmt.Errorf("volume %s is attached to server %s: %w", id, serverOf(v), csi.ErrInUse)
	}
	return csi.Pending("volume %s is %s and the API refused the delete for now (%s)", id, v.Status, apiMessage(err))
}

// ListVolumes lists the account's volumes, but for those deleted or being
// deleted and the servers' boot volumes. One GET.
func (p *Driver) ListVolumes(ctx context.Context) ([]*csi.Volume, error) {
	c, err := p.api()
	if err != nil {
		return nil, err
	}
	all, err := c.Volumes(cloudapi.WithOperation(ctx, "volumes.list"))
	if err != nil {
		return nil, fmt.Errorf("listing volumes: %w", err)
	}
	out := make([]*csi.Volume, 0, len(all))
	for i := range all {
		v := &all[i]
		if volumeGone(v) || v.Boot {
			continue
		}
		if !isVolumeID(v.ID) {
			return nil, fmt.Errorf("listing volumes: malformed response: volume ID %q", truncateText(v.ID, 40))
		}
		out = append(out, toVolume(v))
	}
	return out, nil
}

// Expand grows volume id to bytes (already rounded to GiB): one GET for
// the size the API checks (from), one POST resize; done when the API
// answers it at the new size ("resized instantly"), csi.ErrPending while
// it does not, or when the volume changed meanwhile (the retry reads it
// afresh).
func (p *Driver) Expand(ctx context.Context, id string, bytes int64) (int64, error) {
	c, err := p.api()
	if err != nil {
		return 0, err
	}
	if !isVolumeID(id) {
		return 0, noSuchVolume(id)
	}
	v, err := p.getVolume(ctx, c, id)
	if err != nil {
		return 0, err
	}
	if volumeGone(v) {
		return 0, fmt.Errorf("volume %s is %s: %w", id, v.Status, csi.ErrNotFound)
	}
	want := uint(bytes / mib)
	if v.Size >= want {
		return int64(v.Size) * mib, nil
	}
	got, err := cloud.One(ctx, "volumes.resize", func(ctx context.Context) (*brightbox.Volume, error) {
		return c.ResizeVolume(ctx, id, brightbox.VolumeNewSize{From: v.Size, To: want})
	})
	switch {
	case cloud.IsNotFound(err):
		return 0, fmt.Errorf("volume %s: %w (%w)", id, csi.ErrNotFound, err)
	case cloud.APIStatus(err) == http.StatusConflict:
		return 0, csi.Pending("volume %s changed, or is busy, meanwhile (%s)", id, apiMessage(err))
	case cloud.APIStatus(err) == http.StatusForbidden:
		return 0, status.Errorf(codes.ResourceExhausted, "resizing volume %s: the account's block storage limit is reached (%s)", id, apiMessage(err))
	case err != nil:
		return 0, fmt.Errorf("resizing volume %s from %d to %d MiB: %w", id, v.Size, want, err)
	case got == nil || got.ID != id:
		return 0, fmt.Errorf("resizing volume %s: malformed response: not that volume", id)
	case got.Size < want:
		return 0, csi.Pending("resize of volume %s to %d MiB accepted", id, want)
	}
	return int64(got.Size) * mib, nil
}
