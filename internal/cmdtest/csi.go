package cmdtest

import (
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/protobuf/proto"
)

// CSI is one cloud's CSI driver binary, for CheckCSI: the settings that
// point it at a simulated cloud, how it must refuse bad ones, and what it
// serves.
type CSI struct {
	// Env is the environment that points the driver at the simulated
	// cloud's API and at the metadata service of one of its servers, the
	// node it runs on. Failures change it.
	Env map[string]string
	// CloudConfig is the --cloud-config file the driver needs, "" for
	// none.
	CloudConfig string
	// Args are the cloud's further arguments of every run: those of the
	// shipped manifests the tests can use.
	Args []string
	// Writes counts the mutating requests the cloud has served (its
	// simulator's Writes).
	Writes func() int
	// Help are what --help must mention beside the flags every ccmkit CSI
	// driver takes: the cloud's flags, settings, driver name.
	Help []string
	// Secrets are credentials no output may hold, at -v=10: the cloud's
	// own and the wrong ones Failures use.
	Secrets []string
	// Failures are settings that must stop the controller at start-up.
	Failures []Failure
	// DriverName is the name GetPluginInfo answers.
	DriverName string
	// Node is what NodeGetInfo must answer on the node.
	Node *csipb.NodeGetInfoResponse
	// Volume checks the volume CreateVolume made of a request for
	// "pvc-1" with a mount capability and no capacity range nor
	// parameters (the driver's defaults), and the cloud's record of it.
	Volume func(t *testing.T, v *csipb.Volume)
}

// csiFlags are the flags every ccmkit CSI driver takes: framework/csi's
// (NewCommand) and the logging flags.
var csiFlags = []string{
	"--endpoint", "--mode", "--metrics-address", "--by-id-dir", "--device-wait", "--version", "--logging-format", "--v",
}

// CheckCSI builds the command under test (see Build) and runs, one
// subtest each, the checks every cloud's CSI driver binary must pass:
//
//   - --version prints "<binary name> <version>", and --help lists the
//     flags every ccmkit CSI driver takes and c.Help;
//   - each of c.Failures stops the controller at start-up (-v=10) with
//     exit status 1 and output that mentions the Failure's Want, logs its
//     Request and holds no credential, and the cloud sees no write;
//   - with the cloud's settings and c.Args at -v=10, the driver serves
//     (ServeCSI) GetPluginInfo with c.DriverName, NodeGetInfo as c.Node
//     and a CreateVolume c.Volume checks; stopped with SIGTERM, it exits
//     0, and its log shows the API requests with their headers and holds
//     no credential.
func CheckCSI(t *testing.T, c CSI) {
	t.Helper()
	bin := Build(t)

	t.Run("version", func(t *testing.T) { checkVersion(t, bin) })
	t.Run("help", func(t *testing.T) { checkHelp(t, bin, csiFlags, c.Help) })

	for _, f := range c.Failures {
		t.Run("startup/"+f.Name, func(t *testing.T) {
			defer checkNoWrite(t, c.Writes, c.Writes())
			env, args := settings(t, c.Env, f.Env, f.CloudConfig)
			args = append(append(args, c.Args...), "--mode=controller", "--endpoint="+csiEndpoint(t), "-v=10")
			out, code := Run(t, bin, env, args...)
			if code != 1 {
				t.Fatalf("exit status %d, want 1; output:\n%s", code, out)
			}
			checkLog(t, "output", out, f.Want, f.Request, c.Secrets)
		})
	}

	t.Run("serve", func(t *testing.T) {
		env, args := settings(t, c.Env, nil, c.CloudConfig)
		d := ServeCSI(t, bin, env, append(append(args, c.Args...), "-v=10")...)
		ctx := t.Context()
		info, err := csipb.NewIdentityClient(d.Conn).GetPluginInfo(ctx, &csipb.GetPluginInfoRequest{})
		if err != nil || info.GetName() != c.DriverName || info.GetVendorVersion() == "" {
			t.Errorf("GetPluginInfo: %v, %v; want %s and a version", info, err, c.DriverName)
		}
		node, err := csipb.NewNodeClient(d.Conn).NodeGetInfo(ctx, &csipb.NodeGetInfoRequest{})
		if err != nil || !proto.Equal(node, c.Node) {
			t.Errorf("NodeGetInfo: %v, %v; want %v", node, err, c.Node)
		}
		vol, err := csipb.NewControllerClient(d.Conn).CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "pvc-1",
			VolumeCapabilities: []*csipb.VolumeCapability{{
				AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
				AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
			}}})
		if err != nil {
			t.Errorf("CreateVolume: %v", err)
		} else {
			c.Volume(t, vol.GetVolume())
		}
		log, code := d.Stop()
		if code != 0 {
			t.Errorf("stopped with SIGTERM: exit status %d, want 0; output:\n%s", code, log)
		}
		checkLog(t, "log", log, []string{`"Cloud API request"`, "requestHeaders"}, "", c.Secrets)
	})
}
