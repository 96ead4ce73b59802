package csidriver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/digitalocean/godo"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/providers/digitalocean/internal/cloud"
)

// validVolumeName is the API's rule for a volume name ("Must be lowercase
// and be composed only of numbers, letters and "-", up to a limit of 64
// characters. The name must begin with a letter.").
var validVolumeName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,63}$`)

// volumeName is the DigitalOcean name of the volume a CSI CreateVolume
// names: the CSI name itself when the API takes it (external-provisioner's
// pvc-<UID>, as csi-digitalocean names volumes, so their device paths do
// not change), else a name the API takes made from it: lower case, '-'
// for anything else, at most 51 characters of it and a hash of the whole
// CSI name (names differing only in case or length stay apart). The same
// CSI name always gives the same volume name, for the lookup by name.
func volumeName(csiName string) string {
	if validVolumeName.MatchString(csiName) {
		return csiName
	}
	b := []byte(strings.ToLower(csiName))
	for i, ch := range b {
		if (ch < 'a' || ch > 'z') && (ch < '0' || ch > '9') {
			b[i] = '-'
		}
	}
	s := string(b)
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		s = "v" + s
	}
	sum := sha256.Sum256([]byte(csiName))
	return s[:min(len(s), 51)] + "-" + hex.EncodeToString(sum[:6])
}

// regionFor is the region of a volume in topology segment segment ("":
// the controller's). The controller serves its own region only, as
// csi-digitalocean does (its nodes are there): another is
// ResourceExhausted, csi-digitalocean's answer.
func (p *Driver) regionFor(segment string) (string, error) {
	if segment == "" || segment == p.region {
		return p.region, nil
	}
	return "", status.Errorf(codes.ResourceExhausted, "volumes can only be created in region %q (the controller's), not %q", p.region, segment)
}

// toVolume is the framework's view of a DigitalOcean volume.
func toVolume(v *godo.Volume) *csi.Volume {
	out := &csi.Volume{ID: v.ID, Name: v.Name, SizeBytes: v.SizeGigaBytes * giB}
	if v.Region != nil {
		out.Segment = v.Region.Slug
	}
	for _, d := range v.DropletIDs {
		out.Nodes = append(out.Nodes, strconv.Itoa(d))
	}
	if snap, ok := strings.CutPrefix(v.Description, createdFromSnapshot); ok {
		out.Snapshot = snap
	}
	return out
}

// Create creates a volume (the framework has looked it up by name): in the
// segment's region, of the size asked for, restored from a snapshot when
// asked, tagged with the configured tag, described as csi-digitalocean
// describes its volumes (plus the snapshot's ID). One POST.
func (p *Driver) Create(ctx context.Context, req csi.CreateRequest) (*csi.Volume, error) {
	c, err := p.api()
	if err != nil {
		return nil, err
	}
	region, err := p.regionFor(req.Segment)
	if err != nil {
		return nil, err
	}
	gib := req.SizeBytes / giB
	create := &godo.VolumeCreateRequest{
		Region: region, Name: volumeName(req.Name), Description: createdByDO, SizeGigaBytes: gib, SnapshotID: req.Snapshot,
	}
	if req.Snapshot != "" {
		create.Description = createdFromSnapshot + req.Snapshot
	}
	if p.cfg.Tag != "" {
		create.Tags = []string{p.cfg.Tag}
	}
	vol, _, err := c.Storage.CreateVolume(ctx, create)
	if err != nil {
		switch {
		case has(err, http.StatusForbidden, msgCapacityLimit):
			return nil, status.Errorf(codes.ResourceExhausted, "the account's volume limit is reached: %s", apiMessage(err))
		case cloud.StatusOf(err) == http.StatusConflict:
			// Created since the lookup by name (another controller, a
			// retry): the retry finds it.
			return nil, csi.Pending("volume %s (%s) was created meanwhile", create.Name, req.Name)
		case req.Snapshot != "" && cloud.IsNotFound(err):
			return nil, orNotFound(err, "snapshot %s", req.Snapshot)
		}
		return nil, wrapAPI(err, "creating volume %s in %s", create.Name, region)
	}
	if vol.SizeGigaBytes < gib {
		// Restored at the snapshot's size: grow it to the size asked for
		// (csi-digitalocean does the same, and waits).
		if _, err := p.resize(ctx, c, vol.ID, vol.SizeGigaBytes, gib); err != nil && !errors.Is(err, csi.ErrPending) {
			return nil, err
		}
		vol.SizeGigaBytes = gib
	}
	return toVolume(vol), nil
}

// Get returns volume id: csi.ErrNotFound only when the API said so.
func (p *Driver) Get(ctx context.Context, id string) (*csi.Volume, error) {
	c, err := p.api()
	if err != nil {
		return nil, err
	}
	vol, _, err := c.Storage.GetVolume(ctx, pathID(id))
	if err != nil {
		return nil, orNotFound(err, "volume %s", id)
	}
	return toVolume(vol), nil
}

// withPendingSize reports a volume whose resize this controller started at
// its coming size, so that the retry of a CreateVolume that had to grow a
// restored volume finds it matching (GetByName only: Get shows the size
// the API shows, which ControllerExpandVolume compares).
func (p *Driver) withPendingSize(v *csi.Volume) *csi.Volume {
	if a, ok := p.action(v.ID); ok && a.kind == kindResize && a.sizeGiB*giB > v.SizeBytes {
		v.SizeBytes = a.sizeGiB * giB
	}
	return v
}

// GetByName returns the volume a CreateVolume named name made in the
// segment's region (the controller's when ""), nil when there is none.
// One GET (?name=&region=).
func (p *Driver) GetByName(ctx context.Context, name, segment string) (*csi.Volume, error) {
	c, err := p.api()
	if err != nil {
		return nil, err
	}
	region, err := p.regionFor(segment)
	if err != nil {
		return nil, err
	}
	doName := volumeName(name)
	vols, err := cloud.ListAll(ctx, "volumes", func(ctx context.Context, o *godo.ListOptions) ([]godo.Volume, *godo.Response, error) {
		return c.Storage.ListVolumes(ctx, &godo.ListVolumeParams{Name: doName, Region: region, ListOptions: o})
	})
	if err != nil {
		return nil, err
	}
	for i := range vols {
		// The API filters; a list that ignored the filter must not make
		// another volume this one.
		if vols[i].Name == doName && (vols[i].Region == nil || vols[i].Region.Slug == region) {
			return p.withPendingSize(toVolume(&vols[i])), nil
		}
	}
	return nil, nil //nolint:nilnil // the framework's "none"
}

// Delete deletes volume id: csi.ErrNotFound when the API says it is gone,
// csi.ErrInUse while it is attached, csi.ErrPending while an action runs
// on it. One DELETE.
func (p *Driver) Delete(ctx context.Context, id string) error {
	c, err := p.api()
	if err != nil {
		return err
	}
	if _, err := c.Storage.DeleteVolume(ctx, pathID(id)); err != nil {
		switch {
		case cloud.IsNotFound(err):
			p.forget(id)
			return orNotFound(err, "volume %s", id)
		case has(err, 0, msgAttachedDelete):
			return fmt.Errorf("volume %s: %w (the API: %s)", id, csi.ErrInUse, apiMessage(err))
		case has(err, http.StatusUnprocessableEntity, msgPendingEvent):
			return csi.Pending("volume %s has an action in progress", id)
		}
		return wrapAPI(err, "deleting volume %s", id)
	}
	p.forget(id)
	return nil
}

// ListVolumes lists the volumes of the controller's region, as
// csi-digitalocean does, DO_VOLUMES_PAGE_SIZE at a time.
func (p *Driver) ListVolumes(ctx context.Context) ([]*csi.Volume, error) {
	c, err := p.api()
	if err != nil {
		return nil, err
	}
	vols, err := cloud.ListAll(ctx, "volumes", func(ctx context.Context, o *godo.ListOptions) ([]godo.Volume, *godo.Response, error) {
		o.PerPage = p.cfg.PageSize
		return c.Storage.ListVolumes(ctx, &godo.ListVolumeParams{Region: p.region, ListOptions: o})
	})
	if err != nil {
		return nil, err
	}
	out := make([]*csi.Volume, 0, len(vols))
	for i := range vols {
		out = append(out, toVolume(&vols[i]))
	}
	return out, nil
}

// Expand grows volume id to bytes (the framework has rounded it to GiB and
// seen the volume smaller): csi.ErrPending while the resize action runs.
// One POST, or one GET of the resize this controller started.
func (p *Driver) Expand(ctx context.Context, id string, bytes int64) (int64, error) {
	c, err := p.api()
	if err != nil {
		return 0, err
	}
	return p.resize(ctx, c, id, 0, bytes/giB)
}

// resize grows volume id to gib GiB; from is its size when known (0 when
// not), for the answer of a resize someone else did.
func (p *Driver) resize(ctx context.Context, c *godo.Client, id string, from, gib int64) (int64, error) {
	if a, ok := p.action(id); ok && a.kind == kindResize {
		done, err := p.follow(ctx, c, id, a)
		switch {
		case err != nil:
			return 0, err
		case done && a.sizeGiB >= gib:
			return a.sizeGiB * giB, nil
		}
	}
	act, _, err := c.StorageActions.Resize(ctx, pathID(id), int(gib), p.region)
	if err != nil {
		switch {
		case cloud.IsNotFound(err):
			return 0, orNotFound(err, "volume %s", id)
		case has(err, http.StatusUnprocessableEntity, msgPendingEvent):
			return 0, csi.Pending("volume %s has an action in progress", id)
		case has(err, http.StatusUnprocessableEntity, msgOnlyUpwards):
			// Grown meanwhile (another resize): read its size.
			vol, _, gerr := c.Storage.GetVolume(ctx, pathID(id))
			if gerr != nil {
				return 0, orNotFound(gerr, "volume %s", id)
			}
			if vol.SizeGigaBytes >= gib {
				return vol.SizeGigaBytes * giB, nil
			}
		}
		return 0, wrapAPI(err, "resizing volume %s from %d to %d GiB", id, from, gib)
	}
	if err := p.started(id, act, volumeAction{kind: kindResize, sizeGiB: gib}); err != nil {
		return 0, err
	}
	return gib * giB, nil
}
