package csidriver_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/framework/csi/csitest"
	"github.com/ccmkit/ccmkit/providers/openstack/csidriver"
	"github.com/ccmkit/ccmkit/providers/openstack/internal/cloud"
	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
)

// The driver's settings: cinder-csi-plugin's flags, the cloud.conf it
// shares with the CCM, the credentials, the StorageClass and
// VolumeSnapshotClass parameters.

// writeFile writes content to a new file in a temporary directory.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// initCSI runs p's Init in mode, logging into logs.
func initCSI(t *testing.T, p *csidriver.Driver, mode csi.Mode, logs *csitest.LogBuffer) error {
	t.Helper()
	if logs == nil {
		logs = &csitest.LogBuffer{}
	}
	return p.Init(t.Context(), &csi.Env{Mode: mode, Logger: logs.Logger(), Version: "test"})
}

// TestCSIConfigErrors: every bad setting stops the driver with an error
// naming it, before any API call (there is no cloud here).
func TestCSIConfigErrors(t *testing.T) {
	const secret = "s3cret-never-print"
	global := "[Global]\nauth-url = http://127.0.0.1:1/v3\nregion = R\nusername = u\npassword = " + secret + "\nuser-domain-name = Default\n"
	for _, tc := range []struct {
		name   string
		mode   csi.Mode
		conf   string
		env    map[string]string
		args   []string
		naming []string
	}{
		{name: "controller without --cloud-config", mode: csi.ModeController, naming: []string{"--cloud-config: required by the controller"}},
		{name: "controller without credentials", mode: csi.ModeAll, conf: "[Global]\nregion = R\n",
			naming: []string{"[Global] auth-url: required", "[Global] credentials"}},
		{name: "attach limit", mode: csi.ModeController, conf: global + "[BlockStorage]\nnode-volume-attach-limit = 300\n",
			naming: []string{"[BlockStorage] node-volume-attach-limit: 300 is not between 0 and 256"}},
		{name: "attach limit of a node", mode: csi.ModeNode, conf: "[BlockStorage]\nnode-volume-attach-limit = -1\n",
			naming: []string{"[BlockStorage] node-volume-attach-limit: -1"}},
		{name: "unknown key", mode: csi.ModeNode, conf: "[BlockStorage]\nignore-volume-microversions = true\n",
			naming: []string{"[BlockStorage] ignore-volume-microversions: unknown key (line 2)"}},
		{name: "bad bool", mode: csi.ModeController, conf: global + "[BlockStorage]\nignore-volume-az = maybe\n",
			naming: []string{"[BlockStorage] ignore-volume-az: invalid bool"}},
		{name: "search order", mode: csi.ModeNode, conf: "[Metadata]\nsearch-order = configDrive,cloudInit\n",
			naming: []string{`[Metadata] search-order: "cloudInit"`}},
		{name: "metadata URL", mode: csi.ModeNode, env: map[string]string{"OS_METADATA_URL": "ftp://x"}, naming: []string{"OS_METADATA_URL"}},
		{name: "metadata URL flag", mode: csi.ModeNode, args: []string{"--metadata-url", "169.254.169.254"}, naming: []string{"OS_METADATA_URL"}},
		{name: "other clouds", mode: csi.ModeController, conf: global, args: []string{"--cloud-name", "region-two"},
			naming: []string{`--cloud-name "region-two": only the default cloud`}},
		{name: "other cloud sections", mode: csi.ModeController, conf: global + "[Global \"region-two\"]\nregion = R2\n",
			naming: []string{`[Global] takes no name, got [Global "region-two"]`}},
		{name: "no service", mode: csi.ModeAll, args: []string{"--provide-controller-service=false", "--provide-node-service=false"},
			naming: []string{"no CSI service to serve", "--provide-controller-service=false", "--provide-node-service=false"}},
		{name: "no service in the mode", mode: csi.ModeController, conf: global, args: []string{"--provide-controller-service=false"},
			naming: []string{"no CSI service to serve: --mode controller"}},
		{name: "second file", mode: csi.ModeController, conf: global, args: []string{"--cloud-config", "/nonexistent/cloud.conf"},
			naming: []string{"/nonexistent/cloud.conf"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if tc.conf != "" {
				args = append([]string{"--cloud-config", writeFile(t, "cloud.conf", tc.conf)}, args...)
			}
			p := csitest.WithFlags(t, csidriver.NewWithEnv(tc.env), args...)
			logs := &csitest.LogBuffer{}
			err := initCSI(t, p, tc.mode, logs)
			for _, w := range tc.naming {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("Init: %v; want it to name %q", err, w)
				}
			}
			if err != nil && strings.Contains(err.Error()+logs.String(), secret) {
				t.Errorf("the password is in the error or the log: %v", err)
			}
		})
	}
}

// TestCSICloudConfigShared: one cloud.conf serves the CCM and the CSI
// driver: the CSI driver takes an OpenStack CCM cloud.conf (with its
// [LoadBalancer], [Networking], ... sections), and merges several files
// as cinder-csi-plugin does, later ones winning.
func TestCSICloudConfigShared(t *testing.T) {
	occm := writeFile(t, "occm.conf", `[Global]
auth-url = https://keystone.example.com:5000/v3
region = RegionOne
application-credential-id = 4f3c
application-credential-secret = s3cret

[LoadBalancer]
use-octavia = true
floating-network-id = 6b1e0f0c-0000-0000-0000-000000000002

[Networking]
public-network-name = public

[Metadata]
search-order = metadataService

[BlockStorage]
bs-version = v3
trust-device-path = false
ignore-volume-az = true
`)
	csiConf := writeFile(t, "csi.conf", `[BlockStorage]
node-volume-attach-limit = 32
rescan-on-resize = true
ignore-volume-microversion = true
`)
	for _, mode := range []csi.Mode{csi.ModeController, csi.ModeNode} {
		bs, notes, err := csidriver.LoadCSICloudConfig(nil, []string{occm, csiConf}, mode)
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		want := cloud.BlockStorageSection{NodeVolumeAttachLimit: 32, RescanOnResize: true, IgnoreVolumeAZ: true,
			IgnoreVolumeMicroversion: true, BSVersion: "v3"}
		if bs != want {
			t.Errorf("%s: [BlockStorage] %+v, want %+v", mode, bs, want)
		}
		for _, n := range notes {
			if strings.Contains(n, "BlockStorage") {
				t.Errorf("%s: the CSI driver notes %q", mode, n)
			}
		}
	}
	// A node plugin needs no [Global]; a file it cannot find is the
	// defaults, as cinder-csi-plugin's node plugin takes it.
	bs, notes, err := csidriver.LoadCSICloudConfig(nil, []string{"/nonexistent/cloud.conf"}, csi.ModeNode)
	if err != nil || bs.NodeVolumeAttachLimit != 0 || len(notes) != 1 || !strings.Contains(notes[0], "/nonexistent/cloud.conf does not exist") {
		t.Errorf("node plugin without its cloud.conf: %+v, %q, %v", bs, notes, err)
	}
	if _, _, err := csidriver.LoadCSICloudConfig(nil, []string{csiConf}, csi.ModeController); err == nil || !strings.Contains(err.Error(), "[Global] auth-url") {
		t.Errorf("controller without [Global]: %v", err)
	}
}

// TestCSICredentials: the controller authenticates at start-up with the
// cloud.conf's [Global] credentials (a password, an application
// credential); a wrong one stops the driver with an error that names the
// settings, never the secret, before it serves; a node plugin needs none.
func TestCSICredentials(t *testing.T) {
	cloud := newCSICloud(t, openstacksim.Options{
		ApplicationCredentials: []openstacksim.ApplicationCredential{{ID: "ac-1", Secret: "ac-secret-never-print", User: "csi"}},
	})
	global := "[Global]\nauth-url = " + cloud.sim.AuthURL() + "\nregion = " + cloud.sim.Region() + "\n"
	serve := func(mode csi.Mode, conf string) (string, error) {
		t.Helper()
		p := csitest.WithFlags(t, csidriver.NewWithEnv(cloud.env), "--cloud-config", writeFile(t, "cloud.conf", conf))
		logs := &csitest.LogBuffer{}
		err := initCSI(t, p, mode, logs)
		return logs.String(), err
	}
	for _, tc := range []struct {
		name string
		mode csi.Mode
		conf string
		want []string // "" for success
	}{
		{"password", csi.ModeController, cloud.sim.CloudConfig(), nil},
		{"application credential", csi.ModeAll, global + "application-credential-id = ac-1\napplication-credential-secret = ac-secret-never-print\n", nil},
		{"wrong password", csi.ModeController, strings.Replace(cloud.sim.CloudConfig(), csiPassword, "wrong-pw-never-print", 1),
			[]string{"authentication failed", "401", "check [Global] username and password"}},
		{"wrong secret", csi.ModeController, global + "application-credential-id = ac-1\napplication-credential-secret = wrong-secret-never-print\n",
			[]string{"authentication failed", "check [Global] application-credential-id and application-credential-secret"}},
		{"no credentials", csi.ModeAll, global, []string{"[Global] credentials"}},
		{"region without endpoints", csi.ModeController, strings.Replace(cloud.sim.CloudConfig(), "region = "+cloud.sim.Region(), "region = Elsewhere", 1),
			[]string{`endpoint for [Global] region "Elsewhere"`}},
		{"node plugin", csi.ModeNode, "[Metadata]\nsearch-order = metadataService\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs, err := serve(tc.mode, tc.conf)
			switch {
			case tc.want == nil && err != nil:
				t.Errorf("Init: %v", err)
			case tc.want != nil && err == nil:
				t.Errorf("Init: no error, want %q", tc.want)
			}
			for _, w := range tc.want {
				if err != nil && !strings.Contains(err.Error(), w) {
					t.Errorf("Init: %v; want it to name %q", err, w)
				}
			}
			for _, secret := range []string{csiPassword, "never-print"} {
				if strings.Contains(logs, secret) || (err != nil && strings.Contains(err.Error(), secret)) {
					t.Errorf("a secret is in the log or the error: %v", err)
				}
			}
		})
	}
}

// TestCSIParameters: each bad StorageClass or VolumeSnapshotClass
// parameter is named, with what it may be; what the sidecars pass on is
// taken.
func TestCSIParameters(t *testing.T) {
	p := csidriver.New()
	for _, tc := range []struct {
		params map[string]string
		bad    []string
	}{
		{params: map[string]string{"type": "ssd", "availability": "nova", "fstype": "xfs", "csi.storage.k8s.io/fstype": "ext4",
			"csi.storage.k8s.io/pvc/name": "data", "csi.storage.k8s.io/pvc/namespace": "default", "csi.storage.k8s.io/pv/name": "pvc-1"}},
		{params: map[string]string{"FSType": "btrfs"}, bad: []string{`FSType: "btrfs" is not ext4, xfs, ext3, ext2`}},
		{params: map[string]string{"zone": "nova", "typo": "x"}, bad: []string{"typo: unknown parameter", "zone: unknown parameter"}},
		{params: map[string]string{"force-create": "true"}, bad: []string{"force-create: unknown parameter"}},
	} {
		err := p.ValidateParameters(tc.params)
		check(t, "ValidateParameters", tc.params, err, tc.bad)
	}
	for _, tc := range []struct {
		params map[string]string
		bad    []string
	}{
		{params: map[string]string{"force-create": "true", "type": "snapshot", "availability": "nova", "backup-max-duration-seconds-per-gb": "20",
			"csi.storage.k8s.io/volumesnapshot/name": "s", "csi.storage.k8s.io/volumesnapshot/namespace": "default",
			"csi.storage.k8s.io/volumesnapshotcontent/name": "c"}},
		{params: map[string]string{"type": "backup"}, bad: []string{"type: backup is not supported"}},
		{params: map[string]string{"type": "clone", "force-create": "yes please"}, bad: []string{`type: "clone" is not snapshot`, `force-create: "yes please" is not true or false`}},
		{params: map[string]string{"backup-max-duration-seconds-per-gb": "-1", "fstype": "ext4"},
			bad: []string{"backup-max-duration-seconds-per-gb", "fstype: unknown parameter"}},
	} {
		err := p.ValidateSnapshotParameters(tc.params)
		check(t, "ValidateSnapshotParameters", tc.params, err, tc.bad)
	}
}

func check(t *testing.T, what string, params map[string]string, err error, bad []string) {
	t.Helper()
	if len(bad) == 0 && err != nil {
		t.Errorf("%s(%v): %v", what, params, err)
	}
	if len(bad) > 0 && err == nil {
		t.Errorf("%s(%v): no error", what, params)
	}
	for _, b := range bad {
		if err != nil && !strings.Contains(err.Error(), b) {
			t.Errorf("%s(%v): %v; want it to name %q", what, params, err, b)
		}
	}
}

// TestCSIUpstreamArgs: the arguments of cinder-csi-plugin's own manifests
// (manifests/cinder-csi-plugin in cloud-provider-openstack, controller
// and node plugin), its program path first, are taken as they are, so an
// install that only swaps the image starts.
func TestCSIUpstreamArgs(t *testing.T) {
	conf := writeFile(t, "cloud.conf", "[Global]\nauth-url = http://keystone.invalid/v3\n")
	for name, args := range map[string][]string{
		"controller": {"/bin/cinder-csi-plugin", "--endpoint=unix://csi/csi.sock", "--cloud-config=" + conf,
			"--cluster=kubernetes", "--pvc-annotations", "--v=1"},
		"node": {"/bin/cinder-csi-plugin", "--endpoint=unix://csi/csi.sock", "--provide-controller-service=false",
			"--cloud-config=" + conf, "--v=1"},
	} {
		p := csidriver.NewWithEnv(nil)
		cmd := csi.NewCommand(p, p.CommandOptions()...)
		cmd.SetArgs(append(args, "--version"))
		cmd.SetOut(io.Discard)
		if err := cmd.Execute(); err != nil {
			t.Errorf("%s: cinder-csi-plugin's arguments refused: %v", name, err)
		}
	}
}
