package csi

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// ListVolumes pages through the provider's volumes, sorted by ID; a
// starting_token is the index of the next entry.
func (s *controller) ListVolumes(ctx context.Context, req *csipb.ListVolumesRequest) (*csipb.ListVolumesResponse, error) {
	l, ok := s.d.lister()
	if !ok {
		return nil, status.Error(codes.Unimplemented, "this driver does not list volumes")
	}
	vols, err := l.ListVolumes(ctx)
	if err != nil {
		return nil, cloudError(err, "listing volumes")
	}
	slices.SortFunc(vols, func(a, b *Volume) int { return strings.Compare(a.ID, b.ID) })
	page, next, err := paginate(vols, req.GetStartingToken(), req.GetMaxEntries())
	if err != nil {
		return nil, err
	}
	out := &csipb.ListVolumesResponse{NextToken: next}
	for _, v := range page {
		out.Entries = append(out.Entries, &csipb.ListVolumesResponse_Entry{
			Volume: s.d.csiVolume(v),
			Status: &csipb.ListVolumesResponse_VolumeStatus{PublishedNodeIds: v.Nodes},
		})
	}
	return out, nil
}

// paginate returns the page of items that starts at token (an index;
// anything else answers Aborted, as the spec asks) and holds at most max
// (0: all), and the token of the next page ("" after the last).
func paginate[T any](items []T, token string, maxEntries int32) ([]T, string, error) {
	if maxEntries < 0 {
		return nil, "", invalid("max_entries must not be negative")
	}
	start := 0
	if token != "" {
		n, err := strconv.Atoi(token)
		if err != nil || n < 0 || n > len(items) {
			return nil, "", status.Errorf(codes.Aborted, "starting_token %q is not valid (anymore)", token)
		}
		start = n
	}
	end := len(items)
	if maxEntries > 0 && start+int(maxEntries) < end {
		end = start + int(maxEntries)
	}
	next := ""
	if end < len(items) {
		next = strconv.Itoa(end)
	}
	return items[start:end], next, nil
}

func (s *controller) snapshots() (Snapshotter, error) {
	sn, ok := s.d.snapshotter()
	if !ok {
		return nil, status.Error(codes.Unimplemented, "this driver has no snapshots")
	}
	return sn, nil
}

// CreateSnapshot finds the snapshot by name first, as CreateVolume does.
func (s *controller) CreateSnapshot(ctx context.Context, req *csipb.CreateSnapshotRequest) (*csipb.CreateSnapshotResponse, error) {
	sn, err := s.snapshots()
	if err != nil {
		return nil, err
	}
	name, source := req.GetName(), req.GetSourceVolumeId()
	switch {
	case name == "":
		return nil, missing("name")
	case source == "":
		return nil, missing("source_volume_id")
	}
	withParams, _ := sn.(SnapshotParameters)
	if withParams != nil {
		if err := withParams.ValidateSnapshotParameters(req.GetParameters()); err != nil {
			return nil, invalid("parameters: %v", err)
		}
	}
	release, err := s.d.locks.acquire("snapshot name", name)
	if err != nil {
		return nil, err
	}
	defer release()
	snap, err := sn.SnapshotByName(ctx, name)
	if err != nil {
		return nil, cloudError(err, "looking up snapshot %q", name)
	}
	if snap != nil && snap.Source != source {
		return nil, status.Errorf(codes.AlreadyExists, "snapshot %q exists (%s) of another volume, %s", name, snap.ID, snap.Source)
	}
	if snap == nil {
		if withParams != nil {
			snap, err = withParams.CreateSnapshotWithParameters(ctx, source, name, req.GetParameters())
		} else {
			snap, err = sn.CreateSnapshot(ctx, source, name)
		}
		if err != nil {
			return nil, cloudError(err, "creating snapshot %q of volume %s", name, source)
		}
	}
	return &csipb.CreateSnapshotResponse{Snapshot: csiSnapshot(snap)}, nil
}

func csiSnapshot(s *Snapshot) *csipb.Snapshot {
	out := &csipb.Snapshot{SnapshotId: s.ID, SourceVolumeId: s.Source, SizeBytes: s.SizeBytes, ReadyToUse: s.Ready}
	if s.CreatedUnix > 0 {
		out.CreationTime = timestamppb.New(time.Unix(s.CreatedUnix, 0))
	}
	return out
}

func (s *controller) DeleteSnapshot(ctx context.Context, req *csipb.DeleteSnapshotRequest) (*csipb.DeleteSnapshotResponse, error) {
	sn, err := s.snapshots()
	if err != nil {
		return nil, err
	}
	id := req.GetSnapshotId()
	if id == "" {
		return nil, missing("snapshot_id")
	}
	release, err := s.d.locks.acquire("snapshot", id)
	if err != nil {
		return nil, err
	}
	defer release()
	if err := sn.DeleteSnapshot(ctx, id); err != nil && !isNotFound(err) {
		return nil, cloudError(err, "deleting snapshot %s", id)
	}
	return &csipb.DeleteSnapshotResponse{}, nil
}

func (s *controller) GetSnapshot(ctx context.Context, req *csipb.GetSnapshotRequest) (*csipb.GetSnapshotResponse, error) {
	sn, err := s.snapshots()
	if err != nil {
		return nil, err
	}
	id := req.GetSnapshotId()
	if id == "" {
		return nil, missing("snapshot_id")
	}
	snap, err := sn.GetSnapshot(ctx, id)
	if err != nil {
		return nil, cloudError(err, "looking up snapshot %s", id)
	}
	return &csipb.GetSnapshotResponse{Snapshot: csiSnapshot(snap)}, nil
}

// ListSnapshots lists one snapshot by ID, a volume's, or all, in pages.
func (s *controller) ListSnapshots(ctx context.Context, req *csipb.ListSnapshotsRequest) (*csipb.ListSnapshotsResponse, error) {
	sn, err := s.snapshots()
	if err != nil {
		return nil, err
	}
	var snaps []*Snapshot
	if id := req.GetSnapshotId(); id != "" {
		snap, err := sn.GetSnapshot(ctx, id)
		switch {
		case isNotFound(err):
		case err != nil:
			return nil, cloudError(err, "looking up snapshot %s", id)
		case req.GetSourceVolumeId() == "" || snap.Source == req.GetSourceVolumeId():
			snaps = []*Snapshot{snap}
		}
	} else {
		if snaps, err = sn.ListSnapshots(ctx, req.GetSourceVolumeId()); err != nil && !isNotFound(err) {
			return nil, cloudError(err, "listing snapshots")
		}
		slices.SortFunc(snaps, func(a, b *Snapshot) int { return strings.Compare(a.ID, b.ID) })
	}
	page, next, err := paginate(snaps, req.GetStartingToken(), req.GetMaxEntries())
	if err != nil {
		return nil, err
	}
	out := &csipb.ListSnapshotsResponse{NextToken: next}
	for _, snap := range page {
		out.Entries = append(out.Entries, &csipb.ListSnapshotsResponse_Entry{Snapshot: csiSnapshot(snap)})
	}
	return out, nil
}
