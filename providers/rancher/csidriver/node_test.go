package csidriver_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ccmkit/ccmkit/framework/csi"
	"github.com/ccmkit/ccmkit/framework/csi/csitest"
	"github.com/ccmkit/ccmkit/providers/rancher/csidriver"
	"github.com/ccmkit/ccmkit/providers/rancher/ranchersim"
)

// noCattle unsets the controller's settings: a node plugin has none.
var noCattle = map[string]string{"CATTLE_URL": "", "CATTLE_ACCESS_KEY": "", "CATTLE_SECRET_KEY": ""}

func publish(t *testing.T, n csipb.NodeClient, vol *csipb.Volume, target string, readOnly bool) error {
	t.Helper()
	_, err := n.NodePublishVolume(t.Context(), &csipb.NodePublishVolumeRequest{VolumeId: vol.GetVolumeId(), TargetPath: target,
		VolumeCapability: capability(true), VolumeContext: vol.GetVolumeContext(), Readonly: readOnly})
	return err
}

func unpublish(t *testing.T, n csipb.NodeClient, id, target string) error {
	t.Helper()
	_, err := n.NodeUnpublishVolume(t.Context(), &csipb.NodeUnpublishVolumeRequest{VolumeId: id, TargetPath: target})
	return err
}

// mountsUnder are the mount points under dir, from /proc/self/mountinfo.
func mountsUnder(t *testing.T, dir string) []string {
	t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) > 4 && strings.HasPrefix(fields[4], dir+"/") {
			out = append(out, fields[4])
		}
	}
	return out
}

// TestCSISharedAcrossNodes: one ReadWriteMany volume of rancher-nfs
// published on two hosts, each through its own node plugin and its own
// host's rancher-nfs volume plugin (which bind-mounts the volume's
// directory on the share, where rancher-nfs mounts the NFS export): what
// a Pod writes on one host the other reads; a second target on a host is
// a second caller of the plugin, which unmounts the volume when the last
// one leaves; a read-only target is read-only; unpublished everywhere and
// deleted, nothing is left: no mount, no volume in Cattle, no directory
// on the share. Real mounts, in a private mount namespace.
func TestCSISharedAcrossNodes(t *testing.T) {
	csitest.InMountNamespace(t, func(t *testing.T, _ string) {
		c := newCSICloud(t, ranchersim.Options{ProvisioningReads: -1}, 2)
		plugins := []*ranchersim.VolumePlugin{c.plugin(t, 0, ranchersim.DriverRancherNFS, false), c.plugin(t, 1, ranchersim.DriverRancherNFS, false)}
		ctl := csitest.StartLogged(t, c.provider(0, nil), csiSecret)
		nodes := []csipb.NodeClient{ctl.Node,
			csitest.StartDriver(t, csi.Options{Provider: c.provider(1, noCattle), Mode: csi.ModeNode}, 0).Node}
		resp, err := ctl.Controller.CreateVolume(t.Context(), &csipb.CreateVolumeRequest{Name: "pvc-shared",
			VolumeCapabilities: []*csipb.VolumeCapability{capability(true)}})
		if err != nil {
			t.Fatal(err)
		}
		vol := resp.GetVolume()
		kubelet := t.TempDir()
		target := func(node, pod string) string { return filepath.Join(kubelet, node, pod, "mount") }
		t1, t2, t3 := target("node-1", "writer"), target("node-2", "reader"), target("node-1", "viewer")
		for i, tg := range []string{t1, t2} {
			if err := publish(t, nodes[i], vol, tg, false); err != nil {
				t.Fatalf("NodePublishVolume on node-%d: %v", i+1, err)
			}
		}
		for _, step := range []struct{ from, to, file string }{{t1, t2, "hello"}, {t2, t1, "reply"}} {
			want := "written at " + step.from
			if err := os.WriteFile(filepath.Join(step.from, step.file), []byte(want), 0o600); err != nil {
				t.Fatal(err)
			}
			if got, err := os.ReadFile(filepath.Join(step.to, step.file)); err != nil || string(got) != want {
				t.Errorf("%s reads %q (%v), want %q", step.to, got, err, want)
			}
		}
		v := c.volume(t, vol.GetVolumeId())
		if v.HostID != c.hosts[0].ID || v.State != ranchersim.StateDetached || v.DriverOpts["created"] != "true" {
			t.Errorf("the Cattle volume once created on node-1: %+v; want its host, detached, created", v)
		}
		for i, tg := range []string{t1, t2} {
			if got := plugins[i].Mounted("pvc-shared"); !slices.Equal(got, []string{csidriver.MountID(tg)}) {
				t.Errorf("node-%d's plugin has the volume mounted for %v, want the target's ID", i+1, got)
			}
		}

		// Again at the same target: nothing new. A second target, read
		// only: a second caller.
		if err := publish(t, nodes[0], vol, t1, false); err != nil {
			t.Errorf("NodePublishVolume again: %v", err)
		}
		if err := publish(t, nodes[0], vol, t3, true); err != nil {
			t.Fatalf("NodePublishVolume read-only: %v", err)
		}
		if got, want := plugins[0].Mounted("pvc-shared"), []string{csidriver.MountID(t1), csidriver.MountID(t3)}; !slices.Equal(got, slices.Sorted(slices.Values(want))) {
			t.Errorf("node-1's plugin has the volume mounted for %v, want both targets", got)
		}
		if err := os.WriteFile(filepath.Join(t3, "no"), nil, 0o600); err == nil {
			t.Error("a read-only target took a write")
		}
		stats, err := nodes[1].NodeGetVolumeStats(t.Context(), &csipb.NodeGetVolumeStatsRequest{VolumeId: vol.GetVolumeId(), VolumePath: t2})
		if err != nil || len(stats.GetUsage()) == 0 {
			t.Errorf("NodeGetVolumeStats: %v, %v", stats, err)
		}

		// Unpublished one by one: the plugin keeps the volume mounted
		// while a target uses it.
		if err := unpublish(t, nodes[0], vol.GetVolumeId(), t1); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(filepath.Join(t3, "reply")); err != nil || !slices.Equal(plugins[0].Mounted("pvc-shared"), []string{csidriver.MountID(t3)}) {
			t.Errorf("after one of node-1's targets is unpublished: %q, %v, mounted for %v", got, err, plugins[0].Mounted("pvc-shared"))
		}
		for i, tg := range map[int]string{0: t3, 1: t2} {
			for range 2 {
				if err := unpublish(t, nodes[i], vol.GetVolumeId(), tg); err != nil {
					t.Errorf("NodeUnpublishVolume %s: %v", tg, err)
				}
			}
		}
		for i, p := range plugins {
			if got := p.Mounted("pvc-shared"); len(got) > 0 {
				t.Errorf("node-%d's plugin still has the volume mounted for %v", i+1, got)
			}
		}
		if m := slices.Concat(mountsUnder(t, kubelet), mountsUnder(t, c.dir)); len(m) > 0 {
			t.Errorf("mounts left: %v", m)
		}
		if _, err := ctl.UntilDone(func() error {
			_, err := ctl.Controller.DeleteVolume(t.Context(), &csipb.DeleteVolumeRequest{VolumeId: vol.GetVolumeId()})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(plugins[0].Export("pvc-shared")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the volume's directory on the share after its deletion: %v", err)
		}
		if live := c.live(); len(live) > 0 {
			t.Errorf("volumes left: %+v", live)
		}
	}, nil)
}

// fakePlugin is a volume plugin whose answers a test writes, on a unix
// socket: it records each request's method, Accept header and body.
type fakePlugin struct {
	mu       sync.Mutex
	calls    []string
	bodies   map[string]string
	accept   []string
	answers  map[string]func(w http.ResponseWriter)
	listener net.Listener
}

func startFakePlugin(t *testing.T, dir, driver string, answers map[string]func(w http.ResponseWriter)) *fakePlugin {
	t.Helper()
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(dir, driver+".sock"))
	if err != nil {
		t.Fatal(err)
	}
	f := &fakePlugin{bodies: map[string]string{}, answers: answers, listener: ln}
	srv := &http.Server{Handler: f}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return f
}

func (f *fakePlugin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	method := strings.TrimPrefix(r.URL.Path, "/")
	f.mu.Lock()
	f.calls = append(f.calls, r.Method+" "+method)
	f.bodies[method] = string(body)
	f.accept = append(f.accept, r.Header.Get("Accept"))
	answer := f.answers[method]
	f.mu.Unlock()
	if answer == nil {
		http.Error(w, "404 page not found", http.StatusNotFound)
		return
	}
	answer(w)
}

func (f *fakePlugin) body(method string) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out map[string]any
	_ = json.Unmarshal([]byte(f.bodies[method]), &out)
	return out
}

func answer(status int, body string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/vnd.docker.plugins.v1.1+json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// TestCSINodePlugin: the node speaks Docker's protocol (POSTs with
// Docker's Accept header; Plugin.Activate once; Get, then Create with the
// volume context's driverOpts for a volume the host has not, then Mount
// with the target's caller ID); every failure is an error, never a panic
// or a mount: no plugin socket, a plugin that is no volume driver, its
// Err, an answer that is not JSON or has no absolute mountpoint. An ID no
// volume has is NotFound, a volume context naming another volume
// InvalidArgument, both before any plugin call.
func TestCSINodePlugin(t *testing.T) {
	c := newCSICloud(t, ranchersim.Options{ProvisioningReads: -1}, 1)
	d := csitest.StartDriver(t, csi.Options{Provider: c.provider(0, noCattle), Mode: csi.ModeNode}, 0)
	mountAnswer := answer(http.StatusOK, `{"Mountpoint":"relative/path"}`)
	fake := startFakePlugin(t, c.pluginDir(0), "fake", map[string]func(http.ResponseWriter){
		"Plugin.Activate":      answer(http.StatusOK, `{"Implements":["VolumeDriver"]}`),
		"VolumeDriver.Get":     answer(http.StatusInternalServerError, `{"Err":"No such volume"}`),
		"VolumeDriver.Create":  answer(http.StatusOK, `{"Err":""}`),
		"VolumeDriver.Mount":   func(w http.ResponseWriter) { mountAnswer(w) },
		"VolumeDriver.Unmount": answer(http.StatusOK, `{}`),
	})
	startFakePlugin(t, c.pluginDir(0), "network", map[string]func(http.ResponseWriter){
		"Plugin.Activate": answer(http.StatusOK, `{"Implements":["NetworkDriver"]}`),
	})
	vol := &csipb.Volume{VolumeId: "1v7/fake/pvc-a", VolumeContext: map[string]string{"driver": "fake", "name": "pvc-a",
		"driverOpts.onRemove": "retain", "driverOpts.size": "10"}}
	target := filepath.Join(t.TempDir(), "pod", "mount")
	code := func(err error) codes.Code { return status.Code(err) }

	for _, tc := range []struct {
		name    string
		mount   func(http.ResponseWriter)
		vol     *csipb.Volume
		want    codes.Code
		message string
	}{
		{"relative mountpoint", nil, vol, codes.Internal, "not an absolute path"},
		{"not JSON", answer(http.StatusOK, `Mounted!`), vol, codes.Internal, "malformed answer"},
		{"plugin's Err", answer(http.StatusOK, `{"Err":"mount.nfs: access denied by server"}`), vol, codes.Internal, "access denied by server"},
		{"plugin's 500", answer(http.StatusInternalServerError, `panic: oops`), vol, codes.Internal, "panic: oops"},
		{"no plugin", nil, &csipb.Volume{VolumeId: "1v8/rancher-ebs/pvc-b"}, codes.Internal, filepath.Join(c.pluginDir(0), "rancher-ebs.sock")},
		{"not a volume driver", nil, &csipb.Volume{VolumeId: "1v9/network/pvc-c"}, codes.Internal, "not a volume driver"},
		{"malformed ID", nil, &csipb.Volume{VolumeId: "pvc-a"}, codes.NotFound, "not a volume ID"},
		{"another volume's context", nil, &csipb.Volume{VolumeId: "1v7/fake/pvc-a", VolumeContext: map[string]string{"name": "pvc-b"}},
			codes.InvalidArgument, `volume_context name "pvc-b"`},
	} {
		if tc.mount != nil {
			mountAnswer = tc.mount
		}
		err := publish(t, d.Node, tc.vol, target, false)
		if code(err) != tc.want || !strings.Contains(status.Convert(err).Message(), tc.message) {
			t.Errorf("%s: %v, want %v saying %q", tc.name, err, tc.want, tc.message)
		}
	}
	if m := mountsUnder(t, filepath.Dir(target)); len(m) > 0 {
		t.Errorf("mounts after failed publishes: %v", m)
	}

	fake.mu.Lock()
	calls, accept := slices.Clone(fake.calls), slices.Clone(fake.accept)
	fake.mu.Unlock()
	if calls[0] != "POST Plugin.Activate" || slices.Index(calls[1:], "POST Plugin.Activate") >= 0 {
		t.Errorf("calls %v: want Plugin.Activate once, first", calls)
	}
	if want := []string{"POST VolumeDriver.Get", "POST VolumeDriver.Create", "POST VolumeDriver.Mount"}; !slices.Equal(calls[1:4], want) {
		t.Errorf("calls %v: want %v after the activation", calls, want)
	}
	if b := fake.bodies["Plugin.Activate"]; b != "" {
		t.Errorf("Plugin.Activate with a body %q; Docker sends none", b)
	}
	for _, a := range accept {
		if a != "application/vnd.docker.plugins.v1.2+json" {
			t.Errorf("Accept: %q", a)
		}
	}
	if got := fake.body("VolumeDriver.Create"); got["Name"] != "pvc-a" || !maps.Equal(toStrings(got["Opts"]), map[string]string{"onRemove": "retain", "size": "10"}) {
		t.Errorf("VolumeDriver.Create %v: want the volume's name and its driverOpts", got)
	}
	if got := fake.body("VolumeDriver.Mount"); got["Name"] != "pvc-a" || got["ID"] != csidriver.MountID(target) {
		t.Errorf("VolumeDriver.Mount %v: want the name and the target's ID", got)
	}
	// Unpublishing a target never published: the plugin is told, and
	// that is no error.
	if err := unpublish(t, d.Node, vol.GetVolumeId(), target); err != nil {
		t.Errorf("NodeUnpublishVolume: %v", err)
	}
	if got := fake.body("VolumeDriver.Unmount"); got["Name"] != "pvc-a" || got["ID"] != csidriver.MountID(target) {
		t.Errorf("VolumeDriver.Unmount %v: want the name and the target's ID", got)
	}
	// An ID no volume has held nothing; a plugin that is not running
	// cannot release what it holds: an error, which the kubelet retries.
	if err := unpublish(t, d.Node, "pvc-a", target); err != nil {
		t.Errorf("NodeUnpublishVolume of a malformed ID: %v", err)
	}
	if err := unpublish(t, d.Node, "1v8/rancher-ebs/pvc-b", target); code(err) != codes.Internal {
		t.Errorf("NodeUnpublishVolume with no plugin: %v, want Internal", err)
	}
}

func toStrings(v any) map[string]string {
	m, _ := v.(map[string]any)
	out := map[string]string{}
	for k, x := range m {
		s, _ := x.(string)
		out[k] = s
	}
	return out
}
