package csidriver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"
	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/providers/openstack/internal/cloud"
)

// Cinder's volume statuses the driver acts on; every other one is an
// operation under way (creating, attaching, reserved, detaching,
// extending, deleting, downloading, uploading, retyping, backing-up,
// restoring-backup, maintenance, awaiting-transfer, ...), or a failure
// (error, error_deleting, error_extending, error_restoring, ...).
const (
	volumeAvailable = "available"
	volumeInUse     = "in-use"
	volumeAttaching = "attaching"
	volumeReserved  = "reserved"
	volumeDetaching = "detaching"
	volumeExtending = "extending"
	volumeDeleting  = "deleting"
)

// cinderVolume is the part of a Cinder volume the driver reads.
type cinderVolume struct {
	ID               string             `json:"id"`
	Name             string             `json:"name"`
	Status           string             `json:"status"`
	Size             int                `json:"size"`
	AvailabilityZone string             `json:"availability_zone"`
	SnapshotID       string             `json:"snapshot_id"`
	Multiattach      bool               `json:"multiattach"`
	Attachments      []cinderAttachment `json:"attachments"`
}

// cinderAttachment is one server a volume is attached to, as Cinder
// shows it.
type cinderAttachment struct {
	ServerID string `json:"server_id"`
	Device   string `json:"device"`
}

// validate rejects a volume Cinder never answers with: no UUID, no
// status, no size.
func (v *cinderVolume) validate() error {
	switch {
	case uuid.Validate(v.ID) != nil:
		return fmt.Errorf("malformed response: volume ID %q is not a UUID", truncate(v.ID, 40))
	case v.Status == "":
		return fmt.Errorf("malformed response: volume %s has no status", v.ID)
	case v.Size < 1:
		return fmt.Errorf("malformed response: volume %s has size %d", v.ID, v.Size)
	}
	for _, a := range v.Attachments {
		if a.ServerID == "" {
			return fmt.Errorf("malformed response: volume %s has an attachment without a server", v.ID)
		}
	}
	return nil
}

// attachment is the volume's attachment to server, if it has one.
func (v *cinderVolume) attachment(server string) (cinderAttachment, bool) {
	for _, a := range v.Attachments {
		if a.ServerID == server {
			return a, true
		}
	}
	return cinderAttachment{}, false
}

func (v *cinderVolume) servers() []string {
	out := make([]string, 0, len(v.Attachments))
	for _, a := range v.Attachments {
		out = append(out, a.ServerID)
	}
	return out
}

// failed reports whether a volume status is one of Cinder's error states.
func failed(status string) bool { return strings.HasPrefix(status, "error") }

// toVolume is the framework's view of a Cinder volume. Its segment is its
// availability zone, or, with [BlockStorage] ignore-volume-az, the zone
// it was asked for (asked, "" when not known), as cinder-csi-plugin
// reports it; none without topology.
func (p *Driver) toVolume(v *cinderVolume, asked string) *csi.Volume {
	out := &csi.Volume{ID: v.ID, Name: v.Name, SizeBytes: int64(v.Size) * giB, Nodes: v.servers(), Snapshot: v.SnapshotID}
	switch {
	case p.TopologyKey() == "":
	case p.cfg.BlockStorage.IgnoreVolumeAZ:
		out.Segment = asked
	default:
		out.Segment = v.AvailabilityZone
	}
	return out
}

// getVolume reads volume id: csi.ErrNotFound only when Cinder said so.
func getVolume(ctx context.Context, c *gophercloud.ServiceClient, id string) (*cinderVolume, error) {
	var v cinderVolume
	err := volumes.Get(cloudapi.WithOperation(ctx, "volumes.get"), c, pathID(id)).ExtractInto(&v)
	if err != nil {
		return nil, orNotFound(err, "volume %s", id)
	}
	if err := v.validate(); err != nil {
		return nil, err
	}
	return &v, nil
}

// listVolumes reads every page of Cinder's volume list (GET
// /volumes/detail), with query q.
func listVolumes(ctx context.Context, c *gophercloud.ServiceClient, q url.Values) ([]cinderVolume, error) {
	vols, err := cloud.ListAll[cinderVolume](cloudapi.WithOperation(ctx, "volumes.list"), c, cloud.WithQuery(c.ServiceURL("volumes", "detail"), q), "volumes")
	if err != nil {
		return nil, fmt.Errorf("listing volumes: %w", err)
	}
	for i := range vols {
		if err := vols[i].validate(); err != nil {
			return nil, err
		}
	}
	return vols, nil
}

// Create creates a volume (the framework has looked it up by name) as
// cinder-csi-plugin does: named by the CSI name, of the StorageClass's
// type, in its availability zone (else the topology's), restored from a
// snapshot when asked, described and tagged (metadata) as
// cinder-csi-plugin's volumes are. One POST; the volume is answered as
// Cinder is creating it: attaching it waits (ErrPending) until it is
// available.
func (p *Driver) Create(ctx context.Context, req csi.CreateRequest) (*csi.Volume, error) {
	c, _, err := p.api()
	if err != nil {
		return nil, err
	}
	zone := req.Parameters[paramAvailability]
	if zone == "" {
		zone = req.Segment
	}
	metadata := map[string]string{clusterMetadataKey: p.flags.cluster}
	for _, k := range csi.ProvisionerMetadataParams {
		if v, ok := req.Parameters[k]; ok {
			metadata[k] = v
		}
	}
	create := volumes.CreateOpts{
		Name: req.Name, Size: int(req.SizeBytes / giB), VolumeType: req.Parameters[paramType], AvailabilityZone: zone,
		SnapshotID: req.Snapshot, Description: createdByCinderCSI, Metadata: metadata,
	}
	var v cinderVolume
	err = volumes.Create(cloudapi.WithOperation(ctx, "volumes.create"), c, create, nil).ExtractInto(&v)
	if err != nil {
		return nil, createError(err, &create)
	}
	if err := v.validate(); err != nil {
		return nil, err
	}
	return p.toVolume(&v, req.Segment), nil
}

// createError answers a refused volume create: over quota is
// ResourceExhausted, a bad parameter InvalidArgument naming it, a
// snapshot Cinder does not know NotFound.
func createError(err error, create *volumes.CreateOpts) error {
	var a *cloud.APIError
	if !errors.As(cloud.ServiceError(err), &a) {
		return fmt.Errorf("creating volume %s: %w", create.Name, err)
	}
	msg := strings.ToLower(a.Message)
	switch {
	case a.Status == http.StatusRequestEntityTooLarge, strings.Contains(msg, "quota"):
		return status.Errorf(codes.ResourceExhausted, "creating volume %s: the project's quota is exceeded: %s", create.Name, a.Message)
	case a.Status == http.StatusNotFound && create.SnapshotID != "" && strings.Contains(msg, "snapshot"):
		return &notFoundError{what: "snapshot " + create.SnapshotID, kind: csi.ErrNotFound, err: a}
	case a.Status == http.StatusNotFound && create.VolumeType != "" && strings.Contains(msg, "type"):
		return status.Errorf(codes.InvalidArgument, "parameters: %s %q: Cinder: %s", paramType, create.VolumeType, a.Message)
	case a.Status == http.StatusBadRequest && create.AvailabilityZone != "" && strings.Contains(msg, "availability zone"):
		return status.Errorf(codes.InvalidArgument, "availability zone %q (the %s parameter, or the topology's): Cinder: %s",
			create.AvailabilityZone, paramAvailability, a.Message)
	case a.Status == http.StatusBadRequest:
		return status.Errorf(codes.InvalidArgument, "creating volume %s: Cinder: %s", create.Name, a.Message)
	}
	return fmt.Errorf("creating volume %s: %w", create.Name, a)
}

// Get returns volume id: csi.ErrNotFound only when Cinder said so.
func (p *Driver) Get(ctx context.Context, id string) (*csi.Volume, error) {
	c, _, err := p.api()
	if err != nil {
		return nil, err
	}
	v, err := getVolume(ctx, c, id)
	if err != nil {
		return nil, err
	}
	return p.toVolume(v, ""), nil
}

// GetByName returns the volume named name, nil when there is none. Like
// cinder-csi-plugin it lists the project's volumes filtered by name
// (microversion 3.34, unless [BlockStorage] ignore-volume-microversion),
// whatever their zone, and two with the name are an error.
func (p *Driver) GetByName(ctx context.Context, name, segment string) (*csi.Volume, error) {
	c, _, err := p.api()
	if err != nil {
		return nil, err
	}
	if !p.cfg.BlockStorage.IgnoreVolumeMicroversion {
		c = withMicroversion(c, volumeListFilterMicroversion)
	}
	vols, err := listVolumes(ctx, c, url.Values{"name": {name}})
	if err != nil {
		return nil, err
	}
	var found []*cinderVolume
	for i := range vols {
		// Cinder filters; a list that ignored the filter must not make
		// another volume this one.
		if vols[i].Name == name {
			found = append(found, &vols[i])
		}
	}
	switch len(found) {
	case 0:
		return nil, nil //nolint:nilnil // the framework's "none"
	case 1:
		return p.toVolume(found[0], segment), nil
	}
	return nil, fmt.Errorf("%d Cinder volumes are named %q (%s and %s): delete the one that is not in use", len(found), name, found[0].ID, found[1].ID)
}

// Delete deletes volume id as cinder-csi-plugin does, once it is
// detached: csi.ErrNotFound when Cinder says it is gone; csi.ErrInUse
// while it is attached; csi.ErrPending while Cinder is working on it,
// deleting it included (so the volume is gone, not only going, when the
// PersistentVolume goes). One GET, one DELETE, one GET; a retry while
// Cinder deletes, one GET.
func (p *Driver) Delete(ctx context.Context, id string) error {
	c, _, err := p.api()
	if err != nil {
		return err
	}
	v, err := getVolume(ctx, c, id)
	if err != nil {
		return err
	}
	switch {
	case len(v.Attachments) > 0:
		return fmt.Errorf("volume %s is attached to server %s: %w", id, v.Attachments[0].ServerID, csi.ErrInUse)
	case v.Status == volumeDeleting:
		return csi.Pending("Cinder is deleting volume %s", id)
	case v.Status != volumeAvailable && !failed(v.Status):
		return csi.Pending("volume %s is %s", id, v.Status)
	}
	err = volumes.Delete(cloudapi.WithOperation(ctx, "volumes.delete"), c, pathID(id), nil).ExtractErr()
	switch {
	case cloud.IsAPINotFound(err):
		return orNotFound(err, "volume %s", id)
	case isStatus(err, http.StatusBadRequest):
		return refusedDelete(ctx, c, id, err)
	case err != nil:
		return wrapAPI(err, "deleting volume %s", id)
	}
	return deleted(ctx, c, id)
}

// refusedDelete answers Cinder's 400 for deleting volume id. Its one
// message covers every reason ("Volume status must be available or error
// ... and must not be migrating, attached, belong to a group, have
// snapshots, awaiting a transfer ..."): the volume's snapshots, the
// common one, are looked up. A volume with snapshots is FailedPrecondition,
// as CSI has it for snapshots that are not independent of their volume:
// the provisioner retries the delete until the VolumeSnapshots are gone
// (never cascade: they hold data).
func refusedDelete(ctx context.Context, c *gophercloud.ServiceClient, id string, err error) error {
	snaps, lerr := listSnapshots(ctx, c, url.Values{"volume_id": {id}})
	switch {
	case lerr != nil:
		return fmt.Errorf("deleting volume %s: %w; listing its snapshots: %w", id, cloud.ServiceError(err), lerr)
	case len(snaps) > 0:
		return status.Errorf(codes.FailedPrecondition, "volume %s has %d snapshots (%s ...): delete its VolumeSnapshots first", id, len(snaps), snaps[0].ID)
	}
	return status.Errorf(codes.FailedPrecondition, "Cinder refuses to delete volume %s: %v", id, cloud.ServiceError(err))
}

// deleted reads volume id after its DELETE: nil once Cinder says it is
// gone, csi.ErrPending while it is deleting.
func deleted(ctx context.Context, c *gophercloud.ServiceClient, id string) error {
	v, err := getVolume(ctx, c, id)
	switch {
	case errors.Is(err, csi.ErrNotFound):
		return nil
	case err != nil:
		return err
	case failed(v.Status):
		return fmt.Errorf("Cinder failed to delete volume %s: its status is %s", id, v.Status) //nolint:staticcheck // Cinder is a name
	}
	return csi.Pending("Cinder is deleting volume %s (%s)", id, v.Status)
}

// ListVolumes lists the project's volumes, as cinder-csi-plugin does.
func (p *Driver) ListVolumes(ctx context.Context) ([]*csi.Volume, error) {
	c, _, err := p.api()
	if err != nil {
		return nil, err
	}
	vols, err := listVolumes(ctx, c, nil)
	if err != nil {
		return nil, err
	}
	out := make([]*csi.Volume, 0, len(vols))
	for i := range vols {
		out = append(out, p.toVolume(&vols[i], ""))
	}
	return out, nil
}

// Expand grows volume id to bytes (the framework has rounded it to GiB and
// seen the volume smaller) with os-extend: a detached volume as it is, an
// attached one with microversion 3.42 (not with [BlockStorage]
// ignore-volume-microversion, as cinder-csi-plugin); csi.ErrPending while
// Cinder extends it (or works on it otherwise). One GET, one POST, one
// GET; a retry while Cinder extends, one GET.
func (p *Driver) Expand(ctx context.Context, id string, bytes int64) (int64, error) {
	c, _, err := p.api()
	if err != nil {
		return 0, err
	}
	gib := int(bytes / giB)
	v, err := getVolume(ctx, c, id)
	if err != nil {
		return 0, err
	}
	switch {
	case v.Size >= gib:
		return int64(v.Size) * giB, nil
	case v.Status == volumeInUse && p.cfg.BlockStorage.IgnoreVolumeMicroversion:
		return 0, status.Errorf(codes.FailedPrecondition, "volume %s is attached: expanding it needs Cinder microversion %s, "+
			"which [BlockStorage] ignore-volume-microversion = true rules out; detach it first", id, volumeOnlineExtendMicroversion)
	case v.Status == volumeInUse:
		c = withMicroversion(c, volumeOnlineExtendMicroversion)
	case v.Status == volumeAvailable:
	case failed(v.Status):
		return 0, fmt.Errorf("volume %s cannot be expanded: its status is %s", id, v.Status)
	default:
		return 0, csi.Pending("volume %s is %s", id, v.Status)
	}
	err = volumes.ExtendSize(cloudapi.WithOperation(ctx, "volumes.extend"), c, pathID(id), volumes.ExtendSizeOpts{NewSize: gib}).ExtractErr()
	switch {
	case cloud.IsAPINotFound(err):
		return 0, orNotFound(err, "volume %s", id)
	case has(err, http.StatusBadRequest, msgStatusMust):
		return 0, csi.Pending("volume %s changed state (Cinder: %s)", id, cloud.ServiceError(err))
	case err != nil:
		return 0, wrapAPI(err, "extending volume %s from %d to %d GiB", id, v.Size, gib)
	}
	if v, err = getVolume(ctx, c, id); err != nil {
		return 0, err
	}
	if v.Size >= gib {
		return int64(v.Size) * giB, nil
	}
	if failed(v.Status) {
		return 0, fmt.Errorf("Cinder failed to extend volume %s to %d GiB: its status is %s", id, gib, v.Status) //nolint:staticcheck // Cinder is a name
	}
	return 0, csi.Pending("Cinder is extending volume %s to %d GiB (%s)", id, gib, v.Status)
}

// truncate shortens s, from a request or an answer, for an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
