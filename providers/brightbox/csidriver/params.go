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

// StorageClass parameters. The driver takes exactly these and rejects
// anything else, naming it, before any API call: a typo is an error, not
// a silently different volume.
const (
	// paramEncrypted asks for an encrypted volume (the API's encrypted).
	paramEncrypted = "encrypted"
)

// fsTypes are the filesystems the driver's node formats with (the
// ones the API could pre-format, too).
var fsTypes = []string{"ext4", "xfs"}

// Parameters documents the StorageClass parameters the driver takes.
var Parameters = map[string]string{
	csi.ParamFSType:    "Filesystem of a mount volume: ext4 (the default) or xfs. Any case of the key; external-provisioner also sets the volume capability's filesystem from it. The node formats the volume with it; the API does not pre-format it.",
	csi.ParamCSIFSType: "The same, as Kubernetes spells it.",
	paramEncrypted:     `"true" makes the volume encrypted (the API's encrypted), "false" (the default) not.`,
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
				bad = append(bad, fmt.Sprintf("%s: %q is not %s", k, truncateText(v, 40), strings.Join(fsTypes, " or ")))
			}
		case k == paramEncrypted:
			if _, err := strconv.ParseBool(v); err != nil {
				bad = append(bad, fmt.Sprintf("%s: %q is not true or false", k, truncateText(v, 40)))
			}
		case slices.Contains(csi.ProvisionerMetadataParams, k):
		default:
			bad = append(bad, fmt.Sprintf("%s: unknown parameter (%s takes %s, %s and %s)", truncateText(k, 80), p.Name(),
				csi.ParamFSType, paramEncrypted, strings.Join(csi.ProvisionerMetadataParams, ", ")))
		}
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}

// encryptedParameter is the StorageClass's encrypted, when it has one
// (ValidateParameters has checked it).
func encryptedParameter(params map[string]string) (value, ok bool) {
	v, ok := params[paramEncrypted]
	if !ok {
		return false, false
	}
	b, err := strconv.ParseBool(v)
	return b, err == nil
}
