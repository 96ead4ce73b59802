package main

import (
	"bytes"

	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/providers/triton/csidriver"
)

// tritonCSIConfig is docs/triton/csi-config.md: the CSI driver's
// environment (csidriver.Config: it has no flags of its own and no
// --cloud-config), its topology and volume_context, and the StorageClass
// parameters it accepts (csidriver.Parameters).
func tritonCSIConfig() ([]byte, error) {
	_, common, _ := csiFlags(csidriver.New())
	intro := "`triton-csi-driver` serves Triton's NFS shared volumes (RFD 26, type `tritonnfs`) as `" + csidriver.DriverName +
		"`, ReadWriteMany. It reads these environment variables; it takes no `--cloud-config` file and no flags " +
		"of its own, only those of every ccmkit CSI driver (" + flagNames(common) + ", and the logging flags; " +
		"`triton-csi-driver --help` lists them). " +
		"The credentials are the Triton CCM's, the same variables, so the CCM's `triton-credentials` Secret serves both " +
		"(the key mounted as a file: `TRITON_KEY_MATERIAL_FILE`). Only the controller uses them; the node plugin makes no API call: " +
		"it reads its instance UUID and NICs from the instance metadata (`TRITON_MDATA_GET`), and mounts each volume's NFS export."
	b, err := config.EnvMarkdown("Triton CSI driver configuration", intro, csidriver.Config{})
	if err != nil {
		return nil, err
	}
	out := bytes.NewBuffer(b)
	out.WriteString("\n## Topology and mounts\n\n" +
		"A volume is reachable only on the fabric networks its NFS server is on, so the topology key is `" + csidriver.TopologyKey +
		"`, whose value is a fabric network's UUID: a node is in the segment of its first fabric NIC (`sdc:nics`), and a volume is " +
		"created on the network Kubernetes' topology chooses (a StorageClass narrows it with `allowedTopologies`), or, without " +
		"topology, on the account's default fabric network. " +
		"A volume's size is the smallest of the datacenter's volume sizes (CloudAPI's ListVolumeSizes: 10 to 100 GiB by 10, then " +
		"200 to 1000 GiB by 100, on a stock Triton) that holds the claim. " +
		"Its `volume_context` key `" + csidriver.ContextFilesystemPath + "` is its NFS export (`<ip>:/zones/<uuid>/data`), which the " +
		"node mounts with `mount -t nfs -o vers=3,sec=sys` (a StorageClass's `mountOptions` are added, e.g. `nolock`); " +
		"the node plugin's image needs the NFS client (`mount.nfs`).\n")
	writeParameters(out, "StorageClass parameters",
		"A StorageClass of `"+csidriver.DriverName+"` may set only these parameters. "+
			"Any other parameter, or a value its description does not allow, fails CreateVolume with `InvalidArgument` naming it, "+
			"before any CloudAPI call.", csidriver.Parameters)
	return out.Bytes(), nil
}
