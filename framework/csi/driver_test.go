package csi_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/metrics"
	"k8s.io/klog/v2/textlogger"

	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/framework/csi/csitest"
)

// TestMain lets a test re-run this binary as the fake cloud's driver
// command.
func TestMain(m *testing.M) {
	if args := os.Getenv("CCMKIT_RUN_CSI_COMMAND"); args != "" {
		cmd := csi.NewCommand(csitest.NewFakeCloud(nil), csi.WithVersion("v1.2.3-test"), csi.WithCommandName("fake-csi-driver"))
		cmd.SetArgs(strings.Fields(args))
		os.Exit(cli.Run(cmd))
	}
	os.Exit(m.Run())
}

func runCommand(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0])
	cmd.Env = append(os.Environ(), "CCMKIT_RUN_CSI_COMMAND="+strings.Join(args, " "))
	out, err := cmd.Output()
	return string(out), err
}

func TestCommand(t *testing.T) {
	out, err := runCommand(t, "--version")
	if err != nil || out != "fake-csi-driver v1.2.3-test\n" {
		t.Errorf("--version: %q, %v", out, err)
	}
	if out, err := runCommand(t, "--mode=both"); err == nil {
		t.Errorf("--mode=both succeeded: %q", out)
	}
}

// At any -v, the secrets of a request never reach the log.
func TestSecretsStrippedFromLogs(t *testing.T) {
	var log csitest.LogBuffer
	logger := textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(10), textlogger.Output(&log)))
	d := csitest.StartDriver(t, csi.Options{Provider: csitest.NewFakeCloud(nil), ByIDDir: t.TempDir(), Logger: logger}, 0)
	ctx := t.Context()
	const secret = "dop_v1_0123456789abcdef-secret"
	secrets := map[string]string{"token": secret}
	req := createReq("v", 0)
	req.Secrets = secrets
	vol, err := d.Controller.CreateVolume(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = d.Controller.ControllerPublishVolume(ctx, &csipb.ControllerPublishVolumeRequest{VolumeId: vol.GetVolume().GetVolumeId(),
		NodeId: csitest.FakeNode, VolumeCapability: writer, Secrets: secrets})
	_, _ = d.Node.NodeStageVolume(ctx, &csipb.NodeStageVolumeRequest{VolumeId: "x", Secrets: secrets}) // fails: no staging path
	got := log.String()
	if strings.Contains(got, secret) {
		t.Errorf("the secret is in the log:\n%s", got)
	}
	for _, want := range []string{`method="CreateVolume"`, "***stripped***", `method="NodeStageVolume"`, "InvalidArgument"} {
		if !strings.Contains(got, want) {
			t.Errorf("the log does not show %q:\n%s", want, got)
		}
	}
}

func pluginCaps(t *testing.T, d *csitest.Driver) (services []csipb.PluginCapability_Service_Type, online bool) {
	t.Helper()
	caps, err := d.Identity.GetPluginCapabilities(t.Context(), &csipb.GetPluginCapabilitiesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range caps.GetCapabilities() {
		if s := c.GetService(); s != nil {
			services = append(services, s.GetType())
		}
		online = online || c.GetVolumeExpansion().GetType() == csipb.PluginCapability_VolumeExpansion_ONLINE
	}
	return services, online
}

func TestModes(t *testing.T) {
	cloud := csitest.NewFakeCloud(nil)
	for _, mode := range []csi.Mode{csi.ModeController, csi.ModeNode} {
		t.Run(string(mode), func(t *testing.T) {
			d := csitest.StartDriver(t, csi.Options{Provider: cloud, Mode: mode, ByIDDir: t.TempDir(), Version: "v9"}, 0)
			ctx := t.Context()
			info, err := d.Identity.GetPluginInfo(ctx, &csipb.GetPluginInfoRequest{})
			if err != nil || info.GetName() != csitest.FakeDriverName || info.GetVendorVersion() != "v9" {
				t.Errorf("GetPluginInfo: %v, %v", info, err)
			}
			if p, err := d.Identity.Probe(ctx, &csipb.ProbeRequest{}); err != nil || !p.GetReady().GetValue() {
				t.Errorf("Probe: %v, %v", p, err)
			}
			services, online := pluginCaps(t, d)
			if got := slices.Contains(services, csipb.PluginCapability_Service_CONTROLLER_SERVICE); got != (mode == csi.ModeController) {
				t.Errorf("CONTROLLER_SERVICE advertised: %v", got)
			}
			if !slices.Contains(services, csipb.PluginCapability_Service_VOLUME_ACCESSIBILITY_CONSTRAINTS) || !online {
				t.Errorf("capabilities %v, online expansion %v: want topology and online expansion", services, online)
			}
			_, nodeErr := d.Node.NodeGetInfo(ctx, &csipb.NodeGetInfoRequest{})
			_, ctrlErr := d.Controller.ControllerGetCapabilities(ctx, &csipb.ControllerGetCapabilitiesRequest{})
			if mode == csi.ModeController {
				wantCode(t, "node service in controller mode", nodeErr, codes.Unimplemented)
				if ctrlErr != nil {
					t.Error(ctrlErr)
				}
				return
			}
			wantCode(t, "controller service in node mode", ctrlErr, codes.Unimplemented)
			ni, err := d.Node.NodeGetInfo(ctx, &csipb.NodeGetInfoRequest{})
			if err != nil || ni.GetNodeId() != csitest.FakeNode || ni.GetMaxVolumesPerNode() != csitest.FakeLimits.MaxPerNode ||
				ni.GetAccessibleTopology().GetSegments()[csitest.FakeTopologyKey] != csitest.FakeZone {
				t.Errorf("NodeGetInfo: %v, %v", ni, err)
			}
		})
	}
}

// A provider without the optional interfaces advertises none of them.
type minimalProvider struct {
	csi.Provider
	csi.Attacher
}

func TestCapabilitiesFollowTheProvider(t *testing.T) {
	fake := csitest.NewFakeCloud(nil)
	d := csitest.StartDriver(t, csi.Options{Provider: minimalProvider{fake, fake}, ByIDDir: t.TempDir()}, 0)
	ctx := t.Context()
	caps, err := d.Controller.ControllerGetCapabilities(ctx, &csipb.ControllerGetCapabilitiesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var rpcs []csipb.ControllerServiceCapability_RPC_Type
	for _, c := range caps.GetCapabilities() {
		rpcs = append(rpcs, c.GetRpc().GetType())
	}
	for _, absent := range []csipb.ControllerServiceCapability_RPC_Type{csipb.ControllerServiceCapability_RPC_EXPAND_VOLUME,
		csipb.ControllerServiceCapability_RPC_CREATE_DELETE_SNAPSHOT, csipb.ControllerServiceCapability_RPC_LIST_VOLUMES} {
		if slices.Contains(rpcs, absent) {
			t.Errorf("%s advertised without the provider capability", absent)
		}
	}
	if _, online := pluginCaps(t, d); online {
		t.Error("online expansion advertised without an Expander")
	}
	_, err = d.Controller.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "s", SourceVolumeId: "v"})
	wantCode(t, "CreateSnapshot without a Snapshotter", err, codes.Unimplemented)
}

// unready fails its health check.
type unready struct{ *csitest.FakeCloud }

func (unready) Probe(context.Context) error { return errors.New("cloud API unreachable") }

func TestMetricsAndHealth(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	reg := metrics.NewKubeRegistry()
	d := csitest.StartDriver(t, csi.Options{Provider: unready{csitest.NewFakeCloud(nil)}, ByIDDir: t.TempDir(), Registry: reg, MetricsAddress: addr}, 0)
	ctx := t.Context()
	if _, err := d.Controller.CreateVolume(ctx, createReq("v", 0)); err != nil {
		t.Fatal(err)
	}
	_, _ = d.Controller.CreateVolume(ctx, createReq("", 0))
	_, err = d.Identity.Probe(ctx, &csipb.ProbeRequest{})
	wantCode(t, "Probe of an unready provider", err, codes.FailedPrecondition)

	get := func(path string) (int, string) {
		var resp *http.Response
		for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(20 * time.Millisecond) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
			if resp, err = http.DefaultClient.Do(req); err == nil {
				break
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	code, body := get("/metrics")
	for _, want := range []string{
		`cloudprovider_csi_operations_total{code="OK",driver="fake.csi.ccmkit.io",method="CreateVolume"} 1`,
		`cloudprovider_csi_operations_total{code="InvalidArgument",driver="fake.csi.ccmkit.io",method="CreateVolume"} 1`,
		`cloudprovider_csi_operation_duration_seconds_count{code="OK",driver="fake.csi.ccmkit.io",method="CreateVolume"} 1`,
	} {
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("/metrics (%d) lacks %s:\n%s", code, want, body)
		}
	}
	if code, body := get("/healthz"); code != http.StatusInternalServerError || !strings.Contains(body, "cloud API unreachable") {
		t.Errorf("/healthz of an unready provider: %d %q", code, body)
	}
}

func TestServeReplacesStaleSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "csi.sock")
	if err := os.WriteFile(sock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	d := csitest.StartDriver(t, csi.Options{Provider: csitest.NewFakeCloud(nil), Endpoint: "unix://" + sock, ByIDDir: t.TempDir()}, 0)
	if _, err := d.Identity.Probe(t.Context(), &csipb.ProbeRequest{}); err != nil {
		t.Errorf("Probe: %v", status.Convert(err).Message())
	}
}

// An inline ephemeral volume (a CSIDriver may list the mode, as the
// Cinder plugin's does) is refused as unsupported, before anything is
// mounted, naming what to use instead.
func TestInlineEphemeralVolumesRefused(t *testing.T) {
	d := csitest.StartDriver(t, csi.Options{Provider: csitest.NewFakeCloud(nil), ByIDDir: t.TempDir()}, 0)
	target := filepath.Join(t.TempDir(), "target")
	_, err := d.Node.NodePublishVolume(t.Context(), &csipb.NodePublishVolumeRequest{
		VolumeId: "csi-0123", TargetPath: target, VolumeCapability: writer,
		VolumeContext: map[string]string{"csi.storage.k8s.io/ephemeral": "true", "capacity": "1Gi"},
	})
	wantCode(t, "inline ephemeral NodePublishVolume", err, codes.Unimplemented)
	if err != nil && !strings.Contains(err.Error(), "generic ephemeral volume") {
		t.Errorf("the error does not say what to use instead: %v", err)
	}
	if _, statErr := os.Stat(target); !os.IsNotExist(statErr) {
		t.Errorf("the target path was made: %v", statErr)
	}
}

// WithProgramArg: a leading argument naming the program (as the manifests
// of a driver without an image entrypoint pass it) is ignored; any other
// argument is still refused.
func TestProgramArg(t *testing.T) {
	for _, tc := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"--version"}, true},
		{[]string{"/bin/fake-plugin", "--version"}, true},
		{[]string{"fake-plugin", "--version"}, true},
		{[]string{"/bin/other-plugin", "--version"}, false},
		{[]string{"/bin/fake-plugin", "extra", "--version"}, false},
	} {
		cmd := csi.NewCommand(csitest.NewFakeCloud(nil), csi.WithProgramArg("fake-plugin"), csi.WithVersion("v1"))
		cmd.SetArgs(tc.args)
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		if err := cmd.Execute(); (err == nil) != tc.ok {
			t.Errorf("%v: %v, want ok %v", tc.args, err, tc.ok)
		}
	}
	cmd := csi.NewCommand(csitest.NewFakeCloud(nil), csi.WithVersion("v1"))
	cmd.SetArgs([]string{"/bin/fake-plugin", "--version"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	if err := cmd.Execute(); err == nil {
		t.Error("without WithProgramArg, a leading argument was accepted")
	}
}
