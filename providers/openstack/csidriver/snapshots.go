package csidriver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/snapshots"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/providers/openstack/internal/cloud"
)

// Cinder's snapshot statuses the driver acts on (others: creating,
// deleting, error, error_deleting, ...).
const (
	snapshotAvailable = "available"
	snapshotDeleting  = "deleting"
)

// cinderSnapshot is the part of a Cinder snapshot the driver reads.
type cinderSnapshot struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	VolumeID  string `json:"volume_id"`
	Size      int    `json:"size"`
	CreatedAt string `json:"created_at"`
}

func (s *cinderSnapshot) validate() error {
	switch {
	case uuid.Validate(s.ID) != nil:
		return fmt.Errorf("malformed response: snapshot ID %q is not a UUID", truncate(s.ID, 40))
	case s.Status == "":
		return fmt.Errorf("malformed response: snapshot %s has no status", s.ID)
	case s.VolumeID == "":
		return fmt.Errorf("malformed response: snapshot %s has no volume", s.ID)
	case s.Size < 1:
		return fmt.Errorf("malformed response: snapshot %s has size %d", s.ID, s.Size)
	}
	return nil
}

// Cinder's timestamps: ISO 8601, with microseconds and without a zone
// (UTC) in most releases.
var snapshotTimeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05"}

// toSnapshot is the framework's view of a Cinder snapshot: ready when it
// is available (cinder-csi-plugin waits for that; this driver answers
// and csi-snapshotter asks again).
func toSnapshot(s *cinderSnapshot) *csi.Snapshot {
	out := &csi.Snapshot{ID: s.ID, Name: s.Name, Source: s.VolumeID, SizeBytes: int64(s.Size) * giB, Ready: s.Status == snapshotAvailable}
	for _, layout := range snapshotTimeLayouts {
		if t, err := time.Parse(layout, s.CreatedAt); err == nil {
			out.CreatedUnix = t.Unix()
			break
		}
	}
	return out
}

// getSnapshot reads snapshot id: csi.ErrNotFound only when Cinder said so.
func getSnapshot(ctx context.Context, c *gophercloud.ServiceClient, id string) (*cinderSnapshot, error) {
	var s cinderSnapshot
	err := snapshots.Get(cloudapi.WithOperation(ctx, "snapshots.get"), c, pathID(id)).ExtractIntoStructPtr(&s, "snapshot")
	if err != nil {
		return nil, orNotFound(err, "snapshot %s", id)
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// listSnapshots reads every page of Cinder's snapshot list (GET
// /snapshots/detail), with query q.
func listSnapshots(ctx context.Context, c *gophercloud.ServiceClient, q url.Values) ([]cinderSnapshot, error) {
	snaps, err := cloud.ListAll[cinderSnapshot](cloudapi.WithOperation(ctx, "snapshots.list"), c, cloud.WithQuery(c.ServiceURL("snapshots", "detail"), q), "snapshots")
	if err != nil {
		return nil, fmt.Errorf("listing snapshots: %w", err)
	}
	for i := range snaps {
		if err := snaps[i].validate(); err != nil {
			return nil, err
		}
	}
	return snaps, nil
}

// CreateSnapshot snapshots volume source as name, with no
// VolumeSnapshotClass parameters.
func (p *Driver) CreateSnapshot(ctx context.Context, source, name string) (*csi.Snapshot, error) {
	return p.CreateSnapshotWithParameters(ctx, source, name, nil)
}

// CreateSnapshotWithParameters snapshots volume source as name (the
// framework has looked the name up and checked params), as
// cinder-csi-plugin does: forced with force-create, described and tagged
// (metadata) as its snapshots are. One POST; the snapshot is answered
// not ready while Cinder is creating it, and csi-snapshotter asks again.
func (p *Driver) CreateSnapshotWithParameters(ctx context.Context, source, name string, params map[string]string) (*csi.Snapshot, error) {
	c, _, err := p.api()
	if err != nil {
		return nil, err
	}
	force, _ := strconv.ParseBool(params[paramForceCreate]) // checked by ValidateSnapshotParameters
	metadata := map[string]string{clusterMetadataKey: p.flags.cluster}
	for _, k := range csi.SnapshotterMetadataParams {
		if v, ok := params[k]; ok {
			metadata[k] = v
		}
	}
	create := snapshots.CreateOpts{VolumeID: source, Name: name, Description: createdByCinderCSI, Force: force, Metadata: metadata}
	var s cinderSnapshot
	ctx = cloudapi.WithOperation(ctx, "snapshots.create")
	// From microversion 3.66 Cinder snapshots an attached volume without
	// force: a PVC in use is snapshotted (crash-consistent, as on every
	// cloud) whatever force-create says. cinder-csi-plugin asks for no
	// microversion, so there force-create: "false" fails for a volume in
	// use. A cloud older than 3.66 (before Xena) answers 406, and is asked
	// again without it, once per process.
	plain := p.cfg.BlockStorage.IgnoreVolumeMicroversion || p.noInUseSnapshots.Load()
	if !plain {
		err = snapshots.Create(ctx, withMicroversion(c, snapshotInUseMicroversion), create).ExtractIntoStructPtr(&s, "snapshot")
		if plain = isStatus(err, http.StatusNotAcceptable); plain {
			p.noInUseSnapshots.Store(true)
		}
	}
	if plain {
		err = snapshots.Create(ctx, c, create).ExtractIntoStructPtr(&s, "snapshot")
	}
	switch {
	case cloud.IsAPINotFound(err):
		return nil, orNotFound(err, "volume %s", source)
	case has(err, http.StatusBadRequest, msgStatusMust) && !force:
		return nil, status.Errorf(codes.FailedPrecondition, "volume %s cannot be snapshotted now (set %s: \"true\" in the VolumeSnapshotClass to snapshot an attached volume): %v",
			source, paramForceCreate, cloud.ServiceError(err))
	case has(err, http.StatusBadRequest, msgStatusMust):
		return nil, csi.Pending("volume %s cannot be snapshotted now: %v", source, cloud.ServiceError(err))
	case isStatus(err, http.StatusRequestEntityTooLarge):
		return nil, status.Errorf(codes.ResourceExhausted, "snapshotting volume %s: the project's quota is exceeded: %v", source, cloud.ServiceError(err))
	case err != nil:
		return nil, wrapAPI(err, "snapshotting volume %s as %q", source, name)
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	return toSnapshot(&s), nil
}

// SnapshotByName returns the snapshot called name, nil when there is
// none; one that Cinder failed to make is an error (delete the
// VolumeSnapshot, take another), as cinder-csi-plugin's wait ends in
// one.
func (p *Driver) SnapshotByName(ctx context.Context, name string) (*csi.Snapshot, error) {
	c, _, err := p.api()
	if err != nil {
		return nil, err
	}
	snaps, err := listSnapshots(ctx, c, url.Values{"name": {name}})
	if err != nil {
		return nil, err
	}
	var found []*cinderSnapshot
	for i := range snaps {
		if snaps[i].Name == name {
			found = append(found, &snaps[i])
		}
	}
	switch {
	case len(found) == 0:
		return nil, nil //nolint:nilnil // the framework's "none"
	case len(found) > 1:
		return nil, fmt.Errorf("%d Cinder snapshots are named %q (%s and %s)", len(found), name, found[0].ID, found[1].ID)
	case failed(found[0].Status):
		return nil, fmt.Errorf("Cinder failed to take snapshot %q (%s) of volume %s: its status is %s", //nolint:staticcheck // Cinder is a name
			name, found[0].ID, found[0].VolumeID, found[0].Status)
	}
	return toSnapshot(found[0]), nil
}

// GetSnapshot returns snapshot id.
func (p *Driver) GetSnapshot(ctx context.Context, id string) (*csi.Snapshot, error) {
	c, _, err := p.api()
	if err != nil {
		return nil, err
	}
	s, err := getSnapshot(ctx, c, id)
	if err != nil {
		return nil, err
	}
	return toSnapshot(s), nil
}

// DeleteSnapshot deletes snapshot id: csi.ErrNotFound when Cinder says it
// is gone, csi.ErrPending while Cinder is deleting it (so it is gone,
// not only going, when the VolumeSnapshotContent goes). One GET, one
// DELETE, one GET; a retry while Cinder deletes, one GET.
func (p *Driver) DeleteSnapshot(ctx context.Context, id string) error {
	c, _, err := p.api()
	if err != nil {
		return err
	}
	s, err := getSnapshot(ctx, c, id)
	if err != nil {
		return err
	}
	switch {
	case s.Status == snapshotDeleting:
		return csi.Pending("Cinder is deleting snapshot %s", id)
	case s.Status != snapshotAvailable && !failed(s.Status):
		return csi.Pending("snapshot %s is %s", id, s.Status)
	}
	err = snapshots.Delete(cloudapi.WithOperation(ctx, "snapshots.delete"), c, pathID(id)).ExtractErr()
	switch {
	case cloud.IsAPINotFound(err):
		return orNotFound(err, "snapshot %s", id)
	case isStatus(err, http.StatusBadRequest):
		// Cinder refuses a snapshot that is busy, or has volumes made
		// from it (on some backends).
		return status.Errorf(codes.FailedPrecondition, "deleting snapshot %s: %v", id, cloud.ServiceError(err))
	case err != nil:
		return wrapAPI(err, "deleting snapshot %s", id)
	}
	s, err = getSnapshot(ctx, c, id)
	switch {
	case errors.Is(err, csi.ErrNotFound):
		return nil
	case err != nil:
		return err
	case failed(s.Status):
		return fmt.Errorf("Cinder failed to delete snapshot %s: its status is %s", id, s.Status) //nolint:staticcheck // Cinder is a name
	}
	return csi.Pending("Cinder is deleting snapshot %s (%s)", id, s.Status)
}

// ListSnapshots lists the project's snapshots, of volume source when not
// "".
func (p *Driver) ListSnapshots(ctx context.Context, source string) ([]*csi.Snapshot, error) {
	c, _, err := p.api()
	if err != nil {
		return nil, err
	}
	var q url.Values
	if source != "" {
		q = url.Values{"volume_id": {source}}
	}
	snaps, err := listSnapshots(ctx, c, q)
	if err != nil {
		return nil, err
	}
	out := make([]*csi.Snapshot, 0, len(snaps))
	for i := range snaps {
		if source == "" || snaps[i].VolumeID == source {
			out = append(out, toSnapshot(&snaps[i]))
		}
	}
	return out, nil
}
