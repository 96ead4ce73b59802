package csidriver

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ccmkit/ccmkit/framework/csi"
)

// StorageClass parameters. The driver has none of its own and takes only
// those Kubernetes itself sets, rejecting anything else, naming it, before
// any API call: a typo is an error, not a silently different volume.
//
// A volume's network is not a parameter: it is the topology segment
// (TopologyKey), which Kubernetes chooses among the nodes' networks (a
// StorageClass narrows it with allowedTopologies), so that a volume is
// always on a network its Pod's node reaches. Its size is the claim's, its
// type the one there is, and its filesystem the NFS server's.

// fsType is the only filesystem a StorageClass may name: the volumes
// are NFS exports, which the node mounts as such.
const fsType = "nfs"

// Parameters documents the StorageClass parameters the driver takes.
var Parameters = map[string]string{
	csi.ParamFSType: `Optional, and only "nfs" (any case of the key): the volumes are NFS exports of their storage zones, mounted as NFS version 3; ` +
		"the node formats nothing.",
	csi.ParamCSIFSType: "The same, as Kubernetes spells it.",
	strings.Join(csi.ProvisionerMetadataParams, ", "): "Set by external-provisioner --extra-create-metadata; any value.",
}

// ValidateParameters checks StorageClass parameters (csi.ParameterValidator):
// each bad one is named, with what it may be.
func (p *Driver) ValidateParameters(params map[string]string) error {
	var bad []string
	for _, k := range slices.Sorted(maps.Keys(params)) {
		v := params[k]
		switch {
		case csi.IsFSTypeParam(k):
			if v != "" && v != fsType {
				bad = append(bad, fmt.Sprintf("%s: %q is not %s (the volumes are NFS exports)", k, truncateText(v, 40), fsType))
			}
		case slices.Contains(csi.ProvisionerMetadataParams, k):
		default:
			bad = append(bad, fmt.Sprintf("%s: unknown parameter (%s takes only %s and %s; a volume's network is its topology)",
				truncateText(k, 80), p.Name(), csi.ParamFSType, strings.Join(csi.ProvisionerMetadataParams, ", ")))
		}
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}
