package ranchersim

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// States of volumes besides the ones hosts and services have, as Cattle
// writes them.
const (
	// StateDetached is a volume a host's storage driver created (or
	// whose containers are gone): in a storage pool, mounted by no
	// container.
	StateDetached = "detached"
	// StatePurging and StatePurged follow removed: the volume's record
	// is being, then has been, purged.
	StatePurging = "purging"
	StatePurged  = "purged"
)

// DriverLocal is Docker's own volume driver, which Cattle maps to no
// storage pool.
const DriverLocal = "local"

// Volume is a Cattle volume: a named volume of a storage driver (a
// Docker volume plugin), which containers on the hosts mount.
type Volume struct {
	// ID is "1v<n>".
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Driver is the volume driver's name; StorageDriverID the storage
	// driver's ID, which Cattle resolves from Driver when a live storage
	// driver has that name.
	Driver          string            `json:"driver,omitempty"`
	StorageDriverID string            `json:"storageDriverId,omitempty"`
	DriverOpts      map[string]string `json:"driverOpts,omitempty"`
	// SizeMb is the size asked for on create; 0 means none (null).
	SizeMb int64 `json:"sizeMb,omitempty"`
	// AccessMode is set from the storage pool when a container first
	// mounts the volume (InstancePreStart); "" until then.
	AccessMode string `json:"accessMode,omitempty"`
	// HostID is the host whose storage driver created the volume (a
	// rancher/storage plugin saves it), or the one given on create.
	HostID     string `json:"hostId,omitempty"`
	StackID    string `json:"stackId,omitempty"`
	ExternalID string `json:"externalId,omitempty"`
	// URI is "<driver>:///<name>" (VolumeManager).
	URI string `json:"uri,omitempty"`
	// State is registering, inactive, detached, activating, active,
	// deactivating, updating-inactive, updating-active, removing,
	// removed, purging or purged.
	State string `json:"state"`
	// StoragePoolIDs are the pools the volume is mapped to.
	StoragePoolIDs []string   `json:"storagePoolIds,omitempty"`
	Created        time.Time  `json:"created"`
	Removed        *time.Time `json:"removed,omitempty"`
}

func (v *Volume) clone() Volume {
	c := *v
	c.DriverOpts = maps.Clone(v.DriverOpts)
	c.StoragePoolIDs = slices.Clone(v.StoragePoolIDs)
	c.Removed = clonePtr(v.Removed)
	return c
}

// volumeProcesses are the states each volume action's process starts
// from (Cattle v0.183's spring-process-context.xml and the generic
// resource processes of process/defaults.properties); a volume offers an
// action whose process can start from its state. activate and deactivate
// are hidden from an environment's key (user-auth.json); allocate and
// deallocate (the allocator's, on the allocationState field) and
// snapshot, reverttosnapshot and restorefrombackup (offered only for a
// snapshot-capable driver's volumes, VolumeRevertRestoreActionOutputFilter)
// are not simulated, and never offered.
var volumeProcesses = []struct {
	action string
	from   []string
}{
	{"remove", []string{StateRequested, StateInactive, StateDetached, StateDeactivating, StateRegistering,
		StateUpdatingActive, StateUpdatingInactive}},
	{"purge", []string{StateRemoved}},
	{"update", []string{StateInactive, StateActive}},
}

// StateRequested is a record's state before its create process runs.
const StateRequested = "requested"

// volumeActions are the actions a volume offers in state.
func volumeActions(state string) []string {
	var out []string
	for _, p := range volumeProcesses {
		if slices.Contains(p.from, state) {
			out = append(out, p.action)
		}
	}
	return out
}

func (s *Server) volumeRoutes() {
	s.handle("GET "+projectPath+"/volumes", s.listVolumes(nil))
	s.handle("POST "+projectPath+"/volumes", s.createVolume)
	s.handle("GET "+projectPath+"/volumes/{id}", s.getVolume)
	s.handle("PUT "+projectPath+"/volumes/{id}", s.updateVolume)
	s.handle("DELETE "+projectPath+"/volumes/{id}", s.deleteVolume)
	s.handle("POST "+projectPath+"/volumes/{id}", s.volumeAction)
	s.handle("GET "+projectPath+"/volumes/{id}/mounts", s.volumeMounts)
	s.handle("GET "+projectPath+"/volumes/{id}/storagepools", s.volumePools)
}

// volumeDoc is a volume as the API answers it (go-rancher's Volume).
type volumeDoc struct {
	resource
	Name                 string            `json:"name"`
	State                string            `json:"state"`
	Kind                 string            `json:"kind"`
	UUID                 string            `json:"uuid"`
	AccountID            string            `json:"accountId"`
	Description          *string           `json:"description"`
	Driver               *string           `json:"driver"`
	DriverOpts           map[string]string `json:"driverOpts"`
	SizeMb               *int64            `json:"sizeMb"`
	AccessMode           *string           `json:"accessMode"`
	HostID               *string           `json:"hostId"`
	StackID              *string           `json:"stackId"`
	StorageDriverID      *string           `json:"storageDriverId"`
	ExternalID           *string           `json:"externalId"`
	URI                  *string           `json:"uri"`
	ImageID              *string           `json:"imageId"`
	InstanceID           *string           `json:"instanceId"`
	VolumeTemplateID     *string           `json:"volumeTemplateId"`
	IsHostPath           bool              `json:"isHostPath"`
	Mounts               []mountEntryDoc   `json:"mounts"`
	Created              string            `json:"created"`
	CreatedTS            int64             `json:"createdTS"`
	Removed              *string           `json:"removed"`
	Transitioning        string            `json:"transitioning"`
	TransitioningMessage *string           `json:"transitioningMessage"`
}

func (v view) volume(st *state, vol *Volume) volumeDoc {
	self := v.self("volumes", vol.ID)
	links := map[string]string{"self": self, "mounts": self + "/mounts", "storagePools": self + "/storagepools"}
	if vol.StorageDriverID != "" {
		links["storageDriver"] = v.self("storagedrivers", vol.StorageDriverID)
	}
	if vol.HostID != "" {
		links["host"] = v.self("hosts", vol.HostID)
	}
	d := volumeDoc{
		resource: resource{ID: vol.ID, Type: "volume", BaseType: "volume", Links: links,
			Actions: actions(self, volumeActions(vol.State)...)},
		Name: vol.Name, State: vol.State, Kind: "volume", UUID: uuidFor(vol.ID), AccountID: st.opts.Project,
		Description: nullable(vol.Description), Driver: nullable(vol.Driver), DriverOpts: vol.DriverOpts,
		AccessMode: nullable(vol.AccessMode), HostID: nullable(vol.HostID), StackID: nullable(vol.StackID),
		StorageDriverID: nullable(vol.StorageDriverID), ExternalID: nullable(vol.ExternalID), URI: nullable(vol.URI),
		Mounts: st.mountEntries(vol), Created: vol.Created.Format(time.RFC3339), CreatedTS: vol.Created.UnixMilli(),
		Removed: timestamp(vol.Removed), Transitioning: transitioning(vol.State),
		TransitioningMessage: transitioningMessage(vol.State),
	}
	if vol.SizeMb != 0 {
		d.SizeMb = &vol.SizeMb
	}
	return d
}

func (s *Server) listVolumes(keep func(*Volume) bool) simkit.HandlerFunc {
	return func(r *http.Request) simkit.Response {
		v := s.view(r)
		items := listed(r, s.st.volumes.All(), func(vol *Volume) *time.Time { return vol.Removed })
		if keep != nil {
			items = slices.DeleteFunc(items, func(vol *Volume) bool { return !keep(vol) })
		}
		return list(s, r, listing[Volume]{typ: "volume", items: items, id: func(vol *Volume) string { return vol.ID },
			doc: func(vol *Volume) any { return v.volume(s.st, vol) }, filters: volumeDef.filters})
	}
}

// linkedVolumes answers a storage driver's or storage pool's volumes
// link (collection: "storagedrivers" or "storagepools").
func (s *Server) linkedVolumes(collection string) simkit.HandlerFunc {
	return func(r *http.Request) simkit.Response {
		id := r.PathValue("id")
		var keep func(*Volume) bool
		if collection == "storagedrivers" {
			if _, found := s.st.drivers.Get(id); !found {
				return notFound()
			}
			keep = func(vol *Volume) bool { return vol.StorageDriverID == id }
		} else {
			if _, found := s.st.pools.Get(id); !found {
				return notFound()
			}
			keep = func(vol *Volume) bool { return slices.Contains(vol.StoragePoolIDs, id) }
		}
		return s.listVolumes(keep)(r)
	}
}

// volumePools answers a volume's storagePools link.
func (s *Server) volumePools(r *http.Request) simkit.Response {
	vol, found := s.st.volumes.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	return s.listStoragePools(func(p *StoragePool) bool { return slices.Contains(vol.StoragePoolIDs, p.ID) })(r)
}

// getVolume answers GET of a volume, removed or not, until it is purged
// from the table: a read of it, which may settle it.
func (s *Server) getVolume(r *http.Request) simkit.Response {
	id := r.PathValue("id")
	s.st.read(id)
	vol, found := s.st.volumes.Get(id)
	if !found {
		return notFound()
	}
	return ok(s.view(r).volume(s.st, vol))
}

// volumeInput is what a POST of a volume may set (the fields the
// volume schema marks creatable; Cattle drops the others).
type volumeInput struct {
	Name             *string        `json:"name"`
	Description      *string        `json:"description"`
	Driver           *string        `json:"driver"`
	DriverOpts       map[string]any `json:"driverOpts"`
	SizeMb           *int64         `json:"sizeMb"`
	StackID          *string        `json:"stackId"`
	HostID           *string        `json:"hostId"`
	StorageDriverID  *string        `json:"storageDriverId"`
	VolumeTemplateID *string        `json:"volumeTemplateId"`
}

// createVolume answers POST volumes: 201 with the volume registering,
// after the checks of gdapi's validation and Cattle's
// VolumeCreateValidationFilter.
func (s *Server) createVolume(r *http.Request) simkit.Response {
	var in volumeInput
	if resp := decode(r, &in); resp != nil {
		return *resp
	}
	if resp, bad := s.st.checkVolume(&in); bad {
		return resp
	}
	vol := Volume{Name: deref(in.Name), Description: deref(in.Description), Driver: deref(in.Driver),
		StorageDriverID: deref(in.StorageDriverID), DriverOpts: stringMap(in.DriverOpts), SizeMb: deref(in.SizeMb),
		HostID: deref(in.HostID), StackID: deref(in.StackID), State: StateRegistering}
	added := s.st.addVolume(vol)
	s.st.life.Start(added.ID, func() { s.st.volumeCreated(added) })
	return created(s.view(r).volume(s.st, added))
}

// checkVolume vets a new volume as Cattle does: the schema's criteria
// (name required, at most 255; description at most 1024; references
// that name nothing are InvalidReference), then VolumeCreateValidationFilter:
// a driver or a storageDriverId (422 MissingRequired, "Either driver or
// storageDriverId is required"), a name no live volume of the storage
// driver has when the request names the storage driver by ID (NotUnique:
// Cattle checks no more than that), and a size only for a driver with
// CapabilityScheduleSize (422 InvalidOption).
func (st *state) checkVolume(in *volumeInput) (simkit.Response, bool) {
	switch {
	case in.Name == nil:
		return invalid(codeMissingRequired, "name"), true
	case len(*in.Name) > 255:
		return invalid(codeMaxLength, "name"), true
	case len(deref(in.Description)) > 1024:
		return invalid(codeMaxLength, "description"), true
	}
	refs := []struct {
		field string
		id    *string
		found func(string) bool
	}{
		{"stackId", in.StackID, func(id string) bool { _, ok := st.stacks.Get(id); return ok }},
		{"hostId", in.HostID, func(id string) bool { _, ok := st.hosts.Get(id); return ok }},
		{"storageDriverId", in.StorageDriverID, func(id string) bool { _, ok := st.drivers.Get(id); return ok }},
		{"volumeTemplateId", in.VolumeTemplateID, func(string) bool { return false }},
	}
	for _, ref := range refs {
		if ref.id != nil && !ref.found(*ref.id) {
			return invalid(codeInvalidReference, ref.field), true
		}
	}
	if in.Driver == nil && in.StorageDriverID == nil {
		return validationError(codeMissingRequired, "Either driver or storageDriverId is required"), true
	}
	var driver *StorageDriver
	if in.StorageDriverID != nil {
		driver, _ = st.drivers.Get(*in.StorageDriverID)
		if st.liveVolume(*in.Name, driver.ID) != nil {
			return invalid(codeNotUnique, "name"), true
		}
	}
	if in.SizeMb != nil {
		if driver == nil && deref(in.Driver) != "" {
			driver = st.liveDriverNamed(*in.Driver)
		}
		if driver == nil || !slices.Contains(driver.Capabilities, CapabilityScheduleSize) {
			name := "null"
			if in.Driver != nil {
				name = *in.Driver
			}
			return validationError(codeInvalidOption,
				fmt.Sprintf("Volume driver %s does not support specifying a size.", name)), true
		}
	}
	return simkit.Response{}, false
}

// validationError is a 422 Cattle raises itself (a ClientVisibleException
// with a code and a message, no field).
func validationError(code, message string) simkit.Response {
	return simkit.JSON(http.StatusUnprocessableEntity, errorDoc(http.StatusUnprocessableEntity, code, "", message))
}

// liveVolume returns the volume called name of storage driver driverID
// that is not removed.
func (st *state) liveVolume(name, driverID string) *Volume {
	v, _ := st.volumes.Find(func(v *Volume) bool {
		return v.Name == name && v.StorageDriverID == driverID && v.Removed == nil
	})
	return v
}

// stringMap is a driverOpts map as Cattle stores it (map[string]): every
// value a string; nulls dropped.
func stringMap(m map[string]any) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, isNull := scalar(v); !isNull || v == "" {
			out[k] = s
		}
	}
	return out
}

// addVolume stores a new volume: its ID, creation time and URI, and its
// storage pool map, as VolumeManager.createAndScheduleObject makes them
// (the first pool of a driver of that name, but for Docker's local
// driver).
func (st *state) addVolume(vol Volume) *Volume {
	st.admit(prefixVolume, &vol.ID, &vol.Created)
	if vol.Driver != "" && vol.Name != "" && vol.URI == "" {
		vol.URI = vol.Driver + ":///" + vol.Name
	}
	if vol.Driver != "" && vol.Driver != DriverLocal && len(vol.StoragePoolIDs) == 0 {
		if p := st.firstPool(vol.Driver); p != nil {
			vol.StoragePoolIDs = []string{p.ID}
		}
	}
	out := vol.clone()
	st.volumes.Put(out.ID, &out)
	return &out
}

// resolveDriver finds a volume's storage driver as VolumeCreateUpdate
// does: by its storageDriverId, else a live driver of its driver's name;
// the volume then takes the driver's name and ID.
func (st *state) resolveDriver(vol *Volume) *StorageDriver {
	d, found := st.drivers.Get(vol.StorageDriverID)
	if !found && vol.Driver != "" {
		d = st.liveDriverNamed(vol.Driver)
	}
	if d != nil {
		vol.Driver, vol.StorageDriverID = d.Name, d.ID
	}
	return d
}

// associate maps a volume with a host to its driver's pool on that host
// (VolumeCreateUpdate, StoragePoolDaoImpl.associateVolumeToPool) and
// reports whether there was one: Cattle then chains the volume's
// deactivate process, which ends detached.
func (st *state) associate(vol *Volume, d *StorageDriver) bool {
	if d == nil || vol.HostID == "" {
		return false
	}
	p := st.hostPool(d.ID, vol.HostID)
	if p == nil {
		return false
	}
	if !slices.Contains(vol.StoragePoolIDs, p.ID) {
		vol.StoragePoolIDs = append(vol.StoragePoolIDs, p.ID)
	}
	return true
}

// volumeCreated ends a volume's create process (registering): inactive,
// or, for a volume with a host whose pool of its driver takes it,
// deactivating, then detached.
func (st *state) volumeCreated(vol *Volume) {
	if st.associate(vol, st.resolveDriver(vol)) {
		st.detach(vol)
		return
	}
	vol.State = StateInactive
}

// detach runs a volume's deactivate process: deactivating, then
// detached.
func (st *state) detach(vol *Volume) {
	st.transition(vol.ID, func(s string) { vol.State = s }, StateDeactivating, StateDetached)
}

// runUpdate runs a volume's update process (the update action, or a PUT
// that changes hostId): inactive -> updating-inactive -> inactive, active
// -> updating-active -> active, or, when VolumeCreateUpdate maps it to
// its host's pool, on to deactivating and detached.
func (st *state) runUpdate(vol *Volume) {
	back := vol.State
	vol.State = map[string]string{StateInactive: StateUpdatingInactive, StateActive: StateUpdatingActive}[back]
	st.life.Start(vol.ID, func() {
		if st.associate(vol, st.resolveDriver(vol)) {
			st.detach(vol)
			return
		}
		vol.State = back
	})
}

// volumeUpdate is what a PUT of a volume may change (the fields the
// schema marks updatable).
type volumeUpdate struct {
	Description *string        `json:"description"`
	DriverOpts  map[string]any `json:"driverOpts"`
	HostID      *string        `json:"hostId"`
}

// updateVolume answers PUT: description, driverOpts and hostId; a new
// hostId schedules the update process (the field's scheduleUpdate
// attribute), which a volume neither inactive nor active cannot run: 409
// (the simulator's plausible choice; the changes are not made).
func (s *Server) updateVolume(r *http.Request) simkit.Response {
	vol, found := s.st.volumes.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	var in volumeUpdate
	if resp := decodeUpdate(r, volumeDef, &in); resp != nil {
		return *resp
	}
	if len(deref(in.Description)) > 1024 {
		return invalid(codeMaxLength, "description")
	}
	hostChanged := in.HostID != nil && *in.HostID != vol.HostID
	if hostChanged {
		if _, ok := s.st.hosts.Get(*in.HostID); !ok {
			return invalid(codeInvalidReference, "hostId")
		}
		if !slices.Contains(volumeActions(vol.State), "update") {
			return fail(http.StatusConflict, "volume %s is %s", vol.ID, vol.State)
		}
	}
	if in.Description != nil {
		vol.Description = *in.Description
	}
	if in.DriverOpts != nil {
		vol.DriverOpts = stringMap(in.DriverOpts)
	}
	if hostChanged {
		vol.HostID = *in.HostID
		s.st.runUpdate(vol)
	}
	return ok(s.view(r).volume(s.st, vol))
}

// deleteVolume answers DELETE: the volume's remove process, which a
// volume in use (active, activating) cannot run: 405, as Cattle answers
// it (its integration test test_volume_cant_delete_active). One being
// removed, removed or purged stays so.
func (s *Server) deleteVolume(r *http.Request) simkit.Response {
	vol, found := s.st.volumes.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	switch {
	case vol.Removed != nil || vol.State == StateRemoving:
	case slices.Contains(volumeActions(vol.State), "remove"):
		s.st.removeVolume(vol)
	default:
		return methodNotAllowed()
	}
	return accepted(s.view(r).volume(s.st, vol))
}

// volumeAction answers POST <volume>?action=: remove, purge, update.
func (s *Server) volumeAction(r *http.Request) simkit.Response {
	vol, found := s.st.volumes.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	name := r.URL.Query().Get("action")
	if resp, bad := checkAction(volumeDef, volumeActions(vol.State), name); bad {
		return resp
	}
	switch name {
	case "remove":
		s.st.removeVolume(vol)
	case "purge":
		s.st.purgeVolume(vol)
	case "update":
		s.st.runUpdate(vol)
	}
	return accepted(s.view(r).volume(s.st, vol))
}

// removeVolume runs a volume's remove process: removing, during which
// Cattle has a host's agent remove the Docker volume (the storage
// driver's plugin deletes its data, rancher-nfs unless its onRemove is
// retain) and removes its storage pool maps and mounts; then removed,
// with its removed timestamp. Cattle's purge monitor purges it later.
func (st *state) removeVolume(vol *Volume) {
	vol.State = StateRemoving
	st.life.Start(vol.ID, func() {
		st.deleteVolumeData(vol)
		st.removeMountsOf(vol.ID)
		vol.StoragePoolIDs = nil
		t := st.now()
		vol.State, vol.Removed = StateRemoved, &t
		st.purge.Start(vol.ID, func() { st.purgeVolume(vol) })
	})
}

// purgeVolume runs a removed volume's purge process (the purge action,
// or Cattle's purge monitor after the volume's removeTime): purging, then
// purged; the record itself goes later (TableCleanup), after which a GET
// of it is 404.
func (st *state) purgeVolume(vol *Volume) {
	st.purge.Stop(vol.ID)
	st.transition(vol.ID, func(s string) {
		vol.State = s
		if s == StatePurged {
			st.purge.Start(vol.ID, func() { st.dropVolume(vol.ID) })
		}
	}, StatePurging, StatePurged)
}

// dropVolume deletes a volume's record and its mounts'.
func (st *state) dropVolume(id string) {
	st.life.Stop(id)
	st.purge.Stop(id)
	st.volumes.Del(id)
	for _, m := range st.mounts.All() {
		if m.VolumeID == id {
			st.mounts.Del(m.ID)
		}
	}
}

// deleteVolumeData has the volume's storage driver delete its data: the
// plugin of the driver on the volume's host, or another host's, as the
// agent Cattle sends storage.volume.remove to runs `docker volume rm`.
// With no plugin of the driver running, nothing is deleted.
func (st *state) deleteVolumeData(vol *Volume) {
	agents := st.volumeAgents[vol.Driver]
	if len(agents) == 0 {
		return
	}
	agent := agents[0]
	for _, a := range agents {
		if a.hostID() == vol.HostID {
			agent = a
		}
	}
	agent.deleteVolume(vol.Name, vol.DriverOpts)
}

// AddVolume adds a volume in its State (default inactive), as if created
// earlier: ID "1v<n>" unless given, Created now, its URI and storage
// pool map as a create makes them, its storage driver resolved from its
// driver's name. It panics on a taken ID or an unknown state, as a test's
// mistake.
func (s *Server) AddVolume(vol Volume) Volume {
	s.mu.Lock()
	defer s.mu.Unlock()
	if vol.State == "" {
		vol.State = StateInactive
	}
	if !slices.Contains(VolumeStates, vol.State) {
		panic(fmt.Sprintf("ranchersim: volume state %q is not one of %v", vol.State, VolumeStates))
	}
	added := s.st.addVolume(vol)
	s.st.resolveDriver(added)
	if added.State == StateRemoved && added.Removed == nil {
		t := s.st.now()
		added.Removed = &t
		added.StoragePoolIDs = nil
	}
	if added.State == StateRemoved {
		s.st.purge.Start(added.ID, func() { s.st.purgeVolume(added) })
	}
	return added.clone()
}

// VolumeStates are the states a volume may be seeded in.
var VolumeStates = []string{StateInactive, StateDetached, StateActive, StateRemoved}

// Volume returns a copy of the volume with the ID (until it is purged
// from the table).
func (s *Server) Volume(id string) (Volume, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return simkit.CloneOf(s.st.volumes, id, (*Volume).clone)
}

// VolumeByName returns a copy of the live (not removed) volume called
// name whose driver (name) is driver.
func (s *Server) VolumeByName(driver, name string) (Volume, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, found := s.st.volumes.Find(func(v *Volume) bool { return v.Name == name && v.Driver == driver && v.Removed == nil })
	if !found {
		return Volume{}, false
	}
	return v.clone(), true
}

// Volumes returns copies of the volumes, oldest first: removed ones too,
// until they are purged from the table.
func (s *Server) Volumes() []Volume {
	s.mu.Lock()
	defer s.mu.Unlock()
	return simkit.CloneAll(s.st.volumes.All(), (*Volume).clone)
}

// RemoveVolume removes a volume, whatever its state, as a user deleting
// it in the UI would: removing, then removed (its data deleted by its
// driver's plugin), then purged. It reports whether the volume exists.
func (s *Server) RemoveVolume(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	vol, found := s.st.volumes.Get(id)
	if found && vol.Removed == nil && vol.State != StateRemoving {
		s.st.removeVolume(vol)
	}
	return found
}
