package csidriver

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/ccmkit/ccmkit/framework/csi"
)

// StorageClass parameters. The driver takes exactly these and refuses
// anything else, naming it, before any API call: a typo is an error, not
// a silently different volume.
const (
	// paramDriver names the Cattle storage driver of the volume (the
	// volume's driver).
	paramDriver = "driver"
	// paramDriverOptPrefix starts a parameter that is one of the
	// volume's driverOpts: driverOpts.<key>: <value>.
	paramDriverOptPrefix = "driverOpts."
)

// maxDriverName bounds a storage driver's name, so that a volume ID
// (<Cattle ID>/<driver>/<name>) stays within the CSI spec's 128 bytes.
const maxDriverName = 48

// validDriverName is a storage driver's name as the node finds its
// volume plugin by it (<dir>/<driver>.sock): Docker's plugin names
// (rancher-nfs, rancher-ebs, rancher-efs), nothing that leaves the
// directory.
var validDriverName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]*$`)

// Parameters documents the StorageClass parameters the driver takes.
var Parameters = map[string]string{
	paramDriver: "Cattle storage driver of the volumes, a storage driver of the environment (its storage service stack): " +
		"rancher-nfs (the default), rancher-efs, rancher-ebs, ... The volumes take ReadWriteMany (and ReadOnlyMany) " +
		"when the driver's volumeAccessMode is multiHostRW, else ReadWriteOnce only. Every node that mounts them must run it.",
	paramDriverOptPrefix + "<key>": "A driver option of the volumes (the Cattle volume's driverOpts, which the storage driver reads when " +
		"it creates the volume on a host), e.g. driverOpts.host and driverOpts.export for a rancher-nfs volume on an existing share. " +
		"Not credentials: the PersistentVolume's volume attributes carry them to the nodes.",
	strings.Join(csi.ProvisionerMetadataParams, ", "): "Set by external-provisioner --extra-create-metadata; any value. " +
		"They name the claim in the Cattle volume's description.",
}

// ValidateParameters checks StorageClass parameters (csi.ParameterValidator):
// each bad one is named, with what it may be.
func (p *Driver) ValidateParameters(params map[string]string) error {
	var bad []string
	for _, k := range slices.Sorted(maps.Keys(params)) {
		v := params[k]
		switch opt, isOpt := strings.CutPrefix(k, paramDriverOptPrefix); {
		case k == paramDriver:
			if err := checkDriverName(v); err != nil {
				bad = append(bad, fmt.Sprintf("%s: %v", k, err))
			}
		case isOpt:
			if opt == "" {
				bad = append(bad, fmt.Sprintf("%s: no option name after %q", k, paramDriverOptPrefix))
			}
		case csi.IsFSTypeParam(k):
			bad = append(bad, fmt.Sprintf("%s: the filesystem is the storage driver's: %s takes none (a driver that "+
				"makes one takes it as a driver option, %s<key>)", k, p.Name(), paramDriverOptPrefix))
		case slices.Contains(csi.ProvisionerMetadataParams, k):
		default:
			bad = append(bad, fmt.Sprintf("%s: unknown parameter (%s takes %s, %s<key> and %s)", truncateText(k, 80), p.Name(),
				paramDriver, paramDriverOptPrefix, strings.Join(csi.ProvisionerMetadataParams, ", ")))
		}
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}

// checkDriverName checks a storage driver's name.
func checkDriverName(name string) error {
	switch {
	case name == "":
		return errors.New("empty: name a storage driver, or leave the parameter out for " + DefaultStorageDriver)
	case len(name) > maxDriverName:
		return fmt.Errorf("%q is longer than %d bytes", truncateText(name, 80), maxDriverName)
	case !validDriverName.MatchString(name):
		return fmt.Errorf("%q is not a storage driver's name (letters, digits, _ . -)", truncateText(name, 80))
	}
	return nil
}

// driverParameter is the StorageClass's storage driver, DefaultStorageDriver
// when it names none (ValidateParameters has checked it).
func driverParameter(params map[string]string) string {
	if d, ok := params[paramDriver]; ok {
		return d
	}
	return DefaultStorageDriver
}

// driverOptsParameters are the StorageClass's driver options, nil when
// none.
func driverOptsParameters(params map[string]string) map[string]string {
	var out map[string]string
	for k, v := range params {
		if opt, ok := strings.CutPrefix(k, paramDriverOptPrefix); ok && opt != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[opt] = v
		}
	}
	return out
}
