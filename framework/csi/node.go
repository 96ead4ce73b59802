package csi

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"
	"k8s.io/mount-utils"
)

type node struct {
	csipb.UnimplementedNodeServer
	d *driver
}

func (s *node) NodeGetCapabilities(context.Context, *csipb.NodeGetCapabilitiesRequest) (*csipb.NodeGetCapabilitiesResponse, error) {
	rpcs := []csipb.NodeServiceCapability_RPC_Type{csipb.NodeServiceCapability_RPC_GET_VOLUME_STATS}
	if !s.d.sharedFS() {
		rpcs = append(rpcs, csipb.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME)
	}
	if _, ok := s.d.expander(); ok && !s.d.sharedFS() {
		rpcs = append(rpcs, csipb.NodeServiceCapability_RPC_EXPAND_VOLUME)
	}
	caps := make([]*csipb.NodeServiceCapability, 0, len(rpcs))
	for _, t := range rpcs {
		caps = append(caps, &csipb.NodeServiceCapability{Type: &csipb.NodeServiceCapability_Rpc{
			Rpc: &csipb.NodeServiceCapability_RPC{Type: t}}})
	}
	return &csipb.NodeGetCapabilitiesResponse{Capabilities: caps}, nil
}

func (s *node) NodeGetInfo(ctx context.Context, _ *csipb.NodeGetInfoRequest) (*csipb.NodeGetInfoResponse, error) {
	info, err := s.d.opts.Provider.Node(ctx)
	if err != nil {
		return nil, cloudError(err, "this node")
	}
	out := &csipb.NodeGetInfoResponse{NodeId: info.ID, MaxVolumesPerNode: s.d.limits.MaxPerNode}
	if t := s.d.accessible(info.Segment); t != nil {
		out.AccessibleTopology = t[0]
		for k, v := range info.Topology {
			if k != s.d.key {
				t[0].Segments[k] = v
			}
		}
	}
	return out, nil
}

// NodeStageVolume formats (only a blank device) and mounts a mount
// volume at the staging path; a block volume needs no staging. An ext
// filesystem smaller than its device (the volume was expanded while
// detached) is grown before it is mounted.
func (s *node) NodeStageVolume(ctx context.Context, req *csipb.NodeStageVolumeRequest) (*csipb.NodeStageVolumeResponse, error) {
	id, staging, capability := req.GetVolumeId(), req.GetStagingTargetPath(), req.GetVolumeCapability()
	switch {
	case id == "":
		return nil, missing("volume_id")
	case staging == "":
		return nil, missing("staging_target_path")
	case s.d.sharedFS():
		return nil, status.Errorf(codes.Unimplemented, "%s volumes are shared filesystems: no staging", s.d.name)
	}
	if err := s.d.checkCapability(capability); err != nil {
		return nil, err
	}
	release, err := s.d.locks.acquire("node volume", id)
	if err != nil {
		return nil, err
	}
	defer release()
	if capability.GetBlock() != nil {
		return &csipb.NodeStageVolumeResponse{}, nil
	}
	dev, err := s.device(ctx, id, req.GetPublishContext())
	if err != nil {
		return nil, err
	}
	m := s.d.opts.Mounter
	if mounted, err := isMounted(m, staging); err != nil {
		return nil, status.Errorf(codes.Internal, "staging_target_path %s: %v", staging, err)
	} else if mounted {
		return s.alreadyStaged(dev, staging)
	}
	if err := os.MkdirAll(staging, 0o750); err != nil {
		return nil, status.Errorf(codes.Internal, "staging_target_path: %v", err)
	}
	fsType := capability.GetMount().GetFsType()
	if fsType == "" {
		fsType = DefaultFSType
	}
	logger := klog.FromContext(ctx)
	if err := s.growOffline(ctx, dev); err != nil {
		return nil, status.Errorf(codes.Internal, "growing the filesystem of %s: %v", dev, err)
	}
	options := capability.GetMount().GetMountFlags()
	if fsType == "xfs" && !slices.Contains(options, "nouuid") {
		// A volume restored from a snapshot has its source's
		// filesystem UUID, and xfs refuses to mount a second one.
		options = append(slices.Clip(options), "nouuid")
	}
	if err := m.FormatAndMount(dev, staging, fsType, options); err != nil {
		return nil, mountError(err, "formatting and mounting %s at %s", dev, staging)
	}
	logger.V(2).Info("Staged volume", "device", dev, "path", staging, "fsType", fsType)
	if _, err := s.growOnline(ctx, dev, staging); err != nil {
		return nil, status.Errorf(codes.Internal, "growing the filesystem of %s: %v", dev, err)
	}
	return &csipb.NodeStageVolumeResponse{}, nil
}

// alreadyStaged answers a repeated stage: fine when dev is what is
// mounted at staging, AlreadyExists otherwise.
func (s *node) alreadyStaged(dev, staging string) (*csipb.NodeStageVolumeResponse, error) {
	got, _, err := mount.GetDeviceNameFromMount(s.d.opts.Mounter, staging)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "staging_target_path %s: %v", staging, err)
	}
	if sameFile(got, dev) {
		return &csipb.NodeStageVolumeResponse{}, nil
	}
	return nil, status.Errorf(codes.AlreadyExists, "staging_target_path %s holds %s, not %s", staging, got, dev)
}

func mountError(err error, format string, args ...any) error {
	code := codes.Internal
	var me mount.MountError
	if errors.As(err, &me) && (me.Type == mount.FilesystemMismatch || me.Type == mount.UnformattedReadOnly) {
		code = codes.FailedPrecondition
	}
	return status.Errorf(code, "%s: %v", fmt.Sprintf(format, args...), err)
}

func (s *node) NodeUnstageVolume(ctx context.Context, req *csipb.NodeUnstageVolumeRequest) (*csipb.NodeUnstageVolumeResponse, error) {
	id, staging := req.GetVolumeId(), req.GetStagingTargetPath()
	switch {
	case id == "":
		return nil, missing("volume_id")
	case staging == "":
		return nil, missing("staging_target_path")
	case s.d.sharedFS():
		return nil, status.Errorf(codes.Unimplemented, "%s volumes are shared filesystems: no staging", s.d.name)
	}
	release, err := s.d.locks.acquire("node volume", id)
	if err != nil {
		return nil, err
	}
	defer release()
	if err := unmountAll(s.d.opts.Mounter, staging); err != nil {
		return nil, status.Errorf(codes.Internal, "unmounting %s: %v", staging, err)
	}
	klog.FromContext(ctx).V(2).Info("Unstaged volume", "path", staging)
	return &csipb.NodeUnstageVolumeResponse{}, nil
}

// ephemeralKey is the volume context key the kubelet sets on an inline
// ephemeral CSI volume's NodePublishVolume.
const ephemeralKey = "csi.storage.k8s.io/ephemeral"

// NodePublishVolume bind-mounts the staged filesystem at the target
// path, or the block device onto a file there.
func (s *node) NodePublishVolume(ctx context.Context, req *csipb.NodePublishVolumeRequest) (*csipb.NodePublishVolumeResponse, error) {
	id, target, staging, capability := req.GetVolumeId(), req.GetTargetPath(), req.GetStagingTargetPath(), req.GetVolumeCapability()
	switch {
	case req.GetVolumeContext()[ephemeralKey] == "true":
		// A CSIDriver may list the Ephemeral lifecycle mode (it cannot be
		// removed from an existing one), but no cloud volume is made at
		// publish time: say so, rather than "staging_target_path missing".
		return nil, status.Error(codes.Unimplemented, "inline ephemeral CSI volumes are not supported: use a generic ephemeral volume (a volumes[].ephemeral PVC template) instead")
	case id == "":
		return nil, missing("volume_id")
	case target == "":
		return nil, missing("target_path")
	case staging == "" && !s.d.sharedFS():
		return nil, missing("staging_target_path")
	}
	if err := s.d.checkCapability(capability); err != nil {
		return nil, err
	}
	release, err := s.d.locks.acquire("node volume", id)
	if err != nil {
		return nil, err
	}
	defer release()
	if s.d.sharedFS() {
		return s.publishShared(ctx, req)
	}
	m := s.d.opts.Mounter
	options := []string{"bind"}
	if readOnly(capability, req.GetReadonly()) {
		options = append(options, "ro")
	}
	source := staging
	if capability.GetBlock() != nil {
		if source, err = s.device(ctx, id, req.GetPublishContext()); err != nil {
			return nil, err
		}
		err = makeFile(target)
	} else {
		if staged, err := isMounted(m, staging); err != nil || !staged {
			return nil, status.Errorf(codes.FailedPrecondition, "volume %s is not staged at %s", id, staging)
		}
		err = os.MkdirAll(target, 0o750)
	}
	if err != nil {
		return nil, status.Errorf(codes.Internal, "target_path: %v", err)
	}
	if mounted, err := isMounted(m, target); err != nil {
		return nil, status.Errorf(codes.Internal, "target_path %s: %v", target, err)
	} else if mounted {
		return &csipb.NodePublishVolumeResponse{}, nil
	}
	if err := m.Mount(source, target, "", options); err != nil {
		return nil, mountError(err, "bind-mounting %s at %s", source, target)
	}
	klog.FromContext(ctx).V(2).Info("Published volume", "source", source, "path", target, "options", options)
	return &csipb.NodePublishVolumeResponse{}, nil
}

// NodeUnpublishVolume unmounts and removes the target path; done already
// is done.
func (s *node) NodeUnpublishVolume(ctx context.Context, req *csipb.NodeUnpublishVolumeRequest) (*csipb.NodeUnpublishVolumeResponse, error) {
	id, target := req.GetVolumeId(), req.GetTargetPath()
	switch {
	case id == "":
		return nil, missing("volume_id")
	case target == "":
		return nil, missing("target_path")
	}
	release, err := s.d.locks.acquire("node volume", id)
	if err != nil {
		return nil, err
	}
	defer release()
	if err := mount.CleanupMountPoint(target, s.d.opts.Mounter, true); err != nil {
		return nil, status.Errorf(codes.Internal, "unpublishing %s: %v", target, err)
	}
	if fs := s.d.shared(); fs != nil {
		if err := fs.NodeUnmount(ctx, id, target); err != nil && !isNotFound(err) {
			return nil, cloudError(err, "releasing volume %s from %s", id, target)
		}
	}
	klog.FromContext(ctx).V(2).Info("Unpublished volume", "path", target)
	return &csipb.NodeUnpublishVolumeResponse{}, nil
}

// device waits (DeviceWait at most: udev may not have made the link
// yet) for the block device of an attached volume, and returns the path
// it resolves to.
func (s *node) device(ctx context.Context, id string, publishContext map[string]string) (string, error) {
	link, err := s.d.attacher().DevicePath(s.d.opts.ByIDDir, id, publishContext)
	if err != nil {
		if _, ok := status.FromError(err); ok {
			return "", err
		}
		return "", status.Errorf(codes.InvalidArgument, "device of volume %s: %v", id, err)
	}
	deadline := time.Now().Add(s.d.opts.DeviceWait)
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		dev, err := filepath.EvalSymlinks(link)
		if err == nil {
			return dev, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", status.Errorf(codes.Internal, "device of volume %s: %v", id, err)
		}
		if time.Now().After(deadline) {
			return "", status.Errorf(codes.Unavailable, "device %s of volume %s has not appeared (is the volume attached to this node?)", link, id)
		}
		select {
		case <-ctx.Done():
			return "", status.FromContextError(ctx.Err()).Err()
		case <-time.After(wait):
		}
	}
}

// isMounted reports whether something is mounted at path (from the
// mount table: a bind mount of the same filesystem too).
func isMounted(m mount.Interface, path string) (bool, error) {
	mounted, err := m.IsMountPoint(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return mounted, err
}

// unmountAll unmounts path until nothing is mounted there.
func unmountAll(m mount.Interface, path string) error {
	for range 8 {
		mounted, err := isMounted(m, path)
		if err != nil || !mounted {
			return err
		}
		if err := m.Unmount(path); err != nil {
			return err
		}
	}
	return fmt.Errorf("%s is still mounted", path)
}

func makeFile(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDONLY, 0o640)
	if err != nil {
		return err
	}
	return f.Close()
}

func sameFile(a, b string) bool {
	if a == b {
		return true
	}
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
}
