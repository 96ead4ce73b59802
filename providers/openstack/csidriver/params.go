package csidriver

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ccmkit/ccmkit/framework/csi"
)

// StorageClass and VolumeSnapshotClass parameters: cinder-csi-plugin's.
// cinder-csi-plugin ignores any other; this driver rejects it, naming it,
// before any API call: a typo is an error, not a silently different
// volume.
const (
	// paramType is the Cinder volume type (name or ID) of a volume; of a
	// snapshot, "snapshot" or "backup".
	paramType = "type"
	// paramAvailability is the availability zone of a volume (it wins
	// over the topology's), or of a backup.
	paramAvailability = "availability"

	// paramForceCreate snapshots a volume while it is attached (Cinder's
	// force).
	paramForceCreate = "force-create"
	// paramBackupMaxDuration is cinder-csi-plugin's wait for a backup.
	paramBackupMaxDuration = "backup-max-duration-seconds-per-gb"

	snapshotTypeSnapshot = "snapshot"
	snapshotTypeBackup   = "backup"
)

// csiFSTypes are the filesystems a volume is formatted with.
var csiFSTypes = []string{"ext4", "xfs", "ext3", "ext2"}

// Parameters documents the StorageClass parameters the driver takes.
var Parameters = map[string]string{
	paramType:          "Cinder volume type (name or ID) of the volume; Cinder's default type when unset.",
	paramAvailability:  "Availability zone of the volume; it wins over the topology's (the zone of the node the pod is scheduled to, with volumeBindingMode WaitForFirstConsumer).",
	csi.ParamFSType:    "Filesystem of a mount volume: ext4 (the default), xfs, ext3 or ext2. Any case of the key; external-provisioner also sets the volume capability's filesystem from it.",
	csi.ParamCSIFSType: "The same, as Kubernetes spells it.",
	strings.Join(csi.ProvisionerMetadataParams, ", "): "Set by external-provisioner --extra-create-metadata; any value, set as the volume's metadata.",
}

// SnapshotParameters documents the VolumeSnapshotClass parameters the
// driver takes.
var SnapshotParameters = map[string]string{
	paramForceCreate:       "true to snapshot a volume while it is attached (Cinder's force); false (the default) fails CreateSnapshot of an attached volume.",
	paramType:              "snapshot (the default): a Cinder volume snapshot. backup (a Cinder backup) is not supported: it fails CreateSnapshot with InvalidArgument.",
	paramAvailability:      "Availability zone of a backup; accepted and unused for snapshots, as cinder-csi-plugin does.",
	paramBackupMaxDuration: "cinder-csi-plugin's wait for a backup, in seconds per GiB (a whole number); accepted and unused for snapshots.",
	strings.Join(csi.SnapshotterMetadataParams, ", "): "Set by csi-snapshotter --extra-create-metadata; any value, set as the snapshot's metadata.",
}

// ValidateParameters checks StorageClass parameters (csi.ParameterValidator):
// each bad one is named, with what it may be.
func (p *Driver) ValidateParameters(params map[string]string) error {
	var bad []string
	for _, k := range slices.Sorted(maps.Keys(params)) {
		v := params[k]
		switch {
		case k == paramType, k == paramAvailability, slices.Contains(csi.ProvisionerMetadataParams, k):
		case csi.IsFSTypeParam(k):
			if v != "" && !slices.Contains(csiFSTypes, v) {
				bad = append(bad, fmt.Sprintf("%s: %q is not %s", k, truncate(v, 40), strings.Join(csiFSTypes, ", ")))
			}
		default:
			bad = append(bad, fmt.Sprintf("%s: unknown parameter (%s takes %s, %s, %s and %s)", truncate(k, 80), DriverName,
				paramType, paramAvailability, csi.ParamFSType, strings.Join(csi.ProvisionerMetadataParams, ", ")))
		}
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}

// ValidateSnapshotParameters checks VolumeSnapshotClass parameters
// (csi.SnapshotParameters): each bad one is named, with what it may be.
func (p *Driver) ValidateSnapshotParameters(params map[string]string) error {
	var bad []string
	for _, k := range slices.Sorted(maps.Keys(params)) {
		v := params[k]
		switch {
		case k == paramForceCreate:
			if _, err := strconv.ParseBool(v); err != nil {
				bad = append(bad, fmt.Sprintf("%s: %q is not true or false", k, truncate(v, 40)))
			}
		case k == paramType:
			switch v {
			case "", snapshotTypeSnapshot:
			case snapshotTypeBackup:
				bad = append(bad, fmt.Sprintf("%s: %s is not supported by this driver (Cinder backups); use %s", k, v, snapshotTypeSnapshot))
			default:
				bad = append(bad, fmt.Sprintf("%s: %q is not %s", k, truncate(v, 40), snapshotTypeSnapshot))
			}
		case k == paramBackupMaxDuration:
			if n, err := strconv.Atoi(v); err != nil || n < 0 {
				bad = append(bad, fmt.Sprintf("%s: %q is not a whole number of seconds", k, truncate(v, 40)))
			}
		case k == paramAvailability, slices.Contains(csi.SnapshotterMetadataParams, k):
		default:
			bad = append(bad, fmt.Sprintf("%s: unknown parameter (%s snapshots take %s, %s, %s, %s and %s)", truncate(k, 80), DriverName,
				paramForceCreate, paramType, paramAvailability, paramBackupMaxDuration, strings.Join(csi.SnapshotterMetadataParams, ", ")))
		}
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}
