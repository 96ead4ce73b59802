package csidriver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework/csi"
)

// The node side: the host's volume plugin of the volume's storage driver
// mounts the volume, as the Docker daemon has it do for a container that
// uses a named volume of a plugin driver, and the framework bind-mounts
// the plugin's mountpoint at the target. The node plugin must see the
// plugin sockets (RANCHER_VOLUME_PLUGIN_DIR) and the plugins' mountpoints
// (rancher/storage's are under /var/lib/rancher/volumes) as the host
// does: in a pod, host paths with Bidirectional (or HostToContainer)
// mount propagation.

// Node is this node: its Kubernetes name (NODE_NAME), the node ID; no
// topology segment.
func (p *Driver) Node(context.Context) (csi.NodeInfo, error) {
	if p.node.ID == "" {
		return csi.NodeInfo{}, errors.New("this process serves no node (mode controller)")
	}
	return p.node, nil
}

// mountID is the caller ID NodeMount gives the plugin's Mount for a
// target, and NodeUnmount its Unmount: Docker gives a container's ID (64
// hex digits), and a plugin counts a volume's callers by it (unmounting
// the volume when the last one leaves), so each target is a caller of
// its own, named the same at NodeUnpublishVolume, which has only the
// target.
func mountID(target string) string {
	sum := sha256.Sum256([]byte(DriverName + ":" + target))
	return hex.EncodeToString(sum[:])
}

// NodeMount has the host's volume plugin of the volume's storage driver
// mount it, as the Docker daemon does for a container using it:
// VolumeDriver.Get, and, when the host does not have the volume yet,
// VolumeDriver.Create with the volume's driverOpts (as Rancher's agent
// creates a Cattle volume on a host: `docker volume create` with them);
// then VolumeDriver.Mount for the target. The framework bind-mounts the
// mountpoint the plugin answers. An ID no volume of the driver has is
// not found; a volume context that names another volume than the ID is
// refused.
func (p *Driver) NodeMount(ctx context.Context, req csi.MountRequest) (csi.MountSource, error) {
	ref, ok := parseVolumeID(req.VolumeID)
	if !ok {
		return csi.MountSource{}, noSuchVolume(req.VolumeID)
	}
	if p.plugins == nil {
		return csi.MountSource{}, status.Error(codes.FailedPrecondition, "this process serves no node (mode controller)")
	}
	for k, want := range map[string]string{contextDriver: ref.driver, contextName: ref.name} {
		if got, ok := req.Context[k]; ok && got != want {
			return csi.MountSource{}, status.Errorf(codes.InvalidArgument, "volume_context %s %q is not volume %s's %q",
				k, truncateText(got, 80), ref, want)
		}
	}
	if err := p.plugins.activate(ctx, ref.driver); err != nil {
		return csi.MountSource{}, err
	}
	log := klog.FromContext(ctx)
	if _, err := p.plugins.get(ctx, ref.driver, ref.name); err != nil {
		var perr *pluginError
		if !errors.As(err, &perr) {
			return csi.MountSource{}, err
		}
		log.V(2).Info("Creating the volume on this host", "volume", ref.String(), "get", perr.msg)
		if err := p.plugins.create(ctx, ref.driver, ref.name, driverOptsOf(req.Context)); err != nil {
			return csi.MountSource{}, fmt.Errorf("creating volume %s on this host: %w", ref, err)
		}
	}
	mp, err := p.plugins.mount(ctx, ref.driver, ref.name, mountID(req.Target))
	if err != nil {
		return csi.MountSource{}, fmt.Errorf("mounting volume %s on this host: %w", ref, err)
	}
	log.V(4).Info("The volume plugin mounted the volume", "volume", ref.String(), "mountpoint", mp)
	return csi.MountSource{Source: mp, Options: []string{"bind"}}, nil
}

// NodeUnmount has the plugin release the volume for target
// (VolumeDriver.Unmount with the caller ID NodeMount gave), after the
// framework unmounted the target; the plugin unmounts the volume when no
// caller is left. An ID no volume of the driver has held nothing.
func (p *Driver) NodeUnmount(ctx context.Context, id, target string) error {
	ref, ok := parseVolumeID(id)
	if !ok {
		return nil
	}
	if p.plugins == nil {
		return status.Error(codes.FailedPrecondition, "this process serves no node (mode controller)")
	}
	if err := p.plugins.activate(ctx, ref.driver); err != nil {
		return err
	}
	if err := p.plugins.unmount(ctx, ref.driver, ref.name, mountID(target)); err != nil {
		return fmt.Errorf("releasing volume %s on this host: %w", ref, err)
	}
	return nil
}
