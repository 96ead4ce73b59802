package main

import (
	"bytes"

	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/providers/rancher/csidriver"
)

// rancherCSIConfig is docs/rancher/csi-config.md: the CSI driver's
// environment (csidriver.Config: it has no flags of its own and no
// --cloud-config) and the StorageClass parameters it accepts
// (csidriver.Parameters).
func rancherCSIConfig() ([]byte, error) {
	_, common, _ := csiFlags(csidriver.New())
	intro := "`rancher-csi-driver` reads these environment variables; it takes no `--cloud-config` file and no flags " +
		"of its own, only those of every ccmkit CSI driver (" + flagNames(common) + ", and the logging flags; " +
		"`rancher-csi-driver --help` lists them). " +
		"The controller's settings are the Rancher CCM's, the same variables: the shipped manifests read them from the CCM's Secret, " +
		"`kube-system/rancher-credentials`. The node plugin makes no API call and needs none of them: " +
		"it takes its node name (`NODE_NAME`) and its host's volume plugin sockets (`RANCHER_VOLUME_PLUGIN_DIR`). See [csi.md](csi.md)."
	b, err := config.EnvMarkdown("Rancher CSI driver configuration", intro, csidriver.Config{})
	if err != nil {
		return nil, err
	}
	out := bytes.NewBuffer(b)
	writeParameters(out, "StorageClass parameters",
		"A StorageClass of `"+csidriver.DriverName+"` may set only these parameters. "+
			"Any other parameter, or a value its description does not allow, fails CreateVolume with `InvalidArgument` naming it, "+
			"before any Cattle API call.", csidriver.Parameters)
	return out.Bytes(), nil
}
