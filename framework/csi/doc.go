// Package csi turns a small provider value into a complete CSI driver for
// a cloud's volumes, the volumes counterpart of package framework. It
// imports no cloud SDK.
//
// A cloud plugs in by implementing Provider: its driver name, its volume
// Limits (sizes: minimum, step, maximum, default; volumes per node), its
// topology key, and create, get, get-by-name, delete; on the node, this
// node's ID and segment (NodeInfo). Its volumes are one of two kinds, and
// it implements the interface of its kind:
//
//   - Attacher: block volumes attached to one node at a time (attach,
//     detach, and where an attached volume's device appears, DevicePath,
//     under the by-id directory), which the node formats and mounts;
//   - SharedFilesystem: network filesystems (NFS exports, a host
//     agent's volumes) that many nodes mount at once, with nothing to
//     attach: the node asks the provider what to mount at each target
//     (NodeMount) and releases it after (NodeUnmount); the volumes take
//     the multi-node access modes where the provider says each one can
//     (Volume.MultiNode).
//
// Optional capabilities are found by type assertion, as database/sql
// finds a driver's:
//
//   - Expander: volumes grow (ONLINE expansion, EXPAND_VOLUME);
//   - Snapshotter: snapshots, and volumes restored from them;
//     SnapshotParameters: VolumeSnapshotClass parameters, checked before
//     any cloud call;
//   - Lister: ListVolumes;
//   - ParameterValidator: StorageClass parameters checked before any
//     cloud call;
//   - Initializer: build the API client (controller) or read the instance
//     metadata (node) before serving;
//   - Prober: a health check of its own, for Probe and /healthz.
//
// A provider maps its SDK's answers onto the errors of this package
// (ErrNotFound only when the cloud said so, ErrPending while the cloud
// is still working, ErrAttachedElsewhere, ErrLimit, ErrInUse, ErrUnsupported,
// ErrNodeNotFound) and the framework answers each with the CSI spec's
// code. The framework owns the rest of the CSI contract:
//
//   - argument validation with the spec's codes, before any cloud call;
//   - idempotency: CreateVolume and CreateSnapshot find by name first and
//     answer AlreadyExists when the existing one does not match;
//     not-found on delete and detach is success;
//   - capacity rounding into Limits (OutOfRange when impossible) and the
//     topology segment (the first preferred that is requisite);
//   - one operation at a time per volume (a second call answers Aborted),
//     and "the cloud is still working" answered Aborted at once, never a
//     blocking poll: the sidecars and the kubelet retry;
//   - the node side with k8s.io/mount-utils: format only a blank device,
//     mount at the staging path, bind-mount at the target (a block volume
//     is its device bound onto a file), stats, filesystem growth (ext
//     offline at stage, or online; xfs online); a shared filesystem's
//     mount at each target, read-only as the access mode says;
//   - request logging with secrets stripped (protosanitizer), Prometheus
//     metrics (cloudprovider_csi_operations_total and
//     cloudprovider_csi_operation_duration_seconds, by driver, method and
//     code), /healthz.
//
// A driver binary is one line:
//
//	func main() { p := csidriver.New(); csi.Main(p, p.CommandOptions()...) }
//
// Main builds the command (--endpoint, --mode controller|node|all,
// --metrics-address, --by-id-dir, --version and the logging flags); Serve
// is the same without flags. Package csitest runs csi-sanity against a
// provider and its simulated cloud, with the node side on real loop
// devices.
package csi
