package main

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/providers/digitalocean"
)

// digitalOceanCSIConfig is docs/digitalocean/csi-config.md: the CSI
// driver's environment (digitalocean.CSIConfig; it takes no
// --cloud-config) and the StorageClass parameters it accepts
// (digitalocean.CSIParameters).
func digitalOceanCSIConfig() ([]byte, error) {
	intro := "`digitalocean-csi-driver` reads these environment variables; it takes no `--cloud-config` file. " +
		"Each can also be set by the flag its description names (csi-digitalocean's flags, and `--metadata-url`), " +
		"which wins over the variable, so csi-digitalocean's manifests work unchanged; " +
		"`digitalocean-csi-driver --help` lists every flag. " +
		"The shipped manifests and chart read the token from the CCM's Secret, `kube-system/digitalocean` key " +
		"`access-token`, mounted as a file (`DIGITALOCEAN_ACCESS_TOKEN_FILE`). See [csi.md](csi.md)."
	b, err := config.EnvMarkdown("DigitalOcean CSI driver configuration", intro, digitalocean.CSIConfig{})
	if err != nil {
		return nil, err
	}
	out := bytes.NewBuffer(b)
	out.WriteString("\n## StorageClass parameters\n\n" +
		"A StorageClass of `" + digitalocean.CSIDriverName + "` may set only these parameters. " +
		"Any other parameter, or a value its description does not allow, fails CreateVolume with `InvalidArgument` naming it, " +
		"before any DigitalOcean API call.\n\n")
	out.WriteString("| Parameter | Description |\n|---|---|\n")
	// Unprefixed parameters (fstype) first, then the csi.storage.k8s.io
	// ones, each group by name.
	keys := slices.SortedFunc(maps.Keys(digitalocean.CSIParameters), func(a, b string) int {
		if pa, pb := strings.Contains(a, "/"), strings.Contains(b, "/"); pa != pb {
			if pa {
				return 1
			}
			return -1
		}
		return strings.Compare(a, b)
	})
	for _, k := range keys {
		var names []string
		for n := range strings.SplitSeq(k, ",") {
			names = append(names, "`"+strings.TrimSpace(n)+"`")
		}
		fmt.Fprintf(out, "| %s | %s |\n", strings.Join(names, "<br>"), strings.ReplaceAll(strings.Join(strings.Fields(digitalocean.CSIParameters[k]), " "), "|", `\|`))
	}
	return out.Bytes(), nil
}
