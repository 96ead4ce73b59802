package csi

import (
	"context"
	"os"
	"slices"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"
)

// publishShared publishes a SharedFilesystem's volume: the provider says
// what to mount (NodeMount) and the framework mounts it at the target,
// read-only when the request or the access mode says so. A target that
// is mounted already is published (the provider is not asked again);
// when the mount fails, what NodeMount prepared is released.
func (s *node) publishShared(ctx context.Context, req *csipb.NodePublishVolumeRequest) (*csipb.NodePublishVolumeResponse, error) {
	id, target, m := req.GetVolumeId(), req.GetTargetPath(), s.d.opts.Mounter
	if mounted, err := isMounted(m, target); err != nil {
		return nil, status.Errorf(codes.Internal, "target_path %s: %v", target, err)
	} else if mounted {
		return &csipb.NodePublishVolumeResponse{}, nil
	}
	if err := os.MkdirAll(target, 0o750); err != nil {
		return nil, status.Errorf(codes.Internal, "target_path: %v", err)
	}
	ro := readOnly(req.GetVolumeCapability(), req.GetReadonly())
	fs := s.d.shared()
	src, err := fs.NodeMount(ctx, MountRequest{VolumeID: id, Context: req.GetVolumeContext(), Target: target, ReadOnly: ro})
	if err != nil {
		return nil, cloudError(err, "preparing volume %s", id)
	}
	options := slices.Concat(src.Options, req.GetVolumeCapability().GetMount().GetMountFlags())
	if ro {
		options = append(options, "ro")
	}
	if err := m.Mount(src.Source, target, src.FSType, options); err != nil {
		if rerr := fs.NodeUnmount(ctx, id, target); rerr != nil {
			klog.FromContext(ctx).Error(rerr, "Releasing a volume whose mount failed", "volume", id, "target", target)
		}
		return nil, mountError(err, "mounting volume %s (%s) at %s", id, src.Source, target)
	}
	klog.FromContext(ctx).V(2).Info("Published volume", "source", src.Source, "fsType", src.FSType, "path", target, "options", options)
	return &csipb.NodePublishVolumeResponse{}, nil
}
