package csidriver

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/providers/digitalocean/internal/cloud"
)

// StorageClass parameters. csi-digitalocean reads none (its own
// StorageClasses set only fstype, which external-provisioner turns into
// the volume capability's filesystem and also passes on); this driver
// takes exactly what reaches CreateVolume from such a StorageClass and
// rejects anything else, naming it, before any API call: a typo is an
// error, not a silently different volume. The keys are framework/csi's
// (csi.ParamFSType, csi.ParamCSIFSType, csi.ProvisionerMetadataParams).
// fsTypes are the filesystems a DigitalOcean volume is formatted with
// (the API's filesystem_type, and what csi-digitalocean's image formats).
var fsTypes = []string{"ext4", "xfs"}

// Parameters documents the StorageClass parameters the driver takes.
var Parameters = map[string]string{
	csi.ParamFSType:    "Filesystem of a mount volume: ext4 (the default) or xfs. Any case of the key; external-provisioner also sets the volume capability's filesystem from it.",
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
			if v != "" && !slices.Contains(fsTypes, v) {
				bad = append(bad, fmt.Sprintf("%s: %q is not %s", k, cloud.Truncate(v, 40), strings.Join(fsTypes, " or ")))
			}
		case slices.Contains(csi.ProvisionerMetadataParams, k):
		default:
			bad = append(bad, fmt.Sprintf("%s: unknown parameter (%s takes %s and %s)", cloud.Truncate(k, 80), p.Name(), csi.ParamFSType,
				strings.Join(csi.ProvisionerMetadataParams, ", ")))
		}
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}
