package main

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	logsapi "k8s.io/component-base/logs/api/v1"

	"github.com/ccmkit/ccmkit/framework/config"
	"github.com/ccmkit/ccmkit/framework/csi"
	gbcsi "github.com/ccmkit/ccmkit/providers/brightbox/csidriver"
	docsi "github.com/ccmkit/ccmkit/providers/digitalocean/csidriver"
	"github.com/ccmkit/ccmkit/providers/openstack"
	oscsi "github.com/ccmkit/ccmkit/providers/openstack/csidriver"
)

// digitalOceanCSIConfig is docs/digitalocean/csi-config.md: the CSI
// driver's environment (docsi.Config; it takes no
// --cloud-config) and the StorageClass parameters it accepts
// (docsi.Parameters).
func digitalOceanCSIConfig() ([]byte, error) {
	intro := "`digitalocean-csi-driver` reads these environment variables; it takes no `--cloud-config` file. " +
		"Each can also be set by the flag its description names (csi-digitalocean's flags, and `--metadata-url`), " +
		"which wins over the variable, so csi-digitalocean's manifests work unchanged; " +
		"`digitalocean-csi-driver --help` lists every flag. " +
		"The shipped manifests and chart read the token from the CCM's Secret, `kube-system/digitalocean` key " +
		"`access-token`, mounted as a file (`DIGITALOCEAN_ACCESS_TOKEN_FILE`). See [csi.md](csi.md)."
	b, err := config.EnvMarkdown("DigitalOcean CSI driver configuration", intro, docsi.Config{})
	if err != nil {
		return nil, err
	}
	out := bytes.NewBuffer(b)
	writeParameters(out, "StorageClass parameters",
		"A StorageClass of `"+docsi.DriverName+"` may set only these parameters. "+
			"Any other parameter, or a value its description does not allow, fails CreateVolume with `InvalidArgument` naming it, "+
			"before any DigitalOcean API call.", docsi.Parameters)
	return out.Bytes(), nil
}

// openStackCSIConfig is docs/openstack/csi-config.md: the flags of
// openstack-csi-driver (cinder-csi-plugin's and ccmkit's, from the
// command the binary builds), the cloud.conf sections it reads (whose
// keys docs/openstack/config.md describes: listed here by name, not
// repeated), its environment (oscsi.Config) and the StorageClass
// and VolumeSnapshotClass parameters it accepts.
func openStackCSIConfig() ([]byte, error) {
	p := oscsi.New()
	provider, common, logging := csiFlags(p, p.CommandOptions()...)
	fields, err := config.Fields(openstack.Config{})
	if err != nil {
		return nil, err
	}
	keys := func(section string) string {
		var out []string
		for _, f := range fields {
			if k, ok := strings.CutPrefix(f.FileKey, section+"."); ok {
				out = append(out, "`"+k+"`")
			}
		}
		return strings.Join(out, ", ")
	}
	// The variables the CCM reads for [Global] use-clouds.
	var cloudsEnv []string
	for _, f := range fields {
		if f.Env != "" && f.FileKey == "" && strings.Contains(f.Doc, "use-clouds") {
			cloudsEnv = append(cloudsEnv, "`"+f.Env+"`")
		}
	}

	out := &bytes.Buffer{}
	out.WriteString("# OpenStack CSI driver configuration\n\n" +
		"`openstack-csi-driver` is configured as cloud-provider-openstack's cinder-csi-plugin is: by the `cloud.conf` " +
		"file that `--cloud-config` names, by cinder-csi-plugin's flags, so its manifests' arguments keep working, " +
		"and, for the node plugin, by two environment variables. The shipped manifests mount the OpenStack CCM's Secret, " +
		"`kube-system/cloud-config` key `cloud.conf`, at `/etc/config` in both workloads. See [csi.md](csi.md).\n")

	out.WriteString("\n## cloud.conf\n\n" +
		"The file is the OpenStack CCM's, in its format, checked as strictly: an unknown section or key, or a bad value, " +
		"stops the driver at start-up with an error naming each, with its line, and never quoting a secret. " +
		"Each section's keys are described in [config.md](config.md). " +
		"`--cloud-config` may be given several times: the files are merged in order, later ones winning. " +
		"The controller follows a single file for rotated credentials, as the CCM does " +
		"([README.md](README.md#rotating-the-credentials)).\n\n")
	out.WriteString("| Section | Read by | Keys |\n|---|---|---|\n")
	fmt.Fprintf(out, "| `[Global]` | the controller | The credentials, region, endpoint type and TLS settings of the Keystone, Nova and Cinder APIs, as the CCM reads them (with `use-clouds`, also %s). A node plugin makes no API call and does not read them. |\n",
		strings.Join(cloudsEnv, " and "))
	fmt.Fprintf(out, "| `[BlockStorage]` | both | %s |\n", keys("BlockStorage"))
	fmt.Fprintf(out, "| `[Metadata]` | both | %s: where the node plugin reads its server ID and availability zone, and the timeout of one request (the controller's API requests too) |\n",
		keys("Metadata"))
	out.WriteString("| `[LoadBalancer]`, `[LoadBalancerClass \"&lt;name&gt;\"]`, `[Networking]`, `[Route]` | neither | The CCM's: accepted and unused, so one file serves both. |\n")
	out.WriteString("\nThe controller needs the file. A node plugin without one, or whose file does not exist, uses the defaults, as cinder-csi-plugin's does.\n")

	out.WriteString("\n## Flags\n\n" +
		"cinder-csi-plugin's flags, with `--metadata-url` and `--config-drive-dir`, which set the two environment variables below " +
		"and win over them. `openstack-csi-driver --help` lists them too.\n\n")
	writeFlags(out, provider)
	out.WriteString("\n### Flags of every ccmkit CSI driver\n\n" +
		"`--endpoint` is cinder-csi-plugin's too. Without `--mode` a process serves both the controller and the node, " +
		"as cinder-csi-plugin's does; `--provide-controller-service` and `--provide-node-service` narrow what it serves. " +
		"The logging flags are Kubernetes' (" + flagNames(logging) + ").\n\n")
	writeFlags(out, common)

	env, err := config.EnvMarkdown("Environment variables", "The node plugin's; the controller does not use them. "+
		"Both exist for a node plugin whose metadata service or config drive is elsewhere than on a Nova server (tests, a proxy).",
		oscsi.Config{})
	if err != nil {
		return nil, err
	}
	out.WriteString("\n#")
	out.Write(env)

	writeParameters(out, "StorageClass parameters",
		"A StorageClass of `"+oscsi.DriverName+"` may set only these parameters, cinder-csi-plugin's. "+
			"Any other parameter, or a value its description does not allow, fails CreateVolume with `InvalidArgument` naming it, "+
			"before any OpenStack API call (cinder-csi-plugin ignores unknown parameters: see [csi-migration.md](csi-migration.md)).",
		oscsi.Parameters)
	writeParameters(out, "VolumeSnapshotClass parameters",
		"A VolumeSnapshotClass of `"+oscsi.DriverName+"` may set only these parameters, cinder-csi-plugin's. "+
			"Any other parameter, or a value its description does not allow, fails CreateSnapshot with `InvalidArgument` naming it, "+
			"before any OpenStack API call.",
		oscsi.SnapshotParameters)
	return out.Bytes(), nil
}

// brightboxCSIConfig is docs/brightbox/csi-config.md: the CSI driver's
// environment (gbcsi.Config: it has no flags of its own and no
// --cloud-config) and the StorageClass parameters it accepts
// (gbcsi.Parameters).
func brightboxCSIConfig() ([]byte, error) {
	_, common, _ := csiFlags(gbcsi.New())
	intro := "`brightbox-csi-driver` reads these environment variables; it takes no `--cloud-config` file and no flags " +
		"of its own, only those of every ccmkit CSI driver (" + flagNames(common) + ", and the logging flags; " +
		"`brightbox-csi-driver --help` lists them). " +
		"The credentials are the Brightbox CCM's, the same variables: the shipped manifests read them from the CCM's Secret, " +
		"`kube-system/brightbox-credentials`, `BRIGHTBOX_CLIENT_SECRET` mounted as a file (`BRIGHTBOX_CLIENT_SECRET_FILE`). " +
		"Only the controller uses them; the node plugin makes no API call. See [csi.md](csi.md)."
	b, err := config.EnvMarkdown("Brightbox CSI driver configuration", intro, gbcsi.Config{})
	if err != nil {
		return nil, err
	}
	out := bytes.NewBuffer(b)
	writeParameters(out, "StorageClass parameters",
		"A StorageClass of `"+gbcsi.DriverName+"` may set only these parameters. "+
			"Any other parameter, or a value its description does not allow, fails CreateVolume with `InvalidArgument` naming it, "+
			"before any Brightbox API call.", gbcsi.Parameters)
	return out.Bytes(), nil
}

// writeParameters writes a section of StorageClass or VolumeSnapshotClass
// parameters: params maps a parameter name (or several, joined by
// commas, that share a description) to its description. Unprefixed
// parameters (fstype) come first, then the csi.storage.k8s.io ones, each
// group by name.
func writeParameters(out *bytes.Buffer, title, intro string, params map[string]string) {
	out.WriteString("\n## " + title + "\n\n" + intro + "\n\n")
	out.WriteString("| Parameter | Description |\n|---|---|\n")
	keys := slices.SortedFunc(maps.Keys(params), func(a, b string) int {
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
		fmt.Fprintf(out, "| %s | %s |\n", strings.Join(names, "<br>"), cell(params[k]))
	}
}

// csiFlags are the flags of the command csi.Main builds for p with opts,
// in three groups: the provider's own (those opts add), those of every
// ccmkit CSI driver (framework/csi's), and Kubernetes' logging flags.
func csiFlags(p csi.Provider, opts ...csi.Option) (provider, common, logging []*pflag.Flag) {
	logFlags := pflag.NewFlagSet("logging", pflag.ContinueOnError)
	logsapi.AddFlags(logsapi.NewLoggingConfiguration(), logFlags)
	bare := csi.NewCommand(p).Flags()
	csi.NewCommand(p, opts...).Flags().VisitAll(func(f *pflag.Flag) {
		switch {
		case logFlags.Lookup(f.Name) != nil:
			logging = append(logging, f)
		case bare.Lookup(f.Name) != nil:
			common = append(common, f)
		default:
			provider = append(provider, f)
		}
	})
	return provider, common, logging
}

// writeFlags writes a table of flags: those in use first, then those
// accepted and ignored (deprecated, or described as ignored), each group
// by name.
func writeFlags(out *bytes.Buffer, flags []*pflag.Flag) {
	ignored := func(f *pflag.Flag) bool { return f.Deprecated != "" || strings.HasPrefix(f.Usage, "Ignored") }
	sorted := slices.SortedStableFunc(slices.Values(flags), func(a, b *pflag.Flag) int {
		if ia, ib := ignored(a), ignored(b); ia != ib {
			if ia {
				return 1
			}
			return -1
		}
		return strings.Compare(a.Name, b.Name)
	})
	out.WriteString("| Flag | Type | Default | Description |\n|---|---|---|---|\n")
	for _, f := range sorted {
		def := f.DefValue
		if def == "" || def == "[]" {
			def = ""
		} else {
			def = "`" + def + "`"
		}
		usage := f.Usage
		if f.Deprecated != "" {
			usage += " Deprecated."
		}
		fmt.Fprintf(out, "| `--%s` | %s | %s | %s |\n", f.Name, flagType(f), def, cell(usage))
	}
}

// flagType names a flag's type as a reader sets it.
func flagType(f *pflag.Flag) string {
	switch t := f.Value.Type(); t {
	case "stringSlice":
		return "strings (repeatable, or comma-separated)"
	case "stringArray":
		return "string (repeatable)"
	case "stringToString":
		return "key=value (repeatable)"
	default:
		return t
	}
}

// flagNames is the flags' names, as a reader types them.
func flagNames(flags []*pflag.Flag) string {
	names := make([]string, 0, len(flags))
	for _, f := range flags {
		names = append(names, "`--"+f.Name+"`")
	}
	return strings.Join(names, ", ")
}

// cell escapes s for a Markdown table cell as framework/config does:
// pipes, and outside `code` spans the angle brackets a renderer would
// take for HTML; runs of white space become one space.
func cell(s string) string {
	parts := strings.Split(strings.ReplaceAll(s, "|", `\|`), "`")
	for i := 0; i < len(parts); i += 2 {
		parts[i] = angles.Replace(parts[i])
	}
	return strings.Join(strings.Fields(strings.Join(parts, "`")), " ")
}

var angles = strings.NewReplacer("<", "&lt;", ">", "&gt;")
