package csi

import (
	"context"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

type controller struct {
	csipb.UnimplementedControllerServer
	d *driver
}

func (s *controller) ControllerGetCapabilities(context.Context, *csipb.ControllerGetCapabilitiesRequest) (*csipb.ControllerGetCapabilitiesResponse, error) {
	rpcs := []csipb.ControllerServiceCapability_RPC_Type{
		csipb.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME,
		csipb.ControllerServiceCapability_RPC_GET_VOLUME,
	}
	attacher := !s.d.sharedFS()
	if attacher {
		rpcs = append(rpcs, csipb.ControllerServiceCapability_RPC_PUBLISH_UNPUBLISH_VOLUME)
	}
	if _, ok := s.d.lister(); ok {
		rpcs = append(rpcs, csipb.ControllerServiceCapability_RPC_LIST_VOLUMES)
		if attacher {
			rpcs = append(rpcs, csipb.ControllerServiceCapability_RPC_LIST_VOLUMES_PUBLISHED_NODES)
		}
	}
	if _, ok := s.d.expander(); ok {
		rpcs = append(rpcs, csipb.ControllerServiceCapability_RPC_EXPAND_VOLUME)
	}
	if _, ok := s.d.snapshotter(); ok {
		rpcs = append(rpcs, csipb.ControllerServiceCapability_RPC_CREATE_DELETE_SNAPSHOT,
			csipb.ControllerServiceCapability_RPC_LIST_SNAPSHOTS,
			csipb.ControllerServiceCapability_RPC_GET_SNAPSHOT)
	}
	caps := make([]*csipb.ControllerServiceCapability, 0, len(rpcs))
	for _, t := range rpcs {
		caps = append(caps, &csipb.ControllerServiceCapability{Type: &csipb.ControllerServiceCapability_Rpc{
			Rpc: &csipb.ControllerServiceCapability_RPC{Type: t}}})
	}
	return &csipb.ControllerGetCapabilitiesResponse{Capabilities: caps}, nil
}

// CreateVolume validates everything before any cloud call, then finds
// the volume by name (the request is retried with the same name until
// it succeeds) and creates it only when there is none.
func (s *controller) CreateVolume(ctx context.Context, req *csipb.CreateVolumeRequest) (*csipb.CreateVolumeResponse, error) {
	name := req.GetName()
	if name == "" {
		return nil, missing("name")
	}
	if err := s.d.checkCapabilities(req.GetVolumeCapabilities()); err != nil {
		return nil, err
	}
	multi := multiNode(req.GetVolumeCapabilities()...)
	if v, ok := s.d.opts.Provider.(ParameterValidator); ok {
		if err := v.ValidateParameters(req.GetParameters()); err != nil {
			return nil, invalid("parameters: %v", err)
		}
	}
	snapshotID, err := s.snapshotSource(req.GetVolumeContentSource())
	if err != nil {
		return nil, err
	}
	size, err := roundCapacity(req.GetCapacityRange(), s.d.limits)
	if err != nil {
		return nil, err
	}
	segment := chooseSegment(s.d.key, req.GetAccessibilityRequirements())

	release, err := s.d.locks.acquire("volume name", name)
	if err != nil {
		return nil, err
	}
	defer release()

	existing, err := s.d.opts.Provider.GetByName(ctx, name, segment)
	if err != nil {
		return nil, cloudError(err, "looking up volume %q", name)
	}
	if existing != nil {
		if !fitsRange(existing.SizeBytes, req.GetCapacityRange()) || existing.Snapshot != snapshotID || (multi && !existing.MultiNode) {
			return nil, status.Errorf(codes.AlreadyExists, "volume %q exists (%s, %s) and does not match the request",
				name, existing.ID, s.d.describeVolume(existing))
		}
		return &csipb.CreateVolumeResponse{Volume: s.d.csiVolume(existing)}, nil
	}
	if snapshotID != "" {
		if size, err = s.sizeForSnapshot(ctx, snapshotID, size, req.GetCapacityRange()); err != nil {
			return nil, err
		}
	}
	vol, err := s.d.opts.Provider.Create(ctx, CreateRequest{
		Name: name, SizeBytes: size, LimitBytes: req.GetCapacityRange().GetLimitBytes(), Segment: segment,
		Parameters: req.GetParameters(), Snapshot: snapshotID, MultiNode: multi,
	})
	if err != nil {
		return nil, cloudError(err, "creating volume %q", name)
	}
	return &csipb.CreateVolumeResponse{Volume: s.d.csiVolume(vol)}, nil
}

func (d *driver) describeVolume(v *Volume) string {
	desc := bytesString(v.SizeBytes)
	if v.Snapshot != "" {
		desc += ", from snapshot " + v.Snapshot
	}
	if !v.MultiNode && d.sharedFS() {
		desc += ", single-node"
	}
	return desc
}

// snapshotSource returns the snapshot a volume is restored from.
func (s *controller) snapshotSource(src *csipb.VolumeContentSource) (string, error) {
	if src == nil {
		return "", nil
	}
	snap := src.GetSnapshot()
	if snap == nil {
		return "", invalid("volume_content_source: only snapshots are supported")
	}
	if _, ok := s.d.snapshotter(); !ok {
		return "", invalid("volume_content_source: this driver has no snapshots")
	}
	if snap.GetSnapshotId() == "" {
		return "", missing("volume_content_source.snapshot.snapshot_id")
	}
	return snap.GetSnapshotId(), nil
}

// sizeForSnapshot checks the snapshot is there and ready, and grows size
// to hold it when the range allows.
func (s *controller) sizeForSnapshot(ctx context.Context, id string, size int64, r *csipb.CapacityRange) (int64, error) {
	sn, _ := s.d.snapshotter()
	snap, err := sn.GetSnapshot(ctx, id)
	if err != nil {
		return 0, cloudError(err, "volume_content_source: snapshot %q", id)
	}
	if !snap.Ready {
		return 0, status.Errorf(codes.Unavailable, "volume_content_source: snapshot %q is not ready yet", id)
	}
	if snap.SizeBytes <= size {
		return size, nil
	}
	grown := roundStep(snap.SizeBytes, s.d.limits.StepBytes)
	if (r.GetLimitBytes() > 0 && grown > r.GetLimitBytes()) || (s.d.limits.MaxBytes > 0 && grown > s.d.limits.MaxBytes) {
		return 0, status.Errorf(codes.OutOfRange, "capacity_range: snapshot %q needs %s", id, bytesString(snap.SizeBytes))
	}
	return grown, nil
}

func (d *driver) csiVolume(v *Volume) *csipb.Volume {
	out := &csipb.Volume{VolumeId: v.ID, CapacityBytes: v.SizeBytes, AccessibleTopology: d.accessible(v.Segment), VolumeContext: v.Context}
	if v.Snapshot != "" {
		out.ContentSource = &csipb.VolumeContentSource{Type: &csipb.VolumeContentSource_Snapshot{
			Snapshot: &csipb.VolumeContentSource_SnapshotSource{SnapshotId: v.Snapshot}}}
	}
	return out
}

func (s *controller) DeleteVolume(ctx context.Context, req *csipb.DeleteVolumeRequest) (*csipb.DeleteVolumeResponse, error) {
	id := req.GetVolumeId()
	if id == "" {
		return nil, missing("volume_id")
	}
	release, err := s.d.locks.acquire("volume", id)
	if err != nil {
		return nil, err
	}
	defer release()
	if err := s.d.opts.Provider.Delete(ctx, id); err != nil && !isNotFound(err) {
		return nil, cloudError(err, "deleting volume %s", id)
	}
	return &csipb.DeleteVolumeResponse{}, nil
}

func (s *controller) ControllerPublishVolume(ctx context.Context, req *csipb.ControllerPublishVolumeRequest) (*csipb.ControllerPublishVolumeResponse, error) {
	id, node := req.GetVolumeId(), req.GetNodeId()
	switch {
	case id == "":
		return nil, missing("volume_id")
	case node == "":
		return nil, missing("node_id")
	}
	a := s.d.attacher()
	if a == nil {
		return nil, status.Errorf(codes.Unimplemented, "%s volumes are shared filesystems: nothing is attached", s.d.name)
	}
	if err := s.d.checkCapability(req.GetVolumeCapability()); err != nil {
		return nil, err
	}
	release, err := s.d.locks.acquire("volume", id)
	if err != nil {
		return nil, err
	}
	defer release()
	pc, err := a.Attach(ctx, id, node)
	if err != nil {
		return nil, cloudError(err, "attaching volume %s to node %s", id, node)
	}
	return &csipb.ControllerPublishVolumeResponse{PublishContext: pc}, nil
}

// ControllerUnpublishVolume detaches a volume from a node, or from every
// node when node_id is empty; a volume or node that is gone is detached.
func (s *controller) ControllerUnpublishVolume(ctx context.Context, req *csipb.ControllerUnpublishVolumeRequest) (*csipb.ControllerUnpublishVolumeResponse, error) {
	id := req.GetVolumeId()
	if id == "" {
		return nil, missing("volume_id")
	}
	a := s.d.attacher()
	if a == nil {
		return nil, status.Errorf(codes.Unimplemented, "%s volumes are shared filesystems: nothing is attached", s.d.name)
	}
	release, err := s.d.locks.acquire("volume", id)
	if err != nil {
		return nil, err
	}
	defer release()
	nodes := []string{req.GetNodeId()}
	if req.GetNodeId() == "" {
		vol, err := s.d.opts.Provider.Get(ctx, id)
		if isNotFound(err) {
			return &csipb.ControllerUnpublishVolumeResponse{}, nil
		} else if err != nil {
			return nil, cloudError(err, "looking up volume %s", id)
		}
		nodes = vol.Nodes
	}
	for _, n := range nodes {
		if err := a.Detach(ctx, id, n); err != nil && !isNotFound(err) {
			return nil, cloudError(err, "detaching volume %s from node %s", id, n)
		}
	}
	return &csipb.ControllerUnpublishVolumeResponse{}, nil
}

func (s *controller) ValidateVolumeCapabilities(ctx context.Context, req *csipb.ValidateVolumeCapabilitiesRequest) (*csipb.ValidateVolumeCapabilitiesResponse, error) {
	id := req.GetVolumeId()
	switch {
	case id == "":
		return nil, missing("volume_id")
	case len(req.GetVolumeCapabilities()) == 0:
		return nil, missing("volume_capabilities")
	}
	vol, err := s.d.opts.Provider.Get(ctx, id)
	if err != nil {
		return nil, cloudError(err, "looking up volume %s", id)
	}
	if err := s.d.checkCapabilities(req.GetVolumeCapabilities()); err != nil {
		return &csipb.ValidateVolumeCapabilitiesResponse{Message: status.Convert(err).Message()}, nil
	}
	if multiNode(req.GetVolumeCapabilities()...) && !vol.MultiNode {
		return &csipb.ValidateVolumeCapabilitiesResponse{Message: "volume " + id + " is single-node: no multi-node access mode"}, nil
	}
	if v, ok := s.d.opts.Provider.(ParameterValidator); ok && len(req.GetParameters()) > 0 {
		if err := v.ValidateParameters(req.GetParameters()); err != nil {
			return &csipb.ValidateVolumeCapabilitiesResponse{Message: "parameters: " + err.Error()}, nil
		}
	}
	return &csipb.ValidateVolumeCapabilitiesResponse{Confirmed: &csipb.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeContext:      req.GetVolumeContext(),
		VolumeCapabilities: req.GetVolumeCapabilities(),
		Parameters:         req.GetParameters(),
	}}, nil
}

func (s *controller) ControllerGetVolume(ctx context.Context, req *csipb.ControllerGetVolumeRequest) (*csipb.ControllerGetVolumeResponse, error) {
	id := req.GetVolumeId()
	if id == "" {
		return nil, missing("volume_id")
	}
	vol, err := s.d.opts.Provider.Get(ctx, id)
	if err != nil {
		return nil, cloudError(err, "looking up volume %s", id)
	}
	return &csipb.ControllerGetVolumeResponse{
		Volume: s.d.csiVolume(vol),
		Status: &csipb.ControllerGetVolumeResponse_VolumeStatus{PublishedNodeIds: vol.Nodes},
	}, nil
}

// ControllerExpandVolume grows a volume, without a cloud write when it
// is as large already.
func (s *controller) ControllerExpandVolume(ctx context.Context, req *csipb.ControllerExpandVolumeRequest) (*csipb.ControllerExpandVolumeResponse, error) {
	id := req.GetVolumeId()
	switch {
	case id == "":
		return nil, missing("volume_id")
	case req.GetCapacityRange() == nil:
		return nil, missing("capacity_range")
	}
	e, ok := s.d.expander()
	if !ok {
		return nil, status.Error(codes.Unimplemented, "this driver does not expand volumes")
	}
	size, err := roundCapacity(req.GetCapacityRange(), s.d.limits)
	if err != nil {
		return nil, err
	}
	release, err := s.d.locks.acquire("volume", id)
	if err != nil {
		return nil, err
	}
	defer release()
	vol, err := s.d.opts.Provider.Get(ctx, id)
	if err != nil {
		return nil, cloudError(err, "looking up volume %s", id)
	}
	got := vol.SizeBytes
	if got < size {
		if got, err = e.Expand(ctx, id, size); err != nil {
			return nil, cloudError(err, "expanding volume %s to %s", id, bytesString(size))
		}
	}
	block := req.GetVolumeCapability().GetBlock() != nil
	return &csipb.ControllerExpandVolumeResponse{CapacityBytes: got, NodeExpansionRequired: !block}, nil
}
