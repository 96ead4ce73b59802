package main_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/ccmkit/ccmkit/internal/cmdtest"
	"github.com/ccmkit/ccmkit/providers/brightbox/gbsim"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }

const secret = "binary-test-client-secret-5d1e"

// TestBinary runs the driver binary as the shipped images would:
// --version, --help, the errors of a controller with no or wrong
// credentials (naming the setting, never the secret), and serving a
// simulated Brightbox on a socket at -v=10 without the secret in its log.
func TestBinary(t *testing.T) {
	bin := cmdtest.Build(t)
	sim := gbsim.NewServer(t, gbsim.Options{ClientSecret: secret, ProvisioningReads: -1})
	srv := sim.AddServer(gbsim.CloudServer{Name: "node-1"})
	env := func(clientSecret string) []string {
		out := []string{"BRIGHTBOX_METADATA_URL=" + sim.URL() + "/_sim/metadata/" + srv.ID}
		for k, v := range sim.Env(sim.URL()) {
			if k == "BRIGHTBOX_CLIENT_SECRET" {
				v = clientSecret
			}
			out = append(out, k+"="+v)
		}
		return out
	}

	if out, code := cmdtest.Run(t, bin, nil, "--version"); code != 0 || !strings.HasPrefix(out, "brightbox-csi-driver ") {
		t.Errorf("--version: exit %d, %q", code, out)
	}
	out, code := cmdtest.Run(t, bin, nil, "--help")
	for _, want := range []string{"--endpoint", "--mode", "--metrics-address", "csi.brightbox.com", "BRIGHTBOX_METADATA_URL"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("--help (exit %d) has no %s", code, want)
		}
	}

	for _, tc := range []struct{ name, secret, want string }{
		{"no credentials", "", "BRIGHTBOX_CLIENT_SECRET: required with BRIGHTBOX_CLIENT"},
		{"wrong secret", "wrong-secret-do-not-print", "check BRIGHTBOX_CLIENT and BRIGHTBOX_CLIENT_SECRET"},
	} {
		out, code := cmdtest.Run(t, bin, env(tc.secret), "--mode", "controller", "--endpoint", "unix://"+filepath.Join(t.TempDir(), "csi.sock"), "-v=10")
		if code == 0 || !strings.Contains(out, tc.want) || (tc.secret != "" && strings.Contains(out, tc.secret)) {
			t.Errorf("%s: exit %d, output:\n%s\nwant an error with %q and without the secret", tc.name, code, out, tc.want)
		}
	}

	// Serving.
	sock := filepath.Join(t.TempDir(), "csi.sock")
	var logs bytes.Buffer
	ctx, cancel := context.WithCancel(t.Context())
	cmd := exec.CommandContext(ctx, bin, "--endpoint", "unix://"+sock, "-v=10")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env(secret)...)
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
	if err != nil || info.GetName() != "csi.brightbox.com" {
		t.Errorf("GetPluginInfo: %v, %v", info, err)
	}
	node, err := csipb.NewNodeClient(conn).NodeGetInfo(t.Context(), &csipb.NodeGetInfoRequest{})
	if err != nil || node.GetNodeId() != srv.ID || node.GetMaxVolumesPerNode() != 6 || node.GetAccessibleTopology() != nil {
		t.Errorf("NodeGetInfo: %v, %v; want %s, 6 volumes, no topology", node, err, srv.ID)
	}
	vol, err := csipb.NewControllerClient(conn).CreateVolume(t.Context(), &csipb.CreateVolumeRequest{Name: "pvc-1",
		VolumeCapabilities: []*csipb.VolumeCapability{{
			AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
			AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
		}}})
	if err != nil || vol.GetVolume().GetCapacityBytes() != 40<<30 || len(sim.Volumes()) != 1 || sim.Volumes()[0].Size != 40960 {
		t.Errorf("CreateVolume: %v, %v; want a 40 GiB volume (40960 MiB)", vol, err)
	}
	stop()
	if !strings.Contains(logs.String(), "Cloud API request") {
		t.Errorf("no API request logged at -v=10:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), secret) {
		t.Errorf("the client secret is in the log:\n%s", logs.String())
	}
}
