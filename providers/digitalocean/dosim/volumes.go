package dosim

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Volume is a block storage volume as the API serves it (godo.Volume's
// JSON; openapi specification/resources/volumes/models/volume_full.yml).
// DropletIDs holds the droplet it is attached to, once the attach action
// has completed; none is [] (never null).
type Volume struct {
	ID              string   `json:"id"`
	Region          Region   `json:"region"`
	DropletIDs      []int    `json:"droplet_ids"`
	Name            string   `json:"name"`
	Description     string   `json:"description"`
	SizeGigabytes   int64    `json:"size_gigabytes"`
	CreatedAt       string   `json:"created_at"`
	FilesystemType  string   `json:"filesystem_type"`
	FilesystemLabel string   `json:"filesystem_label"`
	Tags            []string `json:"tags"`
}

// Volume limits and the API's messages (see the package doc for the
// sources).
const (
	// MaxVolumeSize is the largest volume in GiB: "The maximum size for a
	// volume is 16TiB" (openapi volumes/volumeActions_post_byId.yml).
	MaxVolumeSize = 16384
	// ByIDPrefix starts the name a DigitalOcean volume's device gets under
	// /dev/disk/by-id: scsi-0DO_Volume_<volume name>.
	ByIDPrefix = "scsi-0DO_Volume_"

	msgPendingEvent       = "Droplet already has a pending event."
	msgAlreadyAttached    = "This volume is already attached"
	msgAttachmentNotFound = "Attachment not found"
	msgVolumeLimit        = "cannot attach more volumes to the Droplet"
	msgDeleteAttached     = "A volume that's attached to a Droplet cannot be deleted. Please detach it first before deleting."
	msgVolumeExists       = "already exists"
)

// ByIDName is the /dev/disk/by-id name of the device of the volume called
// name on a droplet it is attached to.
func ByIDName(name string) string { return ByIDPrefix + name }

// validVolumeName is the API's rule for a volume name: "Must be lowercase
// and be composed only of numbers, letters and "-", up to a limit of 64
// characters. The name must begin with a letter." (openapi
// volumes/models/volume_base.yml).
var validVolumeName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,63}$`)

// fsLabelMax is the longest filesystem_label each filesystem_type takes
// (openapi volumes/models/volumes_ext4.yml, volumes_xfs.yml).
var fsLabelMax = map[string]int{"ext4": 16, "xfs": 12}

// volumeRequest is the body of POST /v2/volumes (godo.VolumeCreateRequest).
type volumeRequest struct {
	Name            string   `json:"name"`
	Description     string   `json:"description"`
	Region          string   `json:"region"`
	SizeGigabytes   int64    `json:"size_gigabytes"`
	SnapshotID      string   `json:"snapshot_id"`
	FilesystemType  string   `json:"filesystem_type"`
	FilesystemLabel string   `json:"filesystem_label"`
	Tags            []string `json:"tags"`
}

func (s *Server) volumeRoutes() {
	s.handle("GET /v2/volumes", s.listVolumes)
	s.handle("POST /v2/volumes", s.createVolume)
	s.handle("DELETE /v2/volumes", s.deleteVolumeByName)
	s.handle("GET /v2/volumes/{id}", s.getVolume)
	s.handle("DELETE /v2/volumes/{id}", s.deleteVolume)
	s.handle("POST /v2/volumes/actions", s.postVolumeActionByName)
	s.handle("GET /v2/volumes/{id}/actions", s.listVolumeActions)
	s.handle("POST /v2/volumes/{id}/actions", s.postVolumeAction)
	s.handle("GET /v2/volumes/{id}/actions/{action}", s.getVolumeAction)
	s.handle("GET /v2/volumes/{id}/snapshots", s.listVolumeSnapshots)
	s.handle("POST /v2/volumes/{id}/snapshots", s.createVolumeSnapshot)
	s.handle("GET /v2/snapshots", s.listSnapshots)
	s.handle("GET /v2/snapshots/{id}", s.getSnapshot)
	s.handle("DELETE /v2/snapshots/{id}", s.deleteSnapshot)
	s.metadataRoutes()
}

func (v *Volume) clone() Volume {
	c := *v
	c.DropletIDs = slices.Clone(v.DropletIDs)
	c.Tags = slices.Clone(v.Tags)
	c.Region.Sizes, c.Region.Features = slices.Clone(v.Region.Sizes), slices.Clone(v.Region.Features)
	return c
}

// disk is v as the droplet it is attached to (0: none) sees it.
func (v *Volume) disk(droplet int) simkit.Disk {
	d := simkit.Disk{ID: v.ID, ByIDName: ByIDName(v.Name), SizeBytes: v.SizeGigabytes << 30}
	if droplet != 0 {
		d.Server = strconv.Itoa(droplet)
	}
	return d
}

// attachedTo is the droplet v is attached to, 0 when none.
func (v *Volume) attachedTo() int {
	if len(v.DropletIDs) == 0 {
		return 0
	}
	return v.DropletIDs[0]
}

// hypervisor runs f on Options.Hypervisor, when there is one. The caller
// holds s.mu.
func (s *Server) hypervisor(f func(simkit.Hypervisor) error) error {
	if s.opts.Hypervisor == nil {
		return nil
	}
	return f(s.opts.Hypervisor)
}

// volumeByName is the volume called name in region.
func (st *state) volumeByName(name, region string) (*Volume, bool) {
	return st.volumes.Find(func(v *Volume) bool { return v.Name == name && v.Region.Slug == region })
}

// validateVolume completes req (region and size from its snapshot) and
// returns the status and message of what is wrong with it, 0 when it is
// good.
func (s *Server) validateVolume(req *volumeRequest) (int, string) {
	if !validVolumeName.MatchString(req.Name) {
		return http.StatusUnprocessableEntity, "name must be 1 to 64 lowercase letters, digits or '-', starting with a letter"
	}
	if req.SnapshotID != "" {
		snap, ok := s.st.snapshots.Get(req.SnapshotID)
		if !ok || snap.ResourceType != "volume" {
			return http.StatusNotFound, msgNotFound
		}
		if req.Region == "" {
			req.Region = snap.Regions[0]
		}
		if !slices.Contains(snap.Regions, req.Region) {
			return http.StatusUnprocessableEntity, fmt.Sprintf("snapshot %s is not available in region %s", snap.ID, req.Region)
		}
		if req.SizeGigabytes == 0 {
			req.SizeGigabytes = int64(snap.MinDiskSize)
		}
		if req.SizeGigabytes < int64(snap.MinDiskSize) {
			return http.StatusUnprocessableEntity,
				fmt.Sprintf("size_gigabytes must be at least the snapshot's min_disk_size (%d)", snap.MinDiskSize)
		}
	}
	switch {
	case req.Region == "":
		return http.StatusUnprocessableEntity, "region is required"
	case regionNames[req.Region] == "":
		return http.StatusUnprocessableEntity, fmt.Sprintf("region %q is not a valid region", req.Region)
	case req.SizeGigabytes < 1 || req.SizeGigabytes > MaxVolumeSize:
		return http.StatusUnprocessableEntity, fmt.Sprintf("size_gigabytes must be between 1 and %d", MaxVolumeSize)
	}
	if req.FilesystemType != "" {
		limit, ok := fsLabelMax[req.FilesystemType]
		if !ok {
			return http.StatusUnprocessableEntity, fmt.Sprintf("filesystem_type %q is not one of ext4, xfs", req.FilesystemType)
		}
		if len(req.FilesystemLabel) > limit {
			return http.StatusUnprocessableEntity,
				fmt.Sprintf("filesystem_label may be at most %d characters for %s", limit, req.FilesystemType)
		}
	} else if req.FilesystemLabel != "" {
		return http.StatusUnprocessableEntity, "filesystem_label may only be used with filesystem_type"
	}
	for _, t := range req.Tags {
		if !validTag.MatchString(t) {
			return http.StatusUnprocessableEntity, fmt.Sprintf("tag %q must be 1 to 255 letters, digits, '_', '-' or ':'", t)
		}
	}
	if _, ok := s.st.volumeByName(req.Name, req.Region); ok {
		return http.StatusConflict, msgVolumeExists
	}
	return 0, ""
}

// createVolume serves POST /v2/volumes: 201 with the volume, not attached.
// With snapshot_id, its region and size default to the snapshot's. The
// Hypervisor makes its blocks; if it fails, so does the create (500) and
// nothing is left.
func (s *Server) createVolume(r *http.Request) (int, any) {
	var req volumeRequest
	if err := simkit.Decode(r, &req); err != nil {
		return badJSON(err)
	}
	if status, msg := s.validateVolume(&req); status != 0 {
		return fail(status, "%s", msg)
	}
	st := s.st
	st.volSeq++
	v := &Volume{
		ID: uuid(5, st.volSeq), Region: region(req.Region), DropletIDs: []int{}, Name: req.Name,
		Description: req.Description, SizeGigabytes: req.SizeGigabytes, CreatedAt: st.now().UTC().Format(time.RFC3339),
		FilesystemType: req.FilesystemType, FilesystemLabel: req.FilesystemLabel, Tags: append([]string{}, req.Tags...),
	}
	if err := s.hypervisor(func(h simkit.Hypervisor) error { return h.Create(v.disk(0), req.SnapshotID) }); err != nil {
		return fail(http.StatusInternalServerError, "failed to create volume: %v", err)
	}
	st.addTags(v.Tags)
	st.volumes.Put(v.ID, v)
	return http.StatusCreated, map[string]any{"volume": v.clone()}
}

// listVolumes serves GET /v2/volumes; name= and region= each narrow the
// list, together to the one volume of that name in the region (openapi
// volumes/volumes_list.yml).
func (s *Server) listVolumes(r *http.Request) (int, any) {
	q := r.URL.Query()
	name, reg := q.Get("name"), q.Get("region")
	var out []Volume
	for _, v := range s.st.volumes.All() {
		if (name == "" || v.Name == name) && (reg == "" || v.Region.Slug == reg) {
			out = append(out, v.clone())
		}
	}
	return list(r, "volumes", out, s.opts.PerPage)
}

func (s *Server) getVolume(r *http.Request) (int, any) {
	v, ok := s.st.volumes.Get(r.PathValue("id"))
	if !ok {
		return notFound()
	}
	return http.StatusOK, map[string]any{"volume": v.clone()}
}

// deleteVolume serves DELETE /v2/volumes/{id}: 204; 409 while it is
// attached; 422 while an action on it is in progress.
func (s *Server) deleteVolume(r *http.Request) (int, any) {
	v, ok := s.st.volumes.Get(r.PathValue("id"))
	if !ok {
		return notFound()
	}
	return s.removeVolume(v)
}

// deleteVolumeByName serves DELETE /v2/volumes?name=&region= (openapi
// volumes/volumes_delete_byName.yml).
func (s *Server) deleteVolumeByName(r *http.Request) (int, any) {
	q := r.URL.Query()
	if q.Get("name") == "" || q.Get("region") == "" {
		return unprocessable("name and region are required")
	}
	v, ok := s.st.volumeByName(q.Get("name"), q.Get("region"))
	if !ok {
		return notFound()
	}
	return s.removeVolume(v)
}

// removeVolume deletes v unless it is attached or busy; its snapshots stay.
func (s *Server) removeVolume(v *Volume) (int, any) {
	if len(v.DropletIDs) > 0 {
		return fail(http.StatusConflict, msgDeleteAttached)
	}
	if s.volumeBusy(v.ID) {
		return unprocessable(msgPendingEvent)
	}
	if err := s.hypervisor(func(h simkit.Hypervisor) error { return h.Delete(v.disk(0)) }); err != nil {
		return fail(http.StatusInternalServerError, "failed to delete volume: %v", err)
	}
	s.st.volumes.Del(v.ID)
	return http.StatusNoContent, nil
}

// detachAll detaches every volume of a droplet being deleted, telling the
// Hypervisor (whose errors are ignored: the droplet is gone either way).
func (s *Server) detachAll(d *Droplet) {
	for _, id := range d.VolumeIDs {
		v, ok := s.st.volumes.Get(id)
		if !ok {
			continue
		}
		v.DropletIDs = []int{}
		_ = s.hypervisor(func(h simkit.Hypervisor) error { return h.Detach(v.disk(d.ID)) })
	}
	d.VolumeIDs = []string{}
}

// AddVolume stores a volume as if it had been created earlier (and, with
// one entry in DropletIDs, attached to that droplet) and returns it.
// Zero fields get defaults: the next ID, the Options region, size 10 GiB,
// created now. The Hypervisor is told to create it and attach it; its
// error is returned and the volume is then not added.
func (s *Server) AddVolume(v Volume) (Volume, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	if v.ID == "" {
		st.volSeq++
		v.ID = uuid(5, st.volSeq)
	}
	if v.Name == "" {
		v.Name = fmt.Sprintf("volume-%d", st.volumes.Len()+1)
	}
	if v.Region.Slug == "" {
		v.Region = region(s.opts.Region)
	}
	if v.SizeGigabytes == 0 {
		v.SizeGigabytes = 10
	}
	if v.CreatedAt == "" {
		v.CreatedAt = st.now().UTC().Format(time.RFC3339)
	}
	v.Tags = append([]string{}, v.Tags...)
	droplets := v.DropletIDs
	v.DropletIDs = []int{}
	var d *Droplet
	if len(droplets) > 0 {
		var ok bool
		if d, ok = st.droplets[droplets[0]]; !ok {
			return Volume{}, fmt.Errorf("volume %s: no droplet %d", v.Name, droplets[0])
		}
	}
	if err := s.hypervisor(func(h simkit.Hypervisor) error { return h.Create(v.disk(0), "") }); err != nil {
		return Volume{}, err
	}
	if d != nil {
		if err := s.hypervisor(func(h simkit.Hypervisor) error { return h.Attach(v.disk(d.ID)) }); err != nil {
			_ = s.hypervisor(func(h simkit.Hypervisor) error { return h.Delete(v.disk(0)) })
			return Volume{}, err
		}
		v.DropletIDs = []int{d.ID}
		d.VolumeIDs = append(d.VolumeIDs, v.ID)
	}
	st.addTags(v.Tags)
	st.volumes.Put(v.ID, &v)
	return v.clone(), nil
}

// Volumes returns the volumes, oldest first.
func (s *Server) Volumes() []Volume {
	s.mu.Lock()
	defer s.mu.Unlock()
	return simkit.CloneAll(s.st.volumes.All(), (*Volume).clone)
}
