package ranchersim

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Mount is a Cattle mount: a container's use of a volume at a path.
// Cattle makes one when a container using the volume starts on a host;
// the simulator runs no containers, so tests seed them (AddMount).
type Mount struct {
	// ID is "1m<n>".
	ID       string `json:"id"`
	VolumeID string `json:"volumeId"`
	// InstanceID and InstanceName are the container's (containers are
	// not simulated: nothing checks them).
	InstanceID   string `json:"instanceId"`
	InstanceName string `json:"instanceName,omitempty"`
	Path         string `json:"path"`
	// Permissions are "rw" unless given.
	Permissions string `json:"permissions"`
	// State is active, or removed.
	State   string     `json:"state"`
	Created time.Time  `json:"created"`
	Removed *time.Time `json:"removed,omitempty"`
}

func (m *Mount) clone() Mount {
	c := *m
	c.Removed = clonePtr(m.Removed)
	return c
}

func (s *Server) mountRoutes() {
	s.handle("GET "+projectPath+"/mounts", s.listMounts(nil))
	s.handle("GET "+projectPath+"/mounts/{id}", s.getMount)
}

// mountDoc is a mount as the API answers it (go-rancher's Mount).
type mountDoc struct {
	resource
	Name                 *string `json:"name"`
	State                string  `json:"state"`
	Kind                 string  `json:"kind"`
	UUID                 string  `json:"uuid"`
	AccountID            string  `json:"accountId"`
	Description          *string `json:"description"`
	InstanceID           string  `json:"instanceId"`
	VolumeID             string  `json:"volumeId"`
	Path                 string  `json:"path"`
	Permissions          string  `json:"permissions"`
	Created              string  `json:"created"`
	CreatedTS            int64   `json:"createdTS"`
	Removed              *string `json:"removed"`
	Transitioning        string  `json:"transitioning"`
	TransitioningMessage *string `json:"transitioningMessage"`
}

func (v view) mount(st *state, m *Mount) mountDoc {
	self := v.self("mounts", m.ID)
	return mountDoc{
		resource: resource{ID: m.ID, Type: "mount", BaseType: "mount", Actions: map[string]string{},
			Links: map[string]string{"self": self, "volume": v.self("volumes", m.VolumeID)}},
		State: m.State, Kind: "mount", UUID: uuidFor(m.ID), AccountID: st.opts.Project,
		InstanceID: m.InstanceID, VolumeID: m.VolumeID, Path: m.Path, Permissions: m.Permissions,
		Created: m.Created.Format(time.RFC3339), CreatedTS: m.Created.UnixMilli(), Removed: timestamp(m.Removed),
		Transitioning: transitioning(m.State), TransitioningMessage: transitioningMessage(m.State),
	}
}

// mountEntryDoc is one of a volume's mounts field (Cattle's MountEntry,
// VolumeOutputFilter): a live mount of a live container.
type mountEntryDoc struct {
	InstanceID   string `json:"instanceId"`
	InstanceName string `json:"instanceName"`
	Path         string `json:"path"`
	VolumeID     string `json:"volumeId"`
	VolumeName   string `json:"volumeName"`
}

// mountEntries are a volume's mounts field: its mounts not removed (none
// once the volume is removed, VolumeDaoImpl.getMountsForVolumes).
func (st *state) mountEntries(vol *Volume) []mountEntryDoc {
	out := []mountEntryDoc{}
	if vol.Removed != nil {
		return out
	}
	for _, m := range st.mounts.All() {
		if m.VolumeID == vol.ID && m.Removed == nil {
			out = append(out, mountEntryDoc{InstanceID: m.InstanceID, InstanceName: m.InstanceName, Path: m.Path,
				VolumeID: vol.ID, VolumeName: vol.Name})
		}
	}
	return out
}

func (s *Server) listMounts(keep func(*Mount) bool) simkit.HandlerFunc {
	return func(r *http.Request) simkit.Response {
		v := s.view(r)
		items := listed(r, s.st.mounts.All(), func(m *Mount) *time.Time { return m.Removed })
		if keep != nil {
			items = slices.DeleteFunc(items, func(m *Mount) bool { return !keep(m) })
		}
		return list(s, r, listing[Mount]{typ: "mount", items: items, id: func(m *Mount) string { return m.ID },
			doc: func(m *Mount) any { return v.mount(s.st, m) }, filters: mountDef.filters})
	}
}

func (s *Server) getMount(r *http.Request) simkit.Response {
	m, found := s.st.mounts.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	return ok(s.view(r).mount(s.st, m))
}

// volumeMounts answers a volume's mounts link.
func (s *Server) volumeMounts(r *http.Request) simkit.Response {
	id := r.PathValue("id")
	if _, found := s.st.volumes.Get(id); !found {
		return notFound()
	}
	return s.listMounts(func(m *Mount) bool { return m.VolumeID == id })(r)
}

// removeMountsOf removes a volume's mounts (VolumeRemove).
func (st *state) removeMountsOf(volumeID string) {
	for _, m := range st.mounts.All() {
		if m.VolumeID == volumeID && m.Removed == nil {
			t := st.now()
			m.State, m.Removed = StateRemoved, &t
		}
	}
}

// AddMount records a container's mount of a volume, as Cattle does when
// the container starts: the mount is active, and the volume, if inactive
// or detached, activates (activating, then active), taking its access
// mode from its driver's pool when it has none (InstancePreStart). An
// active volume cannot be removed (DELETE 405, no remove action) until
// its mounts are gone (RemoveMount). Defaults: ID "1m<n>", Permissions
// "rw", InstanceID derived from the mount's ID, Created now. It panics
// on an unknown volume, or one in another state, as a test's mistake.
func (s *Server) AddMount(m Mount) Mount {
	s.mu.Lock()
	defer s.mu.Unlock()
	vol, found := s.st.volumes.Get(m.VolumeID)
	if !found {
		panic(fmt.Sprintf("ranchersim: no volume %q to mount", m.VolumeID))
	}
	if !slices.Contains([]string{StateInactive, StateDetached, StateActivating, StateActive}, vol.State) {
		panic(fmt.Sprintf("ranchersim: volume %s is %s: containers mount inactive, detached or active volumes", vol.ID, vol.State))
	}
	s.st.admit(prefixMount, &m.ID, &m.Created)
	if m.InstanceID == "" {
		m.InstanceID = prefixInstance + m.ID[len(prefixMount):]
	}
	if m.Permissions == "" {
		m.Permissions = "rw"
	}
	m.State, m.Removed = StateActive, nil
	out := m.clone()
	s.st.mounts.Put(out.ID, &out)
	if vol.AccessMode == "" {
		if p := s.st.firstPool(vol.Driver); p != nil {
			vol.AccessMode = p.VolumeAccessMode
		}
	}
	if vol.State == StateInactive || vol.State == StateDetached {
		s.st.transition(vol.ID, func(state string) { vol.State = state }, StateActivating, StateActive)
	}
	return out.clone()
}

// RemoveMount removes a mount, as Cattle does when its container is
// removed: the last mount of an active volume gone, the volume
// deactivates (deactivating, then detached). It reports whether the
// mount exists.
func (s *Server) RemoveMount(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, found := s.st.mounts.Get(id)
	if !found || m.Removed != nil {
		return found
	}
	t := s.st.now()
	m.State, m.Removed = StateRemoved, &t
	vol, ok := s.st.volumes.Get(m.VolumeID)
	if ok && (vol.State == StateActive || vol.State == StateActivating) && len(s.st.mountEntries(vol)) == 0 {
		s.st.detach(vol)
	}
	return true
}

// Mounts returns copies of the mounts, oldest first, removed ones too.
func (s *Server) Mounts() []Mount {
	s.mu.Lock()
	defer s.mu.Unlock()
	return simkit.CloneAll(s.st.mounts.All(), (*Mount).clone)
}
