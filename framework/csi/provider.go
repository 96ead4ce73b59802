package csi

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/klog/v2"
)

// A Provider is a cloud's volumes, as framework/csi drives them: the
// framework owns everything CSI (argument validation with the spec's
// codes, name idempotency, capacity rounding, topology, one operation per
// volume at a time, not-found, the node side's format and mount), and the
// provider only maps its SDK onto these calls.
//
// A Provider serves its volumes one of two ways, and implements exactly
// one of the two interfaces for it: an Attacher's volumes are block
// devices attached to one node at a time (DigitalOcean, OpenStack Cinder,
// Brightbox), which the node formats and mounts; a SharedFilesystem's are
// network filesystems many nodes mount at once (Triton's NFS volumes,
// Rancher's storage drivers), with nothing to attach. Serve refuses a
// Provider that is neither or both.
//
// Further optional capabilities are interfaces a Provider may implement:
// Snapshotter, Lister, Expander, ParameterValidator, SnapshotParameters,
// Initializer, Prober.
type Provider interface {
	// Name is the CSI driver name, e.g. "dobs.csi.digitalocean.com".
	Name() string
	// Limits are the cloud's volume sizes and per-node attachment limit.
	Limits() Limits
	// TopologyKey is the segment key volumes are placed by (e.g.
	// "region"); "" for a cloud without topology.
	TopologyKey() string

	// Create makes a volume. The framework has looked it up by name
	// first (GetByName), rounded the size into Limits and chosen the
	// segment; the provider only creates.
	Create(ctx context.Context, req CreateRequest) (*Volume, error)
	// Get returns the volume with the cloud's ID id: ErrNotFound only
	// when the cloud said so.
	Get(ctx context.Context, id string) (*Volume, error)
	// GetByName returns the volume named name in segment (every segment
	// when ""), nil and no error when there is none.
	GetByName(ctx context.Context, name, segment string) (*Volume, error)
	// Delete deletes a volume no node uses; ErrNotFound when it is gone
	// already (the framework answers success), ErrInUse while it is
	// attached or used.
	Delete(ctx context.Context, id string) error

	// Node is the node side's view of the cloud: this node's ID and its
	// segment.
	Node(ctx context.Context) (NodeInfo, error)
}

// An Attacher is a Provider of block volumes: the controller attaches a
// volume to one node at a time (ControllerPublishVolume), and the node
// formats its device, mounts it at a staging path and bind-mounts that
// into each target.
type Attacher interface {
	// Attach attaches volume id to node (the node's ID as NodeGetInfo
	// gave it) and returns the publish context the node side gets,
	// also when it is attached there already. It returns ErrPending
	// while the cloud is still working (the framework
	// answers a retryable code, never waits), ErrAttachedElsewhere,
	// ErrLimit, ErrNotFound, ErrNodeNotFound.
	Attach(ctx context.Context, id, node string) (map[string]string, error)
	// Detach detaches volume id from node; nil when it is not attached
	// there (anymore), ErrPending while the cloud is working.
	Detach(ctx context.Context, id, node string) error
	// DevicePath is where the node finds an attached volume's block
	// device, from its ID and the publish context Attach returned: e.g.
	// /dev/disk/by-id/scsi-0DO_Volume_<name>, under the by-id directory
	// byID (Options.ByIDDir: /dev/disk/by-id on a real host).
	DevicePath(byID, id string, publishContext map[string]string) (string, error)
}

// A SharedFilesystem is a Provider of network filesystems: nothing is
// attached (the CSIDriver says attachRequired: false), every node that
// publishes a volume mounts it at the target path itself, and a volume
// whose Volume.MultiNode is set takes the multi-node access modes
// (ReadWriteMany). Only the mount access type is served: there is no
// block device, and the filesystem is the cloud's (a capability's
// fs_type is not used).
type SharedFilesystem interface {
	// NodeMount prepares volume req.VolumeID on this node for
	// req.Target and returns what the framework mounts there (the
	// framework has checked the request and owns the target: it makes
	// the directory, mounts, and answers a repeated publish without
	// calling NodeMount). The source is e.g. an NFS server's export
	// ("host:/path", FSType "nfs"), or a directory a host agent mounted
	// (Options "bind").
	NodeMount(ctx context.Context, req MountRequest) (MountSource, error)
	// NodeUnmount releases what NodeMount prepared for target, after
	// the framework has unmounted it; nil when there is nothing to
	// release (anymore). NodeUnpublishVolume has only the volume's ID
	// and the target: a provider that needs more to release (a
	// volume's name) puts it in the ID.
	NodeUnmount(ctx context.Context, id, target string) error
}

// MountRequest is a volume to mount on this node.
type MountRequest struct {
	VolumeID string
	// Context is the volume_context: the Volume.Context the controller
	// returned when it created the volume.
	Context map[string]string
	// Target is the path the volume is published at.
	Target   string
	ReadOnly bool
}

// MountSource is what a SharedFilesystem's NodeMount has the framework
// mount at the target: mount -t FSType -o Options Source Target.
type MountSource struct {
	Source, FSType string
	Options        []string
}

// Expander is a Provider whose volumes grow.
type Expander interface {
	// Expand grows volume id to at least bytes (already rounded) and
	// returns its new size; ErrPending while the cloud is working.
	Expand(ctx context.Context, id string, bytes int64) (int64, error)
}

// Snapshotter is a Provider with snapshots.
type Snapshotter interface {
	// CreateSnapshot snapshots volume source as name; the framework has
	// looked it up by name first (SnapshotByName).
	CreateSnapshot(ctx context.Context, source, name string) (*Snapshot, error)
	// SnapshotByName returns the snapshot named name, nil when none.
	SnapshotByName(ctx context.Context, name string) (*Snapshot, error)
	// GetSnapshot returns snapshot id; ErrNotFound only when the cloud
	// said so.
	GetSnapshot(ctx context.Context, id string) (*Snapshot, error)
	// DeleteSnapshot deletes snapshot id; ErrNotFound when gone already.
	DeleteSnapshot(ctx context.Context, id string) error
	// ListSnapshots lists the snapshots, of volume source when not "".
	ListSnapshots(ctx context.Context, source string) ([]*Snapshot, error)
}

// SnapshotParameters is a Snapshotter whose snapshots take the
// VolumeSnapshotClass parameters: the framework checks them with
// ValidateSnapshotParameters before any cloud call (an error names the
// parameter, and the framework answers InvalidArgument with it), and
// creates a snapshot with CreateSnapshotWithParameters instead of
// CreateSnapshot. A Snapshotter without it gets no parameters.
type SnapshotParameters interface {
	ValidateSnapshotParameters(params map[string]string) error
	CreateSnapshotWithParameters(ctx context.Context, source, name string, params map[string]string) (*Snapshot, error)
}

// Lister is a Provider that lists its volumes.
type Lister interface {
	// ListVolumes lists every volume the provider manages.
	ListVolumes(ctx context.Context) ([]*Volume, error)
}

// Limits are a cloud's volume sizes: sizes are rounded up to a multiple of
// StepBytes, at least MinBytes; MaxBytes (0: none) is the largest;
// DefaultBytes is the size of a volume asked for with no capacity.
type Limits struct {
	MinBytes, StepBytes, MaxBytes, DefaultBytes int64
	// MaxPerNode is how many volumes a node may have attached (NodeGetInfo's
	// max_volumes_per_node); 0: no limit.
	MaxPerNode int64
}

// CreateRequest is a volume to create.
type CreateRequest struct {
	Name      string
	SizeBytes int64
	// LimitBytes is the capacity range's limit_bytes, 0 for none. The
	// framework has checked SizeBytes against it; a provider whose cloud
	// takes a list of sizes rather than every multiple of
	// Limits.StepBytes rounds SizeBytes up to one it takes, and refuses
	// (a status error, OutOfRange) one larger than LimitBytes.
	LimitBytes int64
	// Segment is the topology segment's value (e.g. the region), "" for
	// a cloud without topology.
	Segment string
	// Parameters are the StorageClass parameters, validated by the
	// provider's ParameterValidator when it has one.
	Parameters map[string]string
	// Snapshot is the snapshot to restore, "" for an empty volume.
	Snapshot string
	// MultiNode is set when a multi-node access mode (ReadWriteMany,
	// ReadOnlyMany) was asked for: a SharedFilesystem whose volume
	// would not take one answers an error wrapping ErrUnsupported.
	MultiNode bool
}

// Volume is a cloud volume.
type Volume struct {
	ID        string
	Name      string
	SizeBytes int64
	Segment   string
	// Nodes are the IDs of the nodes it is attached to.
	Nodes []string
	// Snapshot is the snapshot it was restored from, "" if none.
	Snapshot string
	// MultiNode is set when many nodes may mount it at once (a
	// SharedFilesystem's volume; multi-node access modes).
	MultiNode bool
	// Context is the volume_context CreateVolume answers, which the
	// node gets on NodePublishVolume (a SharedFilesystem's MountRequest):
	// e.g. what to mount. Only what the node needs, and never a
	// credential: the kubelet and every PV reader sees it.
	Context map[string]string
}

// Snapshot is a cloud snapshot of a volume.
type Snapshot struct {
	ID, Name, Source string
	SizeBytes        int64
	CreatedUnix      int64
	Ready            bool
}

// NodeInfo is what NodeGetInfo answers.
type NodeInfo struct {
	ID      string
	Segment string
	// Topology are more segments NodeGetInfo reports, beside the
	// TopologyKey's (e.g. an operator's topology.kubernetes.io/region):
	// they become node labels; volumes are placed by TopologyKey's only.
	// Ignored for a cloud without topology.
	Topology map[string]string
}

// Initializer is a Provider that prepares itself before the driver
// serves: builds its API client (a controller) or reads the instance
// metadata (a node). Serve calls Init once, before it listens; an error
// ends Serve, and should name the setting at fault.
type Initializer interface {
	Init(ctx context.Context, env *Env) error
}

// Env is what Serve hands Initializer.Init.
type Env struct {
	// Mode is the services this process serves: a node plugin needs no
	// cloud credentials, a controller needs no instance metadata.
	Mode Mode
	// Logger is the driver's logger.
	Logger klog.Logger
	// Version is the driver's version, for a User-Agent.
	Version string
}

// Prober is a Provider with a health check of its own, which Probe and
// the /healthz endpoint call: an error answers FailedPrecondition (not
// ready) and 500.
type Prober interface {
	Probe(ctx context.Context) error
}

// ParameterValidator is a Provider that checks StorageClass parameters
// before any cloud call: an error names the parameter, and the framework
// answers InvalidArgument with it.
type ParameterValidator interface {
	ValidateParameters(params map[string]string) error
}

// Errors a Provider returns, which the framework maps to CSI codes.
var (
	// ErrNotFound: the cloud said the volume, snapshot or node is not
	// there. Never for a failed or unanswered request.
	ErrNotFound = errors.New("not found")
	// ErrNodeNotFound: the cloud said the node is not there.
	ErrNodeNotFound = errors.New("node not found")
	// ErrPending: the cloud is still working on this volume (an action
	// in progress, a pending event): the framework answers Aborted and
	// the caller retries.
	ErrPending = errors.New("the cloud is still working on it")
	// ErrAttachedElsewhere: the volume is attached to another node
	// (FailedPrecondition).
	ErrAttachedElsewhere = errors.New("attached to another node")
	// ErrLimit: the node has as many volumes attached as it may
	// (ResourceExhausted).
	ErrLimit = errors.New("attachment limit reached")
	// ErrInUse: Delete of a volume that is still attached
	// (FailedPrecondition).
	ErrInUse = errors.New("volume in use")
	// ErrUnsupported: the request asks for what this volume or its
	// parameters cannot do, e.g. ReadWriteMany of a storage driver
	// whose volumes are single-host (InvalidArgument).
	ErrUnsupported = errors.New("not supported")
)

// Pending wraps ErrPending with what the cloud is doing.
func Pending(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrPending, fmt.Sprintf(format, args...))
}
