package tritonsim

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// RFD 26 volumes: the type, states and sizes CloudAPI and VOLAPI use
// (sdc-cloudapi lib/validation/volumes.js, docs/index.md "Volumes";
// sdc-volapi lib/endpoints/volumes.js).
const (
	// VolumeTypeNFS is the one volume type there is: an NFS server in a
	// zone of its own (the storage VM) exporting a delegated dataset.
	VolumeTypeNFS = "tritonnfs"
	// VolumeCreating, VolumeReady, VolumeFailed and VolumeDeleting are a
	// volume's states. A deleted volume is no longer held: GetVolume
	// answers 404 VolumeNotFound.
	VolumeCreating = "creating"
	VolumeReady    = "ready"
	VolumeFailed   = "failed"
	VolumeDeleting = "deleting"
	// DefaultVolumeSize is the size, in MiB, of a volume created with
	// none: the smallest of the sizes (CloudAPI: "Default value is 10240
	// mebibytes").
	DefaultVolumeSize int64 = 10240
)

// VolumeStates are the states CloudAPI's ListVolumes accepts as a filter.
var VolumeStates = []string{VolumeCreating, VolumeReady, VolumeFailed, VolumeDeleting}

// DefaultVolumeSizes are the sizes, in MiB, a volume can have when
// Options.VolumeSizes is nil: the quotas of the sdc_volume_nfs_* packages
// of a Triton datacenter, as CloudAPI's ListVolumeSizes documents them —
// 10 to 100 GiB by 10, then 200 GiB to 1000 GiB by 100.
var DefaultVolumeSizes = func() []int64 {
	var out []int64
	for g := int64(10); g <= 100; g += 10 {
		out = append(out, g*1024)
	}
	for g := int64(200); g <= 1000; g += 100 {
		out = append(out, g*1024)
	}
	return out
}()

// Volume is an RFD 26 shared volume as the simulator holds it; GetVolume
// serves it as CloudAPI does (volumeJSON), which triton-go's
// compute.Volume decodes.
type Volume struct {
	// ID is the volume's UUID; "" gets a new one.
	ID string `json:"id"`
	// Name is unique among the account's creating and ready volumes; ""
	// gets one generated as VOLAPI generates it (64 hex digits).
	Name string `json:"name"`
	// Owner is the account's UUID; AddVolume sets it.
	Owner string `json:"owner_uuid"`
	// Type is VolumeTypeNFS; "" means it.
	Type string `json:"type"`
	// Size is in MiB; 0 means DefaultVolumeSize. AddVolume takes any
	// size; CreateVolume only Options.VolumeSizes.
	Size int64 `json:"size"`
	// State is one of VolumeStates; "" means ready.
	State string `json:"state"`
	// Networks are the fabric networks the storage VM has a NIC on; none
	// means the account's default fabric network.
	Networks []string `json:"networks"`
	// Refs are the machines that use the volume (CloudAPI's refs).
	Refs []string `json:"refs,omitempty"`
	// Tags are the volume's tags (VOLAPI's labels).
	Tags map[string]string `json:"tags,omitempty"`
	// FilesystemPath is "<storage VM IP>:/zones/<storage VM UUID>/data",
	// what an NFS client mounts; set when the volume is ready.
	FilesystemPath string `json:"filesystem_path,omitempty"`
	// Created is when it was made; zero means now.
	Created time.Time `json:"created"`

	// storageVM and storageIP are the storage VM's UUID and the address
	// of its first NIC, on Networks[0] (VOLAPI's vm_uuid, which CloudAPI
	// hides; the VM itself is hidden from ListMachines as CloudAPI hides
	// nfsvolumestorage VMs, and is not simulated).
	storageVM, storageIP string
	// fail makes the volume fail instead of becoming ready
	// (FailNextVolumes).
	fail bool
}

func (v *Volume) clone() Volume {
	c := *v
	c.Networks, c.Refs = slices.Clone(v.Networks), slices.Clone(v.Refs)
	if v.Tags != nil {
		c.Tags = maps.Clone(v.Tags)
	}
	return c
}

// volumeState is the account's volumes. The Server's mutex guards it.
type volumeState struct {
	volumes *simkit.Table[Volume]
	// settling moves creating volumes to ready (or failed) and deletes
	// deleting ones, on reads, with time, or on Advance.
	settling *simkit.Lifecycle
	// exports are the storage VMs' NFS exports on the local filesystem.
	exports *nfsExports
	// failNext is how many of the next volumes created fail.
	failNext int
}

// newVolumeState is an account's volumes; lock is the Server's mutex,
// which the Lifecycle's timers take (Options.SettleAfter).
func newVolumeState(opts Options, lock sync.Locker) *volumeState {
	return &volumeState{
		volumes:  simkit.NewTable[Volume](),
		settling: simkit.NewLifecycle(opts.ProvisioningReads).WithTime(opts.SettleAfter, lock),
		exports:  &nfsExports{dir: opts.NFSExportDir},
	}
}

// volumeSizes are the sizes CreateVolume accepts, ascending.
func (st *state) volumeSizes() []int64 {
	if len(st.opts.VolumeSizes) == 0 {
		return DefaultVolumeSizes
	}
	return slices.Sorted(slices.Values(st.opts.VolumeSizes))
}

// defaultFabric is the account's default network for volumes (its
// default_network, which CloudAPI takes when a create names none): the
// first fabric network.
func (st *state) defaultFabric() (*Network, bool) {
	for _, n := range st.networks.All() {
		if n.Fabric {
			return n, true
		}
	}
	return nil, false
}

// addVolume stores v, filling what is unset, and starts what its state
// has pending: a creating volume settles ready (its export made) or
// failed, a deleting one goes.
func (st *state) addVolume(v Volume) (*Volume, error) {
	if v.ID == "" {
		v.ID = st.uuid("volume")
	}
	if v.Name == "" {
		v.Name = generatedVolumeName(v.ID, st.uuid("volume-name"))
	}
	v.Owner = st.accountID
	v.Type = cmpOr(v.Type, VolumeTypeNFS)
	if v.Size == 0 {
		v.Size = DefaultVolumeSize
	}
	v.State = cmpOr(v.State, VolumeReady)
	if !slices.Contains(VolumeStates, v.State) {
		return nil, fmt.Errorf("volume state %q is not one of %v", v.State, VolumeStates)
	}
	if len(v.Networks) == 0 {
		n, found := st.defaultFabric()
		if !found {
			return nil, fmt.Errorf("the account has no fabric network for volume %s", v.Name)
		}
		v.Networks = []string{n.ID}
	}
	v.Networks = slices.Clone(v.Networks)
	for _, id := range v.Networks {
		if _, found := st.networks.Get(id); !found {
			return nil, fmt.Errorf("network %q does not exist", id)
		}
	}
	first, _ := st.networks.Get(v.Networks[0])
	if v.Created.IsZero() {
		v.Created = st.now()
	}
	v.Refs = slices.Clone(v.Refs)
	if v.Tags != nil {
		v.Tags = maps.Clone(v.Tags)
	}
	v.storageVM = st.uuid("storage-vm")
	ip, err := st.allocateIP(first)
	if err != nil {
		return nil, err
	}
	v.storageIP = ip
	stored := &v
	if v.State == VolumeReady || v.State == VolumeDeleting {
		if err := st.vols.exports.make(v.ID); err != nil {
			return nil, err
		}
		stored.FilesystemPath = stored.nfsPath()
	}
	st.vols.volumes.Put(v.ID, stored)
	switch v.State {
	case VolumeCreating:
		st.vols.settling.Start(v.ID, func() { st.settleVolume(stored) })
	case VolumeDeleting:
		st.startVolumeDeletion(stored)
	}
	return stored, nil
}

// generatedVolumeName is the name VOLAPI gives a volume created without
// one: its UUID and another, without their dashes.
func generatedVolumeName(id, other string) string {
	name := make([]byte, 0, 64)
	for _, c := range id + other {
		if c != '-' {
			name = append(name, byte(c))
		}
	}
	return string(name)
}

// nfsPath is the volume's filesystem_path as VOLAPI's updater sets it for
// a version 2 storage VM (nfsServer2Enabled, the default): the storage
// VM's first NIC's address and <zonepath>/data.
func (v *Volume) nfsPath() string {
	return v.storageIP + ":/zones/" + v.storageVM + "/data"
}

// settleVolume ends a volume's creation: ready, with its export made and
// its filesystem_path, as when its storage VM is running; failed, as when
// the storage VM fails to provision (FailNextVolumes, or an export that
// cannot be made).
func (st *state) settleVolume(v *Volume) {
	if v.State != VolumeCreating {
		return
	}
	if v.fail || st.vols.exports.make(v.ID) != nil {
		v.State = VolumeFailed
		return
	}
	v.State, v.FilesystemPath = VolumeReady, v.nfsPath()
}

// startVolumeDeletion makes v deleting; it goes, its export's data with
// it, when the deletion settles, as when its storage VM is destroyed.
func (st *state) startVolumeDeletion(v *Volume) {
	v.State = VolumeDeleting
	id := v.ID
	st.vols.settling.Start(id, func() { st.dropVolume(id) })
}

// dropVolume forgets a volume and removes its export.
func (st *state) dropVolume(id string) {
	st.vols.settling.Stop(id)
	st.vols.volumes.Del(id)
	_ = st.vols.exports.remove(id)
}

// dropVolumeRefs removes machine id from every volume's refs, as VOLAPI's
// updater does when a machine is destroyed.
func (st *state) dropVolumeRefs(id string) {
	for _, v := range st.vols.volumes.All() {
		v.Refs = slices.DeleteFunc(v.Refs, func(ref string) bool { return ref == id })
	}
}

// AddVolume stores a volume, as if created earlier, and returns it: unset
// fields get the defaults their doc comments give. A ready (or deleting)
// volume gets its filesystem_path and its export at once (NFSExportDir);
// a creating one settles as one created through the API does; a deleting
// one goes as one deleted does.
// It returns an error for a network that does not exist, a state that is
// none of VolumeStates, or an export that cannot be made.
func (s *Server) AddVolume(v Volume) (Volume, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	added, err := s.st.addVolume(v)
	if err != nil {
		return Volume{}, err
	}
	return added.clone(), nil
}

// Volume returns the volume with the ID (creating, ready, failed or
// deleting: a deleted volume is gone).
func (s *Server) Volume(id string) (Volume, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, found := s.st.vols.volumes.Get(id)
	if !found {
		return Volume{}, false
	}
	return v.clone(), true
}

// Volumes returns the account's volumes, oldest first, failed and
// deleting ones included.
func (s *Server) Volumes() []Volume {
	s.mu.Lock()
	defer s.mu.Unlock()
	return simkit.CloneAll(s.st.vols.volumes.All(), (*Volume).clone)
}

// SetVolumeState sets a volume's state by hand (failed, as when its
// storage VM stops or is lost; ready...), settling nothing it had
// pending; deleting starts its deletion. A volume set ready gets its
// export and filesystem_path. It reports whether the volume exists, and
// returns an error for a state none of VolumeStates or an export that
// cannot be made.
func (s *Server) SetVolumeState(id, state string) (bool, error) {
	if !slices.Contains(VolumeStates, state) {
		return false, fmt.Errorf("volume state %q is not one of %v", state, VolumeStates)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v, found := s.st.vols.volumes.Get(id)
	if !found {
		return false, nil
	}
	s.st.vols.settling.Stop(id)
	switch state {
	case VolumeDeleting:
		s.st.startVolumeDeletion(v)
	case VolumeReady:
		if err := s.st.vols.exports.make(id); err != nil {
			return true, err
		}
		v.State, v.FilesystemPath = state, v.nfsPath()
	default:
		v.State = state
	}
	return true, nil
}

// FailNextVolumes makes the next n volumes created through the API fail
// (state failed, as when VOLAPI's storage VM fails to provision) instead
// of becoming ready: the fault a Fault cannot inject, since CreateVolume
// itself succeeds.
func (s *Server) FailNextVolumes(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.vols.failNext = n
}

// AddVolumeRef records that machine machineID uses volume volumeID, as
// VOLAPI's AddVolumeReference does when a machine that mounts it is
// provisioned: DeleteVolume is refused while an active machine (neither
// failed nor deleted) refers to it, UpdateVolume while any does. A
// machine's refs go when it is deleted. It reports whether both exist.
func (s *Server) AddVolumeRef(volumeID, machineID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, found := s.st.vols.volumes.Get(volumeID)
	if _, isMachine := s.st.machines.Get(machineID); !found || !isMachine {
		return false
	}
	if !slices.Contains(v.Refs, machineID) {
		v.Refs = append(v.Refs, machineID)
	}
	return true
}

// RemoveVolumeRef removes machineID from volume volumeID's refs, as
// VOLAPI's RemoveVolumeReference does; it reports whether the volume
// exists.
func (s *Server) RemoveVolumeRef(volumeID, machineID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, found := s.st.vols.volumes.Get(volumeID)
	if found {
		v.Refs = slices.DeleteFunc(v.Refs, func(ref string) bool { return ref == machineID })
	}
	return found
}
