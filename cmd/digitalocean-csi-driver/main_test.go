package main_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/ccmkit/ccmkit/internal/cmdtest"
	"github.com/ccmkit/ccmkit/providers/digitalocean/dosim"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }

const token = "dop_v1_binary-test-token-0c2e"

// TestBinary runs the driver binary as the shipped images do: --version,
// --help with csi-digitalocean's flags, the errors of a controller with
// no or a wrong token (naming the setting, never the token), and serving
// a simulated DigitalOcean on a socket at -v=10 without the token in its
// log.
func TestBinary(t *testing.T) {
	bin := cmdtest.Build(t)
	sim := dosim.NewServer(t, dosim.Options{Token: token, ProvisioningReads: -1})
	droplet := sim.AddDroplet(dosim.Droplet{Name: "node-1"})
	env := func(tok string) []string {
		return []string{"DIGITALOCEAN_ACCESS_TOKEN=" + tok, "DIGITALOCEAN_API_URL=" + sim.URL() + "/",
			"DIGITALOCEAN_METADATA_URL=" + sim.URL() + "/_sim/metadata/" + strconv.Itoa(droplet.ID)}
	}

	if out, code := cmdtest.Run(t, bin, nil, "--version"); code != 0 || !strings.HasPrefix(out, "digitalocean-csi-driver ") {
		t.Errorf("--version: exit %d, %q", code, out)
	}
	out, code := cmdtest.Run(t, bin, nil, "--help")
	for _, flag := range []string{"--endpoint", "--mode", "--token", "--url", "--region", "--do-tag", "--volume-limit",
		"--driver-name", "--debug-addr", "--default-volumes-page-size", "--do-api-rate-limit", "--validate-attachment", "--metadata-url"} {
		if code != 0 || !strings.Contains(out, flag) {
			t.Errorf("--help (exit %d) has no %s", code, flag)
		}
	}

	for _, tc := range []struct{ name, token, want string }{
		{"no token", "", "DIGITALOCEAN_ACCESS_TOKEN: required"},
		{"wrong token", "dop_v1_wrong-token-do-not-print", "rejected the token (check DIGITALOCEAN_ACCESS_TOKEN or DIGITALOCEAN_ACCESS_TOKEN_FILE)"},
	} {
		out, code := cmdtest.Run(t, bin, env(tc.token), "--mode", "controller", "--endpoint", "unix://"+filepath.Join(t.TempDir(), "csi.sock"), "-v=10")
		if code == 0 || !strings.Contains(out, tc.want) || (tc.token != "" && strings.Contains(out, tc.token)) {
			t.Errorf("%s: exit %d, output:\n%s\nwant an error with %q and without the token", tc.name, code, out, tc.want)
		}
	}

	// Serving.
	sock := filepath.Join(t.TempDir(), "csi.sock")
	var logs bytes.Buffer
	ctx, cancel := context.WithCancel(t.Context())
	cmd := exec.CommandContext(ctx, bin, "--endpoint", "unix://"+sock, "-v=10", "--do-tag", "k8s:cluster-1")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env(token)...)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			_ = cmd.Wait()
		}
	}
	defer stop()
	for i := 0; ; i++ {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if i > 1000 {
			stop()
			t.Fatalf("the driver does not listen:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	info, err := csipb.NewIdentityClient(conn).GetPluginInfo(t.Context(), &csipb.GetPluginInfoRequest{})
	if err != nil || info.GetName() != "dobs.csi.digitalocean.com" {
		t.Errorf("GetPluginInfo: %v, %v", info, err)
	}
	node, err := csipb.NewNodeClient(conn).NodeGetInfo(t.Context(), &csipb.NodeGetInfoRequest{})
	if err != nil || node.GetNodeId() != strconv.Itoa(droplet.ID) || node.GetMaxVolumesPerNode() != 7 {
		t.Errorf("NodeGetInfo: %v, %v", node, err)
	}
	vol, err := csipb.NewControllerClient(conn).CreateVolume(t.Context(), &csipb.CreateVolumeRequest{Name: "pvc-1",
		VolumeCapabilities: []*csipb.VolumeCapability{{
			AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
			AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
		}}})
	if err != nil || vol.GetVolume().GetCapacityBytes() != 16<<30 || vol.GetVolume().GetAccessibleTopology()[0].GetSegments()["region"] != dosim.DefaultRegion {
		t.Errorf("CreateVolume: %v, %v", vol, err)
	}
	stop()
	if !strings.Contains(logs.String(), "Cloud API request") {
		t.Errorf("no API request logged at -v=10:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), token) {
		t.Errorf("the token is in the log:\n%s", logs.String())
	}
}
