package ranchersim

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Storage driver scopes (StorageDriver.Scope), the storageDriver
// schema's options: an environment-scope driver's volumes are one pool
// every host of the environment reaches, a local-scope driver has a
// pool per host, a custom one none that Cattle makes.
const (
	ScopeEnvironment = "environment"
	ScopeLocal       = "local"
	ScopeCustom      = "custom"
)

// Volume access modes (StorageDriver.VolumeAccessMode): how many hosts
// (or containers) may use a volume of the driver at once. Cattle's
// allocator schedules containers by it.
const (
	AccessMultiHostRW      = "multiHostRW"
	AccessSingleHostRW     = "singleHostRW"
	AccessSingleInstanceRW = "singleInstanceRW"
)

// CapabilityScheduleSize is the storage driver capability that lets a
// volume be created with a sizeMb: Cattle gives it to every local-scope
// driver (StorageDriverActivate); others refuse a size with 422
// InvalidOption.
const CapabilityScheduleSize = "schedule.size"

// Names of the storage drivers of Rancher 1.6's catalog (infra-templates
// nfs and ebs, rancher-compose.yml's storage_driver).
const (
	DriverRancherNFS = "rancher-nfs"
	DriverRancherEBS = "rancher-ebs"
)

// RancherNFS is the storage driver the catalog's Rancher NFS stack
// registers: environment scope, multiHostRW.
func RancherNFS() StorageDriver {
	return StorageDriver{Name: DriverRancherNFS, Scope: ScopeEnvironment, VolumeAccessMode: AccessMultiHostRW}
}

// RancherEBS is the storage driver the catalog's Rancher EBS stack
// registers: environment scope, singleHostRW.
func RancherEBS() StorageDriver {
	return StorageDriver{Name: DriverRancherEBS, Scope: ScopeEnvironment, VolumeAccessMode: AccessSingleHostRW}
}

// StorageDriver is a Cattle storage driver: a Docker volume plugin that a
// storage stack (its service) runs on the environment's hosts.
type StorageDriver struct {
	// ID is "1sd<n>".
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Scope is ScopeEnvironment (the default), ScopeLocal or ScopeCustom.
	Scope string `json:"scope"`
	// VolumeAccessMode is one of the Access* modes; "" means
	// AccessMultiHostRW, Cattle's default.
	VolumeAccessMode   string   `json:"volumeAccessMode"`
	VolumeCapabilities []string `json:"volumeCapabilities,omitempty"`
	// Capabilities are Cattle's own, which the API does not show:
	// CapabilityScheduleSize, added for a local-scope driver.
	Capabilities    []string `json:"capabilities,omitempty"`
	BlockDevicePath string   `json:"blockDevicePath,omitempty"`
	// ServiceID is the storage driver service's ID, if any.
	ServiceID string `json:"serviceId,omitempty"`
	// State is active unless seeded otherwise.
	State   string     `json:"state"`
	Created time.Time  `json:"created"`
	Removed *time.Time `json:"removed,omitempty"`
}

func (d *StorageDriver) clone() StorageDriver {
	c := *d
	c.VolumeCapabilities = slices.Clone(d.VolumeCapabilities)
	c.Capabilities = slices.Clone(d.Capabilities)
	c.Removed = clonePtr(d.Removed)
	return c
}

// StoragePool is a Cattle storage pool: the volumes of a storage driver
// that a set of hosts reach. Cattle makes them when a driver activates
// (StorageServiceImpl.setupPools): an environment-scope driver has one,
// mapped to every host of the environment; a local-scope driver one per
// host.
type StoragePool struct {
	// ID is "1sp<n>".
	ID                 string   `json:"id"`
	Name               string   `json:"name"`
	DriverName         string   `json:"driverName"`
	StorageDriverID    string   `json:"storageDriverId"`
	VolumeAccessMode   string   `json:"volumeAccessMode"`
	VolumeCapabilities []string `json:"volumeCapabilities,omitempty"`
	BlockDevicePath    string   `json:"blockDevicePath,omitempty"`
	// HostID is a local-scope pool's host; "" for an environment-scope
	// pool.
	HostID  string     `json:"hostId,omitempty"`
	State   string     `json:"state"`
	Created time.Time  `json:"created"`
	Removed *time.Time `json:"removed,omitempty"`
	// HostIDs and VolumeIDs are what the API answers in hostIds and
	// volumeIds: the hosts mapped to the pool and the volumes in it
	// (filled in by StoragePools and StoragePool; ignored by the
	// simulator otherwise).
	HostIDs   []string `json:"hostIds"`
	VolumeIDs []string `json:"volumeIds"`
}

func (p *StoragePool) clone() StoragePool {
	c := *p
	c.VolumeCapabilities = slices.Clone(p.VolumeCapabilities)
	c.HostIDs, c.VolumeIDs = slices.Clone(p.HostIDs), slices.Clone(p.VolumeIDs)
	c.Removed = clonePtr(p.Removed)
	return c
}

// AddStorageDriver registers a storage driver, as its storage stack's
// service does when it starts, and makes its storage pools: e.g.
// s.AddStorageDriver(ranchersim.RancherNFS()). Defaults: ID "1sd<n>",
// Scope ScopeEnvironment and VolumeAccessMode AccessMultiHostRW (also
// for values Cattle does not know, as StorageDriverActivate does), State
// active, Created now; a local-scope driver gets CapabilityScheduleSize.
// It panics on a taken ID or a name another live driver has, as a test's
// mistake.
func (s *Server) AddStorageDriver(d StorageDriver) StorageDriver {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d.Name == "" {
		panic("ranchersim: a storage driver needs a name")
	}
	if s.st.liveDriverNamed(d.Name) != nil {
		panic(fmt.Sprintf("ranchersim: storage driver %q exists", d.Name))
	}
	if !slices.Contains([]string{ScopeEnvironment, ScopeLocal, ScopeCustom}, d.Scope) {
		d.Scope = ScopeEnvironment
	}
	if !slices.Contains([]string{AccessMultiHostRW, AccessSingleHostRW, AccessSingleInstanceRW}, d.VolumeAccessMode) {
		d.VolumeAccessMode = AccessMultiHostRW
	}
	if d.Scope == ScopeLocal && !slices.Contains(d.Capabilities, CapabilityScheduleSize) {
		d.Capabilities = append(slices.Clone(d.Capabilities), CapabilityScheduleSize)
	}
	if d.State == "" {
		d.State = StateActive
	}
	s.st.admit(prefixStorageDriver, &d.ID, &d.Created)
	out := d.clone()
	s.st.drivers.Put(out.ID, &out)
	s.st.syncPools()
	return out.clone()
}

// StorageDriver returns a copy of the storage driver with the ID.
func (s *Server) StorageDriver(id string) (StorageDriver, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return simkit.CloneOf(s.st.drivers, id, (*StorageDriver).clone)
}

// StorageDriverByName returns a copy of the live (not removed) storage
// driver called name.
func (s *Server) StorageDriverByName(name string) (StorageDriver, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.st.liveDriverNamed(name); d != nil {
		return d.clone(), true
	}
	return StorageDriver{}, false
}

// StorageDrivers returns copies of the storage drivers, oldest first.
func (s *Server) StorageDrivers() []StorageDriver {
	s.mu.Lock()
	defer s.mu.Unlock()
	return simkit.CloneAll(s.st.drivers.All(), (*StorageDriver).clone)
}

// StoragePool returns a copy of the storage pool with the ID, its
// HostIDs and VolumeIDs filled in.
func (s *Server) StoragePool(id string) (StoragePool, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.syncPools()
	p, found := s.st.pools.Get(id)
	if !found {
		return StoragePool{}, false
	}
	return s.st.poolCopy(p), true
}

// StoragePools returns copies of the storage pools, oldest first, their
// HostIDs and VolumeIDs filled in.
func (s *Server) StoragePools() []StoragePool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.syncPools()
	var out []StoragePool
	for _, p := range s.st.pools.All() {
		out = append(out, s.st.poolCopy(p))
	}
	return out
}

func (st *state) poolCopy(p *StoragePool) StoragePool {
	c := p.clone()
	c.HostIDs, c.VolumeIDs = st.poolHosts(p), st.poolVolumes(p)
	return c
}

// liveDriverNamed returns the storage driver called name that is not
// removed.
func (st *state) liveDriverNamed(name string) *StorageDriver {
	d, _ := st.drivers.Find(func(d *StorageDriver) bool { return d.Name == name && d.Removed == nil })
	return d
}

// liveHost reports whether host id exists and is not removed.
func (st *state) liveHost(id string) bool {
	h, found := st.hosts.Get(id)
	return found && h.Removed == nil && h.State != StateRemoving
}

// syncPools makes the storage pools Cattle keeps for the live drivers
// and hosts (StorageServiceImpl.setupPools, run on storagedriver.activate
// and host.activate): one for an environment-scope driver, one per live
// host for a local-scope driver (removed with its host, as HostRemove
// removes them), none for a custom one.
func (st *state) syncPools() {
	for _, d := range st.drivers.All() {
		if d.Removed != nil || d.Scope == ScopeCustom {
			continue
		}
		if d.Scope != ScopeLocal {
			if _, found := st.pools.Find(func(p *StoragePool) bool { return p.StorageDriverID == d.ID && p.Removed == nil }); !found {
				st.addPool(d, "")
			}
			continue
		}
		for _, h := range st.hosts.All() {
			if !st.liveHost(h.ID) {
				continue
			}
			if _, found := st.pools.Find(func(p *StoragePool) bool {
				return p.StorageDriverID == d.ID && p.HostID == h.ID && p.Removed == nil
			}); !found {
				st.addPool(d, h.ID)
			}
		}
	}
	for _, p := range st.pools.All() {
		if p.HostID != "" && p.Removed == nil && !st.liveHost(p.HostID) {
			t := st.now()
			p.State, p.Removed = StateRemoved, &t
		}
	}
}

func (st *state) addPool(d *StorageDriver, hostID string) {
	p := StoragePool{Name: d.Name, DriverName: d.Name, StorageDriverID: d.ID, VolumeAccessMode: d.VolumeAccessMode,
		VolumeCapabilities: slices.Clone(d.VolumeCapabilities), BlockDevicePath: d.BlockDevicePath, HostID: hostID,
		State: StateActive}
	st.admit(prefixStoragePool, &p.ID, &p.Created)
	st.pools.Put(p.ID, &p)
}

// poolHosts are the hosts mapped to a pool: a local pool's host, every
// live host for an environment pool.
func (st *state) poolHosts(p *StoragePool) []string {
	out := []string{}
	if p.Removed != nil {
		return out
	}
	for _, h := range st.hosts.All() {
		if st.liveHost(h.ID) && (p.HostID == "" || p.HostID == h.ID) {
			out = append(out, h.ID)
		}
	}
	return out
}

// poolVolumes are the volumes mapped to a pool (their storage pool maps
// go when they are removed).
func (st *state) poolVolumes(p *StoragePool) []string {
	out := []string{}
	for _, v := range st.volumes.All() {
		if slices.Contains(v.StoragePoolIDs, p.ID) {
			out = append(out, v.ID)
		}
	}
	return out
}

// firstPool is the first live pool of the driver called name, which
// Cattle maps a new volume of that driver to (VolumeManager).
func (st *state) firstPool(driverName string) *StoragePool {
	st.syncPools()
	p, _ := st.pools.Find(func(p *StoragePool) bool { return p.DriverName == driverName && p.Removed == nil })
	return p
}

// hostPool is the live pool of storage driver driverID mapped to host
// hostID, if any (StoragePoolDaoImpl.associateVolumeToPool).
func (st *state) hostPool(driverID, hostID string) *StoragePool {
	st.syncPools()
	for _, p := range st.pools.All() {
		if p.StorageDriverID == driverID && p.Removed == nil && slices.Contains(st.poolHosts(p), hostID) {
			return p
		}
	}
	return nil
}

// storageDriverDoc is a storage driver as the API answers it (go-
// rancher's StorageDriver).
type storageDriverDoc struct {
	resource
	Name                 string   `json:"name"`
	State                string   `json:"state"`
	Kind                 string   `json:"kind"`
	UUID                 string   `json:"uuid"`
	AccountID            string   `json:"accountId"`
	Description          *string  `json:"description"`
	Scope                string   `json:"scope"`
	VolumeAccessMode     string   `json:"volumeAccessMode"`
	VolumeCapabilities   []string `json:"volumeCapabilities"`
	BlockDevicePath      *string  `json:"blockDevicePath"`
	ServiceID            *string  `json:"serviceId"`
	Created              string   `json:"created"`
	CreatedTS            int64    `json:"createdTS"`
	Removed              *string  `json:"removed"`
	Transitioning        string   `json:"transitioning"`
	TransitioningMessage *string  `json:"transitioningMessage"`
}

func (v view) storageDriver(st *state, d *StorageDriver) storageDriverDoc {
	self := v.self("storagedrivers", d.ID)
	return storageDriverDoc{
		resource: resource{ID: d.ID, Type: "storageDriver", BaseType: "storageDriver", Actions: map[string]string{},
			Links: map[string]string{"self": self, "storagePools": self + "/storagepools", "volumes": self + "/volumes"}},
		Name: d.Name, State: d.State, Kind: "storageDriver", UUID: uuidFor(d.ID), AccountID: st.opts.Project,
		Description: nullable(d.Description), Scope: d.Scope, VolumeAccessMode: d.VolumeAccessMode,
		VolumeCapabilities: d.VolumeCapabilities, BlockDevicePath: nullable(d.BlockDevicePath),
		ServiceID: nullable(d.ServiceID), Created: d.Created.Format(time.RFC3339), CreatedTS: d.Created.UnixMilli(),
		Removed: timestamp(d.Removed), Transitioning: transitioning(d.State),
		TransitioningMessage: transitioningMessage(d.State),
	}
}

// storagePoolDoc is a storage pool as the API answers it (go-rancher's
// StoragePool; StoragePoolOutputFilter adds hostIds and volumeIds).
type storagePoolDoc struct {
	resource
	Name                 string   `json:"name"`
	State                string   `json:"state"`
	Kind                 string   `json:"kind"`
	UUID                 string   `json:"uuid"`
	AccountID            string   `json:"accountId"`
	Description          *string  `json:"description"`
	DriverName           string   `json:"driverName"`
	StorageDriverID      string   `json:"storageDriverId"`
	VolumeAccessMode     string   `json:"volumeAccessMode"`
	VolumeCapabilities   []string `json:"volumeCapabilities"`
	BlockDevicePath      *string  `json:"blockDevicePath"`
	ExternalID           *string  `json:"externalId"`
	HostIDs              []string `json:"hostIds"`
	VolumeIDs            []string `json:"volumeIds"`
	Created              string   `json:"created"`
	CreatedTS            int64    `json:"createdTS"`
	Removed              *string  `json:"removed"`
	Transitioning        string   `json:"transitioning"`
	TransitioningMessage *string  `json:"transitioningMessage"`
}

func (v view) storagePool(st *state, p *StoragePool) storagePoolDoc {
	self := v.self("storagepools", p.ID)
	return storagePoolDoc{
		resource: resource{ID: p.ID, Type: "storagePool", BaseType: "storagePool", Actions: map[string]string{},
			Links: map[string]string{"self": self, "hosts": self + "/hosts", "volumes": self + "/volumes",
				"storageDriver": v.self("storagedrivers", p.StorageDriverID)}},
		Name: p.Name, State: p.State, Kind: "storagePool", UUID: uuidFor(p.ID), AccountID: st.opts.Project,
		DriverName: p.DriverName, StorageDriverID: p.StorageDriverID, VolumeAccessMode: p.VolumeAccessMode,
		VolumeCapabilities: p.VolumeCapabilities, BlockDevicePath: nullable(p.BlockDevicePath),
		HostIDs: st.poolHosts(p), VolumeIDs: st.poolVolumes(p),
		Created: p.Created.Format(time.RFC3339), CreatedTS: p.Created.UnixMilli(),
		Removed: timestamp(p.Removed), Transitioning: transitioning(p.State),
		TransitioningMessage: transitioningMessage(p.State),
	}
}

func (s *Server) storageRoutes() {
	s.handle("GET "+projectPath+"/storagedrivers", s.listStorageDrivers(nil))
	s.handle("GET "+projectPath+"/storagedrivers/{id}", s.getStorageDriver)
	s.handle("GET "+projectPath+"/storagedrivers/{id}/storagepools", s.linkedPools)
	s.handle("GET "+projectPath+"/storagedrivers/{id}/volumes", s.linkedVolumes("storagedrivers"))
	s.handle("GET "+projectPath+"/storagepools", s.listStoragePools(nil))
	s.handle("GET "+projectPath+"/storagepools/{id}", s.getStoragePool)
	s.handle("GET "+projectPath+"/storagepools/{id}/hosts", s.poolHostsLink)
	s.handle("GET "+projectPath+"/storagepools/{id}/volumes", s.linkedVolumes("storagepools"))
}

// showRemoved reports whether a list request asked for removed resources
// too (?_removed, one of Cattle's api.request.options). Otherwise Cattle
// lists leave them out (AbstractObjectResourceManager.getDefaultCriteria,
// api.show.removed.for.seconds=-300), though a GET by ID still answers
// them until they are purged: "Removed volumes will not appear when
// listing volumes, but they continue to exist in Rancher API for a
// period of time" (the Rancher 1.6 docs, Volumes).
func showRemoved(r *http.Request) bool { return r.URL.Query().Has("_removed") }

// listed are the items a list request shows: all with ?_removed, else
// those not removed.
func listed[T any](r *http.Request, items []*T, removed func(*T) *time.Time) []*T {
	if showRemoved(r) {
		return items
	}
	var out []*T
	for _, it := range items {
		if removed(it) == nil {
			out = append(out, it)
		}
	}
	return out
}

func (s *Server) listStorageDrivers(keep func(*StorageDriver) bool) simkit.HandlerFunc {
	return func(r *http.Request) simkit.Response {
		v := s.view(r)
		items := listed(r, s.st.drivers.All(), func(d *StorageDriver) *time.Time { return d.Removed })
		if keep != nil {
			items = slices.DeleteFunc(items, func(d *StorageDriver) bool { return !keep(d) })
		}
		return list(s, r, listing[StorageDriver]{typ: "storageDriver", items: items,
			id: func(d *StorageDriver) string { return d.ID }, doc: func(d *StorageDriver) any { return v.storageDriver(s.st, d) },
			filters: storageDriverDef.filters})
	}
}

func (s *Server) getStorageDriver(r *http.Request) simkit.Response {
	id := r.PathValue("id")
	s.st.read(id)
	d, found := s.st.drivers.Get(id)
	if !found {
		return notFound()
	}
	return ok(s.view(r).storageDriver(s.st, d))
}

func (s *Server) listStoragePools(keep func(*StoragePool) bool) simkit.HandlerFunc {
	return func(r *http.Request) simkit.Response {
		s.st.syncPools()
		v := s.view(r)
		items := listed(r, s.st.pools.All(), func(p *StoragePool) *time.Time { return p.Removed })
		if keep != nil {
			items = slices.DeleteFunc(items, func(p *StoragePool) bool { return !keep(p) })
		}
		return list(s, r, listing[StoragePool]{typ: "storagePool", items: items,
			id: func(p *StoragePool) string { return p.ID }, doc: func(p *StoragePool) any { return v.storagePool(s.st, p) },
			filters: storagePoolDef.filters})
	}
}

func (s *Server) getStoragePool(r *http.Request) simkit.Response {
	s.st.syncPools()
	id := r.PathValue("id")
	s.st.read(id)
	p, found := s.st.pools.Get(id)
	if !found {
		return notFound()
	}
	return ok(s.view(r).storagePool(s.st, p))
}

// linkedPools answers a storage driver's storagePools link.
func (s *Server) linkedPools(r *http.Request) simkit.Response {
	id := r.PathValue("id")
	if _, found := s.st.drivers.Get(id); !found {
		return notFound()
	}
	return s.listStoragePools(func(p *StoragePool) bool { return p.StorageDriverID == id })(r)
}

// poolHostsLink answers a storage pool's hosts link: the hosts mapped to
// it.
func (s *Server) poolHostsLink(r *http.Request) simkit.Response {
	s.st.syncPools()
	p, found := s.st.pools.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	v := s.view(r)
	var hosts []*Host
	for _, id := range s.st.poolHosts(p) {
		if h, ok := s.st.hosts.Get(id); ok {
			hosts = append(hosts, h)
		}
	}
	return list(s, r, listing[Host]{typ: "host", items: hosts, id: func(h *Host) string { return h.ID },
		doc: func(h *Host) any { return v.host(s.st, h) }, filters: mustSchema("host").filters})
}
