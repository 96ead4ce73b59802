package ranchersim

import (
	"context"
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
	"testing"

	rancher "github.com/rancher/go-rancher/v2"
)

// pluginConn talks to a volume plugin over its socket as Docker's plugin
// client does: POST /<method> with a JSON body and
// Accept: application/vnd.docker.plugins.v1.2+json.
type pluginConn struct {
	t      *testing.T
	client *http.Client
}

func dialPlugin(t *testing.T, socket string) *pluginConn {
	t.Helper()
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socket)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &pluginConn{t: t, client: &http.Client{Transport: tr}}
}

// pluginAnswer is an answer of the plugin: status, Content-Type, body.
type pluginAnswer struct {
	status      int
	contentType string
	raw         string
	body        map[string]any
}

// call sends method ("VolumeDriver.Create") with body (raw JSON when a
// string).
func (p *pluginConn) call(method string, body any) pluginAnswer {
	p.t.Helper()
	data, ok := body.(string)
	if !ok {
		b, err := json.Marshal(body)
		if err != nil {
			p.t.Fatal(err)
		}
		data = string(b)
	}
	req, err := http.NewRequestWithContext(p.t.Context(), http.MethodPost, "http://plugin/"+method, strings.NewReader(data))
	if err != nil {
		p.t.Fatal(err)
	}
	req.Header.Set("Accept", "application/vnd.docker.plugins.v1.2+json")
	resp, err := p.client.Do(req)
	if err != nil {
		p.t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		p.t.Fatal(err)
	}
	a := pluginAnswer{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), raw: string(raw)}
	_ = json.Unmarshal(raw, &a.body)
	return a
}

// ok fails unless the answer is a 200 without an error.
func (a pluginAnswer) ok(t *testing.T, what string) pluginAnswer {
	t.Helper()
	if a.status != http.StatusOK || a.body["Err"] != nil && a.body["Err"] != "" {
		t.Fatalf("%s: %d %s", what, a.status, a.raw)
	}
	return a
}

// failed fails unless the answer is Docker's error: 500 {"Err": ...}
// holding want.
func (a pluginAnswer) failed(t *testing.T, what, want string) {
	t.Helper()
	e, _ := a.body["Err"].(string)
	if a.status != http.StatusInternalServerError || !strings.Contains(e, want) {
		t.Errorf("%s: %d %s, want 500 with Err holding %q", what, a.status, a.raw, want)
	}
}

// pluginHost is one simulated host running the storage driver's plugin.
type pluginHost struct {
	host   Host
	plugin *VolumePlugin
	conn   *pluginConn
}

// startPluginHost adds a host and starts the driver's plugin on it, with
// its own socket directory and mount root, on the shared export.
func startPluginHost(t *testing.T, s *Server, name, export string, opts VolumePluginOptions) pluginHost {
	t.Helper()
	h := s.AddHost(Host{Hostname: name})
	root := t.TempDir()
	opts.Driver = DriverRancherNFS
	opts.HostID = h.ID
	opts.SocketDir = filepath.Join(root, "run", "docker", "plugins")
	opts.ExportDir = export
	opts.MountRoot = filepath.Join(root, "var", "lib", "rancher", "volumes")
	p, err := s.StartVolumePlugin(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("closing %s's plugin: %v", name, err)
		}
	})
	return pluginHost{host: h, plugin: p, conn: dialPlugin(t, p.Socket())}
}

// TestVolumePluginProtocol: Docker's VolumeDriver protocol over the
// plugin's socket, and how the plugin reads and writes Cattle's records
// as rancher/storage does (without the bind mount, which needs root).
func TestVolumePluginProtocol(t *testing.T) {
	s, c := setup(t, Options{})
	s.AddStorageDriver(RancherNFS())
	export := t.TempDir()
	a := startPluginHost(t, s, "node-a", export, VolumePluginOptions{NoMount: true})
	if want := filepath.Join(filepath.Dir(a.plugin.Socket()), "rancher-nfs.sock"); a.plugin.Socket() != want {
		t.Errorf("socket %s, want %s", a.plugin.Socket(), want)
	}
	p := a.conn

	act := p.call("Plugin.Activate", nil).ok(t, "Activate")
	if impl, _ := act.body["Implements"].([]any); len(impl) != 1 || impl[0] != "VolumeDriver" ||
		act.contentType != "application/vnd.docker.plugins.v1.1+json" {
		t.Errorf("Activate: %s (%s)", act.raw, act.contentType)
	}
	caps := p.call("VolumeDriver.Capabilities", map[string]any{}).ok(t, "Capabilities")
	if scope := caps.body["Capabilities"].(map[string]any)["Scope"]; scope != "global" {
		t.Errorf("Capabilities: %s, want scope global", caps.raw)
	}

	// No Cattle volume of that name: rancher/storage fails the create
	// and leaves nothing behind.
	p.call("VolumeDriver.Create", map[string]any{"Name": "orphan"}).failed(t, "Create without a Cattle volume", "No such volume")
	if _, err := os.Stat(filepath.Join(export, "orphan")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed create left its directory: %v", err)
	}
	p.call("VolumeDriver.Create", map[string]any{"Name": "../escape"}).failed(t, "Create of a bad name", "not a valid volume name")
	p.call("VolumeDriver.Mount", map[string]any{"Name": "orphan", "ID": "c1"}).failed(t, "Mount without a volume", "No such volume")
	p.call("VolumeDriver.Get", map[string]any{"Name": "orphan"}).failed(t, "Get without a volume", "No such volume")
	if bad := p.call("VolumeDriver.Create", "{not json"); bad.status != http.StatusBadRequest {
		t.Errorf("a body that is not JSON: %d %s", bad.status, bad.raw)
	}

	vol, err := c.Volume.Create(&rancher.Volume{Name: "shared", Driver: DriverRancherNFS,
		DriverOpts: map[string]any{"mntOptions": "vers=4.1"}})
	if err != nil {
		t.Fatal(err)
	}
	// Not yet created by a host (inactive is none of rancher/storage's
	// good states): Docker sees no volume.
	s.Advance()
	if list := p.call("VolumeDriver.List", map[string]any{}).ok(t, "List"); len(list.body["Volumes"].([]any)) != 0 {
		t.Errorf("List before any host created it: %s", list.raw)
	}
	p.call("VolumeDriver.Create", map[string]any{"Name": "shared", "Opts": map[string]string{"mntOptions": "vers=4.1"}}).ok(t, "Create")
	if fi, err := os.Stat(filepath.Join(export, "shared")); err != nil || !fi.IsDir() {
		t.Fatalf("the volume's directory on the share: %v", err)
	}
	saved, _ := s.Volume(vol.Id)
	wantOpts := map[string]string{"mntOptions": "vers=4.1", "created": "true", "name": "shared", "onRemove": OnRemovePurge}
	if saved.HostID != a.host.ID || saved.State != StateUpdatingInactive || !maps.Equal(saved.DriverOpts, wantOpts) {
		t.Fatalf("saved by the plugin: %+v", saved)
	}
	s.Advance()
	s.Advance()
	if got, _ := s.Volume(vol.Id); got.State != StateDetached || len(got.StoragePoolIDs) != 1 {
		t.Errorf("after the plugin saved it: %s, pools %v; want detached in the pool", got.State, got.StoragePoolIDs)
	}
	// A second create (another container, another host) does nothing.
	p.call("VolumeDriver.Create", map[string]any{"Name": "shared"}).ok(t, "Create again")

	get := p.call("VolumeDriver.Get", map[string]any{"Name": "shared"}).ok(t, "Get")
	gv := get.body["Volume"].(map[string]any)
	if gv["Name"] != "shared" || gv["Mountpoint"] != nil || gv["Status"].(map[string]any)["state"] != StateDetached {
		t.Errorf("Get: %s", get.raw)
	}
	mp := a.plugin.Mountpoint("shared")
	for _, id := range []string{"c1", "c2"} {
		m := p.call("VolumeDriver.Mount", map[string]any{"Name": "shared", "ID": id}).ok(t, "Mount "+id)
		if m.body["Mountpoint"] != mp {
			t.Fatalf("Mount %s: %s, want %s", id, m.raw, mp)
		}
	}
	if fi, err := os.Stat(mp); err != nil || !fi.IsDir() || !slices.Equal(a.plugin.Mounted("shared"), []string{"c1", "c2"}) {
		t.Fatalf("mountpoint %s: %v, mounted for %v", mp, err, a.plugin.Mounted("shared"))
	}
	if path := p.call("VolumeDriver.Path", map[string]any{"Name": "shared"}).ok(t, "Path"); path.body["Mountpoint"] != mp {
		t.Errorf("Path: %s", path.raw)
	}
	list := p.call("VolumeDriver.List", map[string]any{}).ok(t, "List")
	if vols := list.body["Volumes"].([]any); len(vols) != 1 || vols[0].(map[string]any)["Mountpoint"] != mp {
		t.Errorf("List: %s", list.raw)
	}
	p.call("VolumeDriver.Unmount", map[string]any{"Name": "shared", "ID": "c1"}).ok(t, "Unmount c1")
	if _, err := os.Stat(mp); err != nil {
		t.Errorf("unmounted for c1 while c2 still uses it: %v", err)
	}
	p.call("VolumeDriver.Unmount", map[string]any{"Name": "shared", "ID": "c2"}).ok(t, "Unmount c2")
	p.call("VolumeDriver.Unmount", map[string]any{"Name": "shared", "ID": "c2"}).ok(t, "Unmount c2 again")
	if _, err := os.Stat(mp); !errors.Is(err, os.ErrNotExist) || len(a.plugin.Mounted("shared")) != 0 {
		t.Errorf("after the last unmount the mountpoint is %v, mounted for %v", err, a.plugin.Mounted("shared"))
	}

	// Docker's own remove is a no-op while Rancher keeps the volume.
	p.call("VolumeDriver.Remove", map[string]any{"Name": "shared"}).ok(t, "Remove")
	if _, err := os.Stat(filepath.Join(export, "shared")); err != nil {
		t.Fatalf("Docker's remove deleted the data: %v", err)
	}
	// Rancher's removal purges it (rancher-nfs's onRemove purge).
	if err := c.Volume.Delete(volumeByID(t, c, vol.Id)); err != nil {
		t.Fatal(err)
	}
	s.Advance()
	if _, err := os.Stat(filepath.Join(export, "shared")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the removed volume's data is still on the share: %v", err)
	}
	p.call("VolumeDriver.Get", map[string]any{"Name": "shared"}).failed(t, "Get after removal", "No such volume")
	p.call("VolumeDriver.Remove", map[string]any{"Name": "shared"}).ok(t, "Remove of a volume Rancher has not")
}

// TestVolumePluginRetain: a volume whose onRemove is retain keeps its
// data when Rancher removes it, as rancher-nfs's delete retains it; and
// with no plugin of the driver running, nothing deletes anything.
func TestVolumePluginRetain(t *testing.T) {
	s, c := setup(t, Options{})
	s.AddStorageDriver(RancherNFS())
	export := t.TempDir()
	a := startPluginHost(t, s, "node-a", export, VolumePluginOptions{NoMount: true, OnRemove: OnRemoveRetain})
	kept, err := c.Volume.Create(&rancher.Volume{Name: "kept", Driver: DriverRancherNFS})
	if err != nil {
		t.Fatal(err)
	}
	purged, err := c.Volume.Create(&rancher.Volume{Name: "purged", Driver: DriverRancherNFS})
	if err != nil {
		t.Fatal(err)
	}
	a.conn.call("VolumeDriver.Create", map[string]any{"Name": "kept"}).ok(t, "Create kept")
	a.conn.call("VolumeDriver.Create", map[string]any{"Name": "purged", "Opts": map[string]string{"onRemove": "purge"}}).ok(t, "Create purged")
	for _, id := range []string{kept.Id, purged.Id} {
		s.RemoveVolume(id)
	}
	s.Advance()
	s.Advance()
	if _, err := os.Stat(filepath.Join(export, "kept")); err != nil {
		t.Errorf("a retained volume's data went: %v", err)
	}
	if _, err := os.Stat(filepath.Join(export, "purged")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the volume with onRemove purge kept its data: %v", err)
	}
}

// TestVolumePluginOptions: what StartVolumePlugin refuses, naming it.
func TestVolumePluginOptions(t *testing.T) {
	s := NewServer(t, Options{})
	h := s.AddHost(Host{})
	s.AddStorageDriver(RancherNFS())
	dir := t.TempDir()
	good := VolumePluginOptions{Driver: DriverRancherNFS, HostID: h.ID, SocketDir: dir, ExportDir: dir, MountRoot: dir}
	for _, tc := range []struct {
		change func(*VolumePluginOptions)
		want   string
	}{
		{func(o *VolumePluginOptions) { o.SocketDir = "" }, "SocketDir"},
		{func(o *VolumePluginOptions) { o.ExportDir = "" }, "ExportDir"},
		{func(o *VolumePluginOptions) { o.MountRoot = "" }, "MountRoot"},
		{func(o *VolumePluginOptions) { o.Driver = "rancher-efs" }, "rancher-efs is not a driver registered"},
		{func(o *VolumePluginOptions) { o.HostID = "1h999" }, "HostID"},
		{func(o *VolumePluginOptions) { o.OnRemove = "keep" }, "OnRemove"},
	} {
		o := good
		tc.change(&o)
		if p, err := s.StartVolumePlugin(o); err == nil || !strings.Contains(err.Error(), tc.want) {
			if p != nil {
				_ = p.Close()
			}
			t.Errorf("StartVolumePlugin: %v, want an error naming %s", err, tc.want)
		}
	}
}
