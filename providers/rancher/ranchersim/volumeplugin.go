package ranchersim

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"time"
)

// Where a host keeps a storage driver's plugin socket and mounts.
const (
	// DockerPluginDir is where Docker looks for plugin sockets: a
	// storage driver's plugin listens on <DockerPluginDir>/<driver>.sock.
	DockerPluginDir = "/run/docker/plugins"
	// RancherVolumesDir is rancher/storage's Basedir: a volume is
	// mounted at <RancherVolumesDir>/<driver>/<name>.
	RancherVolumesDir = "/var/lib/rancher/volumes"
)

// rancher-nfs's onRemove driver option (and the stack's ON_REMOVE): what
// its delete does with a removed volume's directory.
const (
	OnRemovePurge  = "purge"
	OnRemoveRetain = "retain"
)

// pluginContentType is the Content-Type of a plugin's answers (go-
// plugins-helpers' sdk.DefaultContentTypeV1_1); Docker sends
// application/vnd.docker.plugins.v1.2+json and reads any.
const pluginContentType = "application/vnd.docker.plugins.v1.1+json"

// errNoSuchVolume is rancher/storage's answer for a name Rancher has no
// (created) volume of the driver for.
var errNoSuchVolume = errors.New("No such volume") //nolint:staticcheck // rancher/storage's words, which Docker shows

// volumeNamePattern is Docker's rule for volume names (the Rancher 1.6
// docs give it for `rancher volume create`): it keeps a name one path
// component under the share and the mount root.
var volumeNamePattern = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]+$`)

// VolumePluginOptions configure a storage driver's Docker volume plugin
// on one simulated host.
type VolumePluginOptions struct {
	// Driver is the storage driver's name: the simulator must have a
	// live storage driver of that name (AddStorageDriver), as
	// rancher/storage refuses to start for a driver Rancher does not
	// know.
	Driver string
	// HostID is the host the plugin runs on ("1h<n>"), which must be
	// live: the volumes it creates are saved with it.
	HostID string
	// SocketDir is where the plugin's socket, <Driver>.sock, goes
	// (DockerPluginDir on a real host).
	SocketDir string
	// ExportDir stands in for the NFS server's export (the stack's
	// NFS_SERVER:MOUNT_DIR): a volume's data is the directory
	// <ExportDir>/<name>. Every host's plugin of the driver gets the same
	// ExportDir, so that what one host writes another reads.
	ExportDir string
	// MountRoot is where this host mounts volumes, at
	// <MountRoot>/<Driver>/<name> (RancherVolumesDir on a real host;
	// each simulated host needs its own).
	MountRoot string
	// OnRemove is the stack's ON_REMOVE, for volumes whose driverOpts
	// set no onRemove: OnRemovePurge (the default) or OnRemoveRetain.
	OnRemove string
	// NoMount skips the bind mount (and unmount) of a volume's directory
	// at its mountpoint, which needs root: for tests of the protocol.
	// The default mounts, as the real plugin does.
	NoMount bool
}

// VolumePlugin stands in for a storage driver's Docker volume plugin on
// one host, as rancher/storage runs it for rancher-nfs (docker/
// volumeplugin/plugin.go and package/nfs/rancher-nfs): it answers
// Docker's VolumeDriver protocol (Plugin.Activate, VolumeDriver.Create,
// Remove, Mount, Unmount, Path, Get, List and Capabilities) over a unix
// socket, keeps its volumes as directories on a shared export, and
// mounts them with a real bind mount where rancher-nfs mounts
// NFS_SERVER:MOUNT_DIR/<name>. It reads and writes the Cattle records of
// the simulator it belongs to, as rancher/storage does through the API
// (in process here, so that a test's faults and request counts stay the
// provider's). Its methods are safe for concurrent use.
type VolumePlugin struct {
	s        *Server
	opts     VolumePluginOptions
	driverID string
	scope    string
	socket   string
	srv      *http.Server

	// createMu serialises creates, as rancher/storage locks the name.
	createMu sync.Mutex
	// mu guards refs. It is never held while the plugin calls into the
	// Server that would call back into the plugin (deleteVolume takes no
	// lock).
	mu sync.Mutex
	// refs are the IDs each mounted volume is mounted for.
	refs   map[string]map[string]bool
	closed bool
}

// volumeAgent is a host's plugin as the simulated Cattle asks it to
// delete a removed volume's data.
type volumeAgent interface {
	hostID() string
	deleteVolume(name string, opts map[string]string)
}

// StartVolumePlugin starts the storage driver's plugin for a host: it
// listens on <SocketDir>/<Driver>.sock (a stale socket there is
// replaced) until Close. A setting left empty, a driver or host the
// simulator does not have is an error naming it.
func (s *Server) StartVolumePlugin(opts VolumePluginOptions) (*VolumePlugin, error) {
	for _, f := range []struct{ name, value string }{{"Driver", opts.Driver}, {"HostID", opts.HostID},
		{"SocketDir", opts.SocketDir}, {"ExportDir", opts.ExportDir}, {"MountRoot", opts.MountRoot}} {
		if f.value == "" {
			return nil, fmt.Errorf("ranchersim: VolumePluginOptions.%s is empty", f.name)
		}
	}
	switch opts.OnRemove {
	case "":
		opts.OnRemove = OnRemovePurge
	case OnRemovePurge, OnRemoveRetain:
	default:
		return nil, fmt.Errorf("ranchersim: VolumePluginOptions.OnRemove %q is neither %s nor %s", opts.OnRemove, OnRemovePurge, OnRemoveRetain)
	}
	p := &VolumePlugin{s: s, opts: opts, refs: map[string]map[string]bool{},
		socket: filepath.Join(opts.SocketDir, opts.Driver+".sock")}
	s.mu.Lock()
	d := s.st.liveDriverNamed(opts.Driver)
	hostOK := s.st.liveHost(opts.HostID)
	if d != nil {
		p.driverID, p.scope = d.ID, d.Scope
	}
	s.mu.Unlock()
	if d == nil {
		return nil, fmt.Errorf("ranchersim: %s is not a driver registered with the current Rancher environment", opts.Driver)
	}
	if !hostOK {
		return nil, fmt.Errorf("ranchersim: VolumePluginOptions.HostID: no host %s", opts.HostID)
	}
	for _, dir := range []string{opts.SocketDir, opts.ExportDir, filepath.Join(opts.MountRoot, opts.Driver)} {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("ranchersim: volume plugin: %w", err)
		}
	}
	if err := os.Remove(p.socket); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("ranchersim: volume plugin: %w", err)
	}
	ln, err := net.Listen("unix", p.socket)
	if err != nil {
		return nil, fmt.Errorf("ranchersim: volume plugin: %w", err)
	}
	p.srv = &http.Server{Handler: p.handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	s.mu.Lock()
	s.st.volumeAgents[opts.Driver] = append(s.st.volumeAgents[opts.Driver], p)
	s.mu.Unlock()
	return p, nil
}

// Socket is the plugin's socket path: <SocketDir>/<Driver>.sock.
func (p *VolumePlugin) Socket() string { return p.socket }

// Mountpoint is where the plugin mounts the volume called name on its
// host: <MountRoot>/<Driver>/<name>, what VolumeDriver.Mount and Path
// answer.
func (p *VolumePlugin) Mountpoint(name string) string {
	return filepath.Join(p.opts.MountRoot, p.opts.Driver, name)
}

// Export is the directory that holds the volume called name's data on
// the share: <ExportDir>/<name>.
func (p *VolumePlugin) Export(name string) string { return filepath.Join(p.opts.ExportDir, name) }

// Mounted returns the IDs the volume called name is mounted for on this
// host, sorted; none when it is not mounted.
func (p *VolumePlugin) Mounted(name string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Sorted(maps.Keys(p.refs[name]))
}

// Close stops the plugin: it stops serving, removes its socket, unmounts
// what it mounted and leaves the simulator's hosts. It does all it can
// and returns the errors it met, joined.
func (p *VolumePlugin) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	names := slices.Sorted(maps.Keys(p.refs))
	p.refs = map[string]map[string]bool{}
	p.mu.Unlock()

	p.s.mu.Lock()
	agents := p.s.st.volumeAgents[p.opts.Driver]
	p.s.st.volumeAgents[p.opts.Driver] = slices.DeleteFunc(slices.Clone(agents), func(a volumeAgent) bool { return a == volumeAgent(p) })
	p.s.mu.Unlock()

	errs := []error{p.srv.Close()}
	if err := os.Remove(p.socket); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	for _, name := range names {
		errs = append(errs, p.unmount(name))
	}
	return errors.Join(errs...)
}

func (p *VolumePlugin) hostID() string { return p.opts.HostID }

// deleteVolume is rancher-nfs's delete: the volume's directory goes from
// the share, unless its onRemove (or the stack's ON_REMOVE) is retain.
// The simulator calls it, holding its lock, when it removes a volume of
// the driver.
func (p *VolumePlugin) deleteVolume(name string, opts map[string]string) {
	onRemove := opts["onRemove"]
	if onRemove == "" {
		onRemove = p.opts.OnRemove
	}
	if onRemove == OnRemoveRetain || !volumeNamePattern.MatchString(name) {
		return
	}
	_ = os.RemoveAll(p.Export(name))
}

// pluginVolume is what the plugin reads of a Cattle volume.
type pluginVolume struct {
	ID, Name, State, HostID string
	DriverOpts              map[string]string
}

// createdStates are the states of a volume rancher/storage counts as
// created (its goodStates): Rancher has saved it from a host.
var createdStates = []string{StateActive, StateActivating, StateDeactivating, StateDetached, StateRemoving,
	StateUpdatingActive, StateUpdatingInactive}

// lookup finds the live volume of the plugin's driver called name, as
// rancher/storage's Get (created ones only) or getAny (any state) do.
func (p *VolumePlugin) lookup(name string, anyState bool) (pluginVolume, bool) {
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	for _, v := range p.s.st.volumes.All() {
		if v.Name == name && v.StorageDriverID == p.driverID && v.Removed == nil &&
			(anyState || slices.Contains(createdStates, v.State)) {
			return pluginVolume{ID: v.ID, Name: v.Name, State: v.State, HostID: v.HostID,
				DriverOpts: maps.Clone(v.DriverOpts)}, true
		}
	}
	return pluginVolume{}, false
}

// save is rancher/storage's RancherState.Save: the volume Rancher holds
// under name takes the create's options as its driverOpts and this host
// as its hostId (a PUT, whose new hostId runs the update process), and an
// inactive one the update action: Cattle maps it to the driver's pool on
// the host, and it ends detached. A volume still registering finishes
// its create first (rancher/storage retries until it has).
func (p *VolumePlugin) save(name string, opts map[string]string) error {
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	st := p.s.st
	// One still registering may not have its storage driver resolved
	// yet: rancher/storage waits for that, and finds it then.
	vol, found := st.volumes.Find(func(v *Volume) bool {
		return v.Name == name && v.Removed == nil && (v.StorageDriverID == p.driverID ||
			v.State == StateRegistering && v.StorageDriverID == "" && v.Driver == p.opts.Driver)
	})
	if !found {
		return errNoSuchVolume
	}
	if vol.State == StateRegistering {
		st.life.Stop(vol.ID)
		st.volumeCreated(vol)
		if vol.StorageDriverID != p.driverID {
			return errNoSuchVolume
		}
	}
	hostChanged := vol.HostID != p.opts.HostID
	vol.DriverOpts, vol.HostID = maps.Clone(opts), p.opts.HostID
	if vol.State == StateInactive || vol.State == StateActive && hostChanged {
		st.runUpdate(vol)
	}
	return nil
}

// Create is VolumeDriver.Create: nothing for a volume Rancher counts as
// created; else rancher-nfs's create (the volume's directory on the
// share, and the options created, name and onRemove) and the options
// saved to the volume Rancher holds under the name. Rancher must hold
// one: rancher/storage waits for Rancher to create it and fails when it
// does not (this stand-in does not wait), deleting what it made.
func (p *VolumePlugin) Create(name string, opts map[string]string) error {
	if !volumeNamePattern.MatchString(name) {
		return fmt.Errorf("%q is not a valid volume name: it must match %s", name, volumeNamePattern)
	}
	if opts["host"] != "" && (opts["export"] != "" || opts["exportBase"] != "") {
		return fmt.Errorf("volume %s: the driver options host, export and exportBase (another NFS share) are not simulated", name)
	}
	p.createMu.Lock()
	defer p.createMu.Unlock()
	if _, created := p.lookup(name, false); created {
		return nil
	}
	result := maps.Clone(opts)
	if result == nil {
		result = map[string]string{}
	}
	dir := p.Export(name)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		if err := os.Mkdir(dir, 0o755); err != nil {
			return fmt.Errorf("volume %s: %w", name, err)
		}
		result["created"], result["name"] = "true", name
		if result["onRemove"] == "" {
			result["onRemove"] = p.opts.OnRemove
		}
	} else if err != nil {
		return fmt.Errorf("volume %s: %w", name, err)
	}
	if err := p.save(name, result); err != nil {
		p.deleteVolume(name, result)
		return err
	}
	return nil
}

// Remove is VolumeDriver.Remove: as rancher/storage's, Docker's removal
// is a no-op unless Rancher is removing the volume, when the driver's
// delete runs (rancher-nfs: the directory goes unless onRemove is
// retain); a name Rancher has no volume for is no error.
func (p *VolumePlugin) Remove(name string) error {
	v, found := p.lookup(name, false)
	if found && v.State == StateRemoving {
		p.deleteVolume(name, v.DriverOpts)
	}
	return nil
}

// Mount is VolumeDriver.Mount for the caller id: the volume's directory
// on the share bind-mounted at Mountpoint(name), once per host however
// many callers mount it (each id is counted, as Docker's protocol asks).
// The volume must be one Rancher counts as created (VolumeDriver.Create
// first) and its directory must exist, as an NFS mount of a missing
// export path fails.
func (p *VolumePlugin) Mount(name, id string) (string, error) {
	if !volumeNamePattern.MatchString(name) {
		return "", errNoSuchVolume
	}
	if _, found := p.lookup(name, false); !found {
		return "", errNoSuchVolume
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return "", errors.New("the volume plugin is stopped")
	}
	target := p.Mountpoint(name)
	if ids, mounted := p.refs[name]; mounted {
		ids[id] = true
		return target, nil
	}
	src := p.Export(name)
	if fi, err := os.Stat(src); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("mount %s on %s: the share has no directory %s", name, target, name)
	}
	if err := os.MkdirAll(target, 0o750); err != nil {
		return "", fmt.Errorf("mount %s: %w", name, err)
	}
	if !p.opts.NoMount {
		if err := bindMount(src, target); err != nil {
			_ = os.Remove(target)
			return "", fmt.Errorf("mount %s on %s: %w", src, target, err)
		}
	}
	p.refs[name] = map[string]bool{id: true}
	return target, nil
}

// Unmount is VolumeDriver.Unmount for the caller id: the last caller
// gone, the volume is unmounted and its empty mountpoint removed (rancher-
// nfs's unmount). An id the volume is not mounted for is no error.
func (p *VolumePlugin) Unmount(name, id string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	ids, mounted := p.refs[name]
	if !mounted || !ids[id] {
		return nil
	}
	delete(ids, id)
	if len(ids) > 0 {
		return nil
	}
	if err := p.unmount(name); err != nil {
		ids[id] = true
		return err
	}
	delete(p.refs, name)
	return nil
}

// unmount unmounts a volume's mountpoint and removes it.
func (p *VolumePlugin) unmount(name string) error {
	target := p.Mountpoint(name)
	if !p.opts.NoMount {
		if err := unmountDir(target); err != nil {
			return fmt.Errorf("unmount %s: %w", target, err)
		}
	}
	if err := os.Remove(target); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("unmount %s: %w", target, err)
	}
	return nil
}

// PluginVolume is a volume as VolumeDriver.Get and List answer it.
type PluginVolume struct {
	Name string
	// Mountpoint is where the volume is mounted on this host, "" when it
	// is not.
	Mountpoint string `json:",omitempty"`
	// Status holds the Cattle volume's id, state, hostId and driverOpts
	// (rancher/storage's holds the whole record).
	Status map[string]any `json:",omitempty"`
}

func (p *VolumePlugin) pluginVolume(v pluginVolume) PluginVolume {
	out := PluginVolume{Name: v.Name, Status: map[string]any{"id": v.ID, "state": v.State, "hostId": v.HostID,
		"driverOpts": v.DriverOpts}}
	p.mu.Lock()
	if _, mounted := p.refs[v.Name]; mounted {
		out.Mountpoint = p.Mountpoint(v.Name)
	}
	p.mu.Unlock()
	return out
}

// Get is VolumeDriver.Get: the volume Rancher counts as created under
// name.
func (p *VolumePlugin) Get(name string) (PluginVolume, error) {
	v, found := p.lookup(name, false)
	if !found {
		return PluginVolume{}, errNoSuchVolume
	}
	return p.pluginVolume(v), nil
}

// List is VolumeDriver.List: the live volumes of the driver Rancher
// counts as created, oldest first.
func (p *VolumePlugin) List() []PluginVolume {
	p.s.mu.Lock()
	var vols []pluginVolume
	for _, v := range p.s.st.volumes.All() {
		if v.StorageDriverID == p.driverID && v.Removed == nil && slices.Contains(createdStates, v.State) {
			vols = append(vols, pluginVolume{ID: v.ID, Name: v.Name, State: v.State, HostID: v.HostID,
				DriverOpts: maps.Clone(v.DriverOpts)})
		}
	}
	p.s.mu.Unlock()
	out := []PluginVolume{}
	for _, v := range vols {
		out = append(out, p.pluginVolume(v))
	}
	return out
}

// Scope is what VolumeDriver.Capabilities answers: "global" for an
// environment-scope driver (a volume is the same on every host), "local"
// otherwise. rancher/storage answers "flex", which Docker takes for
// local.
func (p *VolumePlugin) Scope() string {
	if p.scope == ScopeEnvironment {
		return "global"
	}
	return "local"
}

// The protocol's bodies, as Docker's volume plugin API documents them.
type (
	pluginRequest struct {
		Name string
		Opts map[string]string
		ID   string
	}
	pluginErr struct {
		Err string
	}
	pluginMountpoint struct {
		Mountpoint string
		Err        string
	}
	pluginGet struct {
		Volume *PluginVolume `json:",omitempty"`
		Err    string
	}
	pluginList struct {
		Volumes []PluginVolume
		Err     string
	}
	pluginCapabilities struct {
		Capabilities struct{ Scope string }
	}
)

// handler serves the protocol: each call is a POST with a JSON body; an
// answer carrying Err is a 500 (go-plugins-helpers' sdk.EncodeResponse),
// a body that is not JSON a 400.
func (p *VolumePlugin) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/Plugin.Activate", func(w http.ResponseWriter, _ *http.Request) {
		reply(w, struct{ Implements []string }{[]string{"VolumeDriver"}}, "")
	})
	call := func(path string, f func(pluginRequest) (any, string)) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			var req pluginRequest
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body, errText := f(req)
			reply(w, body, errText)
		})
	}
	errOf := func(err error) string {
		if err != nil {
			return err.Error()
		}
		return ""
	}
	call("/VolumeDriver.Create", func(r pluginRequest) (any, string) {
		e := errOf(p.Create(r.Name, r.Opts))
		return pluginErr{e}, e
	})
	call("/VolumeDriver.Remove", func(r pluginRequest) (any, string) {
		e := errOf(p.Remove(r.Name))
		return pluginErr{e}, e
	})
	call("/VolumeDriver.Mount", func(r pluginRequest) (any, string) {
		mp, err := p.Mount(r.Name, r.ID)
		e := errOf(err)
		return pluginMountpoint{mp, e}, e
	})
	call("/VolumeDriver.Unmount", func(r pluginRequest) (any, string) {
		e := errOf(p.Unmount(r.Name, r.ID))
		return pluginErr{e}, e
	})
	call("/VolumeDriver.Path", func(r pluginRequest) (any, string) {
		return pluginMountpoint{Mountpoint: p.Mountpoint(r.Name)}, ""
	})
	call("/VolumeDriver.Get", func(r pluginRequest) (any, string) {
		v, err := p.Get(r.Name)
		if err != nil {
			return pluginGet{Err: err.Error()}, err.Error()
		}
		return pluginGet{Volume: &v}, ""
	})
	call("/VolumeDriver.List", func(pluginRequest) (any, string) {
		return pluginList{Volumes: p.List()}, ""
	})
	call("/VolumeDriver.Capabilities", func(pluginRequest) (any, string) {
		var c pluginCapabilities
		c.Capabilities.Scope = p.Scope()
		return c, ""
	})
	return mux
}

// reply writes a plugin answer: 500 when it carries an error.
func reply(w http.ResponseWriter, body any, errText string) {
	w.Header().Set("Content-Type", pluginContentType)
	if errText != "" {
		w.WriteHeader(http.StatusInternalServerError)
	}
	_ = json.NewEncoder(w).Encode(body)
}
