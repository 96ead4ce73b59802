package openstacksim

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Cinder volume statuses a project member sees (cinder/objects/fields.py
// VolumeStatus, and the api-ref's "Volume statuses").
const (
	VolumeCreating       = "creating"
	VolumeAvailable      = "available"
	VolumeReserved       = "reserved"
	VolumeInUse          = "in-use"
	VolumeDetaching      = "detaching"
	VolumeExtending      = "extending"
	VolumeDeleting       = "deleting"
	VolumeError          = "error"
	VolumeErrorDeleting  = "error_deleting"
	VolumeErrorExtending = "error_extending"
)

// Attach statuses of a VolumeAttachment.
const (
	AttachAttaching = "attaching"
	AttachAttached  = "attached"
	AttachDetaching = "detaching"
)

// ByIDName is the /dev/disk/by-id name of the device of Cinder volume id
// on the server it is attached to: Nova's libvirt driver sets the virtio
// disk's serial to the volume ID, which virtio-blk cuts to its first 20
// characters, and udev names the link virtio-<serial>.
func ByIDName(volumeID string) string {
	serial := volumeID
	if len(serial) > 20 {
		serial = serial[:20]
	}
	return "virtio-" + serial
}

// Volume is a Cinder volume as tests add and see it.
type Volume struct {
	// ID defaults to a generated one.
	ID          string `json:"id"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	// Size is in GiB; AddVolume makes 0 1.
	Size int `json:"size"`
	// Status is one of the Volume* statuses; AddVolume makes "" available
	// (in-use with attachments).
	Status string `json:"status"`
	// AZ is the availability zone; "" means the first of the storage
	// zones (Options.VolumeZones), "nova" by default.
	AZ string `json:"availability_zone"`
	// VolumeType is a type name or ID; "" means the default type (the
	// first of Options.VolumeTypes). Multiattach follows from the type.
	VolumeType  string            `json:"volume_type"`
	Multiattach bool              `json:"multiattach"`
	Bootable    bool              `json:"bootable,omitempty"`
	SnapshotID  string            `json:"snapshot_id,omitempty"`
	SourceVolID string            `json:"source_volid,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	// Attachments are the volume's attachments to servers, Nova's block
	// device mappings and Cinder's attachments in one, in any state. For
	// AddVolume, each names a ServerID (and optionally a Device).
	Attachments []VolumeAttachment `json:"attachments"`
}

// VolumeAttachment is a volume attached (or attaching, or detaching) to a
// Nova server.
type VolumeAttachment struct {
	// ID is Cinder's attachment ID (Nova's attachment_id).
	ID       string `json:"id"`
	VolumeID string `json:"volume_id"`
	ServerID string `json:"server_id"`
	// Device is what Nova reserved: /dev/vdb, /dev/vdc, … (vda is the
	// root disk).
	Device              string `json:"device"`
	Tag                 string `json:"tag,omitempty"`
	DeleteOnTermination bool   `json:"delete_on_termination"`
	// BDMUUID is the uuid of Nova's block device mapping.
	BDMUUID string `json:"bdm_uuid"`
	// Status is attaching, attached or detaching.
	Status     string `json:"status"`
	AttachedAt string `json:"attached_at,omitempty"`
}

// volumeRec is a stored volume.
type volumeRec struct {
	Volume
	project, userID string
	typeID          string
	updated         string
	imageID         string
	// hasBlocks: the Hypervisor made the volume's blocks (Create
	// succeeded), so Delete is due when it goes.
	hasBlocks bool
	// prevStatus is the status an extend returns to; newSize its size.
	prevStatus string
	newSize    int
	// cascade: the pending delete takes the volume's snapshots along.
	cascade bool
}

func (v Volume) clone() Volume {
	v.Metadata, v.Attachments = maps.Clone(v.Metadata), slices.Clone(v.Attachments)
	return v
}

// Cinder writes timestamps as naive UTC with microseconds.
const cinderTSLayout = "2006-01-02T15:04:05.000000"

var cinderCreated = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// cinderTick is the time of a change to a volume, snapshot or
// attachment now: a second after the previous one, so updated_at moves
// on as Cinder's does.
func (st *state) cinderTick() string {
	st.cinderTicks++
	return cinderCreated.Add(time.Duration(st.cinderTicks) * time.Second).Format(cinderTSLayout)
}

// disk is v as server (the server it is attached to, "" for none) sees
// it.
func (v *volumeRec) disk(server string) simkit.Disk {
	return simkit.Disk{ID: v.ID, ByIDName: ByIDName(v.ID), SizeBytes: int64(v.Size) << 30, Server: server}
}

// attachedServer is a server v is attached to (its first attachment),
// "" when none.
func (v *volumeRec) attachedServer() string {
	for _, a := range v.Attachments {
		if a.Status != AttachAttaching {
			return a.ServerID
		}
	}
	return ""
}

// hypervisor runs f on Options.Hypervisor, when there is one. The caller
// holds s.mu.
func (s *Server) hypervisor(f func(simkit.Hypervisor) error) error {
	if s.opts.Hypervisor == nil {
		return nil
	}
	return f(s.opts.Hypervisor)
}

// setVolumeStatus changes v's status and its updated_at.
func (s *Server) setVolumeStatus(v *volumeRec, status string) {
	v.Status, v.updated = status, s.st.cinderTick()
}

// readVolume counts a read of v; the ProvisioningReads-th read of a
// volume with a task under way settles it. It reports whether v still
// exists.
func (s *Server) readVolume(v *volumeRec) bool {
	s.st.volumeTasks.Read(v.ID)
	_, ok := s.st.volumes.Get(v.ID)
	return ok
}

// volume is the volume of the request's {id} in the token's project.
func (s *Server) volume(r *http.Request, id string) (*volumeRec, *response) {
	v, ok := s.st.volumes.Get(id)
	if !ok || v.project != s.tokenProject(r) {
		resp := cinderError(http.StatusNotFound, "Volume %s could not be found.", id)
		return nil, &resp
	}
	return v, nil
}

// volumeJSON is v as GET /volumes/{id} and /volumes/detail show it at
// 3.minor to a project member (cinder/api/v3/views/volumes.py): the
// attachments Nova has completed (host_name hidden), group_id from 3.13,
// shared_targets and service_uuid from 3.48, volume_type_id from 3.63,
// consumes_quota from 3.65; the host and migration attributes are an
// admin's, the tenant attribute a project reader's.
func (s *Server) volumeJSON(r *http.Request, v *volumeRec, minor int) map[string]any {
	attachments := []map[string]any{}
	for _, a := range v.Attachments {
		if a.Status == AttachAttaching {
			continue
		}
		attachments = append(attachments, map[string]any{
			"id": v.ID, "attachment_id": a.ID, "volume_id": v.ID, "server_id": a.ServerID,
			"host_name": nil, "device": a.Device, "attached_at": a.AttachedAt,
		})
	}
	bootable := "false"
	if v.Bootable {
		bootable = "true"
	}
	out := map[string]any{
		"id": v.ID, "status": v.Status, "size": v.Size, "availability_zone": v.AZ,
		"created_at": cinderCreated.Format(cinderTSLayout), "updated_at": nullable(v.updated),
		"name": nullable(v.Name), "description": nullable(v.Description), "volume_type": v.VolumeType,
		"snapshot_id": nullable(v.SnapshotID), "source_volid": nullable(v.SourceVolID), "metadata": nonNilMap(maps.Clone(v.Metadata)),
		"links": s.volumeLinks(r, "volumes", v.ID), "user_id": v.userID, "bootable": bootable, "encrypted": false,
		"replication_status": "disabled", "consistencygroup_id": nil, "multiattach": v.Multiattach,
		"attachments": attachments, "os-vol-tenant-attr:tenant_id": v.project,
	}
	if img, ok := s.st.images.Get(v.imageID); ok && v.imageID != "" {
		out["volume_image_metadata"] = map[string]string{
			"image_id": img.ID, "image_name": img.Name, "container_format": img.ContainerFormat, "disk_format": img.DiskFormat,
			"min_disk": fmt.Sprint(img.MinDisk), "min_ram": fmt.Sprint(img.MinRAM), "size": fmt.Sprint(len(img.data)),
		}
	}
	for _, f := range []struct {
		since int
		key   string
		value any
	}{
		{13, "group_id", nil},
		{48, "shared_targets", true},
		{48, "service_uuid", cinderServiceUUID},
		{63, "volume_type_id", v.typeID},
		{65, "consumes_quota", true},
	} {
		if minor >= f.since {
			out[f.key] = f.value
		}
	}
	return out
}

// cinderServiceUUID is the UUID of the one cinder-volume service.
const cinderServiceUUID = "c0ffee00-0000-4000-8000-0000000c1de7"

// volumeLinks are a resource's self and bookmark links, as Cinder's
// ViewBuilder._get_links makes them.
func (s *Server) volumeLinks(r *http.Request, collection, id string) []link {
	base, project := simkit.BaseURL(r), s.tokenProject(r)
	return []link{
		{Rel: "self", Href: base + volumeV3 + "/" + project + "/" + collection + "/" + id},
		{Rel: "bookmark", Href: base + volumePrefix + "/" + project + "/" + collection + "/" + id},
	}
}

// Volumes returns every volume (of every project), oldest first.
func (s *Server) Volumes() []Volume {
	s.mu.Lock()
	defer s.mu.Unlock()
	return simkit.CloneAll(s.st.volumes.All(), func(v *volumeRec) Volume { return v.clone() })
}

// SetVolumeStatus sets a volume's status by hand, as an admin's
// os-reset_status does (e.g. "available" after a failed delete left it
// in error_deleting), ending any task it had; false if there is no such
// volume.
func (s *Server) SetVolumeStatus(id, status string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.st.volumes.Get(id)
	if ok {
		s.st.volumeTasks.Stop(id)
		s.setVolumeStatus(v, status)
	}
	return ok
}

// AddVolume stores a volume as if it had been created earlier, available
// (or in-use when it has Attachments, each to a ServerID, its Device
// allocated when ""), and returns it as stored. The Hypervisor is told to
// create it (empty) and attach it; its error is returned and the volume
// is then not added.
func (s *Server) AddVolume(v Volume) (Volume, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, err := s.addVolume(v, s.st.projectID)
	if err != nil {
		return Volume{}, err
	}
	return rec.clone(), nil
}

func (s *Server) addVolume(v Volume, project string) (*volumeRec, error) {
	v = v.clone()
	vt := s.volumeTypes()[0]
	if v.VolumeType != "" {
		t, ok := s.volumeTypeByRef(v.VolumeType)
		if !ok {
			return nil, fmt.Errorf("volume %s: no volume type %q", v.Name, v.VolumeType)
		}
		vt = t
	}
	zones := s.volumeZoneNames()
	v.AZ = cmpOr(v.AZ, zones[0])
	if !slices.Contains(zones, v.AZ) {
		return nil, fmt.Errorf("volume %s: availability zone %q is not one of %v", v.Name, v.AZ, zones)
	}
	if v.ID == "" {
		v.ID = s.st.newID(kVolume)
	}
	if _, dup := s.st.volumes.Get(v.ID); dup {
		return nil, fmt.Errorf("volume %s exists", v.ID)
	}
	if v.Size <= 0 {
		v.Size = 1
	}
	v.VolumeType, v.Multiattach = vt.Name, vt.multiattach()
	atts := v.Attachments
	v.Attachments = nil
	rec := &volumeRec{Volume: v, project: project, userID: s.opts.Users[0].ID, typeID: vt.ID}
	for _, a := range atts {
		srv, ok := s.st.servers.Get(a.ServerID)
		if !ok {
			return nil, fmt.Errorf("volume %s: no server %q", v.Name, a.ServerID)
		}
		if slices.ContainsFunc(rec.Attachments, func(b VolumeAttachment) bool { return b.ServerID == srv.ID }) {
			return nil, fmt.Errorf("volume %s: attached to server %s twice", v.Name, srv.Name)
		}
		if len(rec.Attachments) > 0 && !v.Multiattach {
			return nil, fmt.Errorf("volume %s: attached twice, but its type %s is not multiattach", v.Name, vt.Name)
		}
		if a.Device == "" {
			if a.Device = s.nextDevice(srv.ID); a.Device == "" {
				return nil, fmt.Errorf("volume %s: server %s has %d disks already", v.Name, srv.Name, s.opts.MaxDiskDevices)
			}
		}
		rec.Attachments = append(rec.Attachments, VolumeAttachment{
			ID: s.st.newID(kAttachment), VolumeID: v.ID, ServerID: srv.ID, Device: a.Device, Tag: a.Tag,
			DeleteOnTermination: a.DeleteOnTermination, BDMUUID: s.st.newID(kBDM), Status: AttachAttached,
			AttachedAt: cinderCreated.Format(cinderTSLayout),
		})
	}
	rec.Status = cmpOr(v.Status, VolumeAvailable)
	if v.Status == "" && len(rec.Attachments) > 0 {
		rec.Status = VolumeInUse
	}
	if err := s.hypervisor(func(h simkit.Hypervisor) error { return h.Create(rec.disk(""), "") }); err != nil {
		return nil, err
	}
	for i, a := range rec.Attachments {
		if err := s.hypervisor(func(h simkit.Hypervisor) error { return h.Attach(rec.disk(a.ServerID)) }); err != nil {
			for _, b := range rec.Attachments[:i] {
				_ = s.hypervisor(func(h simkit.Hypervisor) error { return h.Detach(rec.disk(b.ServerID)) })
			}
			_ = s.hypervisor(func(h simkit.Hypervisor) error { return h.Delete(rec.disk("")) })
			return nil, err
		}
	}
	rec.hasBlocks = true
	s.st.volumes.Put(rec.ID, rec)
	return rec, nil
}
