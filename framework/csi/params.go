package csi

import "strings"

// Parameters Kubernetes itself puts in the requests, whatever the driver:
// a provider's ParameterValidator accepts these beside its own.
const (
	// ParamFSType is a StorageClass's legacy fstype parameter, which
	// external-provisioner matches in any case, makes the volume
	// capability's filesystem and also passes on.
	ParamFSType = "fstype"
	// ParamCSIFSType is its csi.storage.k8s.io form, which
	// external-provisioner strips (another CO may not).
	ParamCSIFSType = "csi.storage.k8s.io/fstype"
)

// ProvisionerMetadataParams are the parameters external-provisioner
// --extra-create-metadata adds to CreateVolume, and
// SnapshotterMetadataParams those csi-snapshotter --extra-create-metadata
// adds to CreateSnapshot: any value.
var (
	ProvisionerMetadataParams = []string{
		"csi.storage.k8s.io/pvc/name", "csi.storage.k8s.io/pvc/namespace", "csi.storage.k8s.io/pv/name",
	}
	SnapshotterMetadataParams = []string{
		"csi.storage.k8s.io/volumesnapshot/name", "csi.storage.k8s.io/volumesnapshot/namespace",
		"csi.storage.k8s.io/volumesnapshotcontent/name",
	}
)

// IsFSTypeParam reports whether a parameter key names the filesystem:
// ParamFSType in any case, or ParamCSIFSType.
func IsFSTypeParam(key string) bool {
	return strings.EqualFold(key, ParamFSType) || key == ParamCSIFSType
}
