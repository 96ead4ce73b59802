package csidriver

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/digitalocean/godo"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/providers/digitalocean/internal/cloud"
)

// volumeSnapshot is the API's resource_type of a volume's snapshot (a
// droplet's is "droplet").
const volumeSnapshot = "volume"

// toSnapshot is the framework's view of a volume snapshot, as
// csi-digitalocean reports it: its size is min_disk_size (the volume's),
// and it is ready at once (the API answers the create when it is taken).
func toSnapshot(s *godo.Snapshot) *csi.Snapshot {
	out := &csi.Snapshot{ID: s.ID, Name: s.Name, Source: s.ResourceID, SizeBytes: int64(s.MinDiskSize) * giB, Ready: true}
	if t, err := time.Parse(time.RFC3339, s.Created); err == nil {
		out.CreatedUnix = t.Unix()
	}
	return out
}

// CreateSnapshot snapshots volume source as name (the framework has looked
// the name up), tagged with the configured tag. One POST.
func (p *Driver) CreateSnapshot(ctx context.Context, source, name string) (*csi.Snapshot, error) {
	c, err := p.api()
	if err != nil {
		return nil, err
	}
	req := &godo.SnapshotCreateRequest{VolumeID: source, Name: name, Description: createdByDO}
	if p.cfg.Tag != "" {
		req.Tags = []string{p.cfg.Tag}
	}
	// godo puts VolumeID in the path as it is.
	req.VolumeID = pathID(source)
	snap, _, err := c.Storage.CreateSnapshot(ctx, req)
	if err != nil {
		switch {
		case cloud.IsNotFound(err):
			return nil, orNotFound(err, "volume %s", source)
		case cloud.StatusOf(err) == http.StatusConflict:
			// Taken since the lookup by name: the retry finds it.
			return nil, csi.Pending("snapshot %q was created meanwhile", name)
		}
		return nil, wrapAPI(err, "snapshotting volume %s as %q", source, name)
	}
	return toSnapshot(snap), nil
}

// volumeSnapshots lists the volume snapshots of the controller's region
// (where its volumes are), every page.
func (p *Driver) volumeSnapshots(ctx context.Context, c *godo.Client) ([]godo.Snapshot, error) {
	return listSnapshotPages(ctx, func(ctx context.Context, o *godo.ListOptions) ([]godo.Snapshot, *godo.Response, error) {
		o.PerPage = p.cfg.PageSize
		return c.Snapshots.ListVolumeSnapshotByRegion(ctx, p.region, o)
	})
}

// listSnapshotPages reads every page of a /v2/snapshots list, following
// links.pages.next. godo's SnapshotsService drops the answer's meta, so
// unlike cloud.ListAll it cannot check meta.total; a failed page fails the
// whole list all the same.
func listSnapshotPages(ctx context.Context, list func(context.Context, *godo.ListOptions) ([]godo.Snapshot, *godo.Response, error)) ([]godo.Snapshot, error) {
	all, err := cloudapi.Pager[godo.Snapshot]{
		Start:    cloudapi.PageNumber(1),
		MaxPages: cloud.MaxListPages,
		Fetch: func(ctx context.Context, at cloudapi.Cursor) ([]godo.Snapshot, cloudapi.Cursor, error) {
			page, resp, err := list(ctx, &godo.ListOptions{Page: at.Page(), PerPage: cloud.ListPageSize})
			if err != nil {
				return nil, at, err
			}
			more := resp != nil && resp.Links != nil && !resp.Links.IsLastPage()
			return page, at.NextPage(more), nil
		},
	}.All(cloudapi.WithOperation(ctx, "snapshots.list"))
	if err != nil {
		return nil, fmt.Errorf("listing snapshots: %w", err)
	}
	return all, nil
}

// SnapshotByName returns the volume snapshot called name, nil when there is
// none. The API finds snapshots by ID only: this lists the region's
// volume snapshots.
func (p *Driver) SnapshotByName(ctx context.Context, name string) (*csi.Snapshot, error) {
	c, err := p.api()
	if err != nil {
		return nil, err
	}
	snaps, err := p.volumeSnapshots(ctx, c)
	if err != nil {
		return nil, err
	}
	for i := range snaps {
		if snaps[i].Name == name && snaps[i].ResourceType == volumeSnapshot {
			return toSnapshot(&snaps[i]), nil
		}
	}
	return nil, nil //nolint:nilnil // the framework's "none"
}

// getVolumeSnapshot reads snapshot id: csi.ErrNotFound when the API says
// there is none, or that it is a droplet's snapshot (no volume snapshot
// of this driver has its ID).
func (p *Driver) getVolumeSnapshot(ctx context.Context, c *godo.Client, id string) (*godo.Snapshot, error) {
	snap, _, err := c.Snapshots.Get(ctx, pathID(id))
	if err != nil {
		return nil, orNotFound(err, "snapshot %s", id)
	}
	if snap.ResourceType != volumeSnapshot {
		return nil, fmt.Errorf("snapshot %s is a %s snapshot, not a volume's: %w", id, snap.ResourceType, csi.ErrNotFound)
	}
	return snap, nil
}

// GetSnapshot returns volume snapshot id.
func (p *Driver) GetSnapshot(ctx context.Context, id string) (*csi.Snapshot, error) {
	c, err := p.api()
	if err != nil {
		return nil, err
	}
	snap, err := p.getVolumeSnapshot(ctx, c, id)
	if err != nil {
		return nil, err
	}
	return toSnapshot(snap), nil
}

// DeleteSnapshot deletes volume snapshot id. It reads the snapshot first:
// DELETE /v2/snapshots/{id} deletes a droplet's snapshot just as well,
// and a CSI request must never delete one. Two calls.
func (p *Driver) DeleteSnapshot(ctx context.Context, id string) error {
	c, err := p.api()
	if err != nil {
		return err
	}
	if _, err := p.getVolumeSnapshot(ctx, c, id); err != nil {
		return err
	}
	if _, err := c.Snapshots.Delete(ctx, pathID(id)); err != nil {
		return orNotFound(err, "snapshot %s", id)
	}
	return nil
}

// ListSnapshots lists the volume snapshots of volume source, or of the
// controller's region when source is "".
func (p *Driver) ListSnapshots(ctx context.Context, source string) ([]*csi.Snapshot, error) {
	c, err := p.api()
	if err != nil {
		return nil, err
	}
	var snaps []godo.Snapshot
	if source == "" {
		snaps, err = p.volumeSnapshots(ctx, c)
	} else {
		snaps, err = cloud.ListAll(ctx, "volume snapshots", func(ctx context.Context, o *godo.ListOptions) ([]godo.Snapshot, *godo.Response, error) {
			o.PerPage = p.cfg.PageSize
			return c.Storage.ListSnapshots(ctx, pathID(source), o)
		})
		if cloud.IsNotFound(err) {
			return nil, orNotFound(err, "volume %s", source)
		}
	}
	if err != nil {
		return nil, err
	}
	out := make([]*csi.Snapshot, 0, len(snaps))
	for i := range snaps {
		if snaps[i].ResourceType == volumeSnapshot || snaps[i].ResourceType == "" {
			out = append(out, toSnapshot(&snaps[i]))
		}
	}
	return out, nil
}
