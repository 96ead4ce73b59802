package gbsim

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Volume limits and names; the package doc says where each comes from.
const (
	// MinVolumeSize and MaxVolumeSize are the smallest and the largest
	// volume, in MiB, the unit of the API's size: "Volumes must be a
	// minimum of 40GB and maximum of 4TB" (brightbox.com/docs/reference/
	// volumes), in binary units as the API's sizes are (Brightbox's own
	// clients make 40960 and 61440 MiB volumes).
	MinVolumeSize = 40 * 1024
	MaxVolumeSize = 4 * 1024 * 1024
	// DefaultVolumesPerServer: see Options.VolumesPerServer.
	DefaultVolumesPerServer = 6
	// DefaultBlockStorageLimit: see Options.BlockStorageLimit.
	DefaultBlockStorageLimit = 100 * 1024 * 1024
	// ByIDPrefix starts the name a volume's device gets under
	// /dev/disk/by-id on the server it is attached to: virtio-<serial>.
	// Inferred, not verified: Brightbox documents that the serial names
	// the device under /dev/disk/by-id and its device plugin matches
	// names ending in vol-xxxxx, and udev names a virtio disk
	// virtio-<serial>; no listing of a Brightbox server's by-id directory
	// was seen.
	ByIDPrefix = "virtio-"
	// BlankImage is the image the API shows for a volume made from none
	// (fog-brightbox's spec answers a filesystem_type create with
	// "image":{"id":"img-blank"}, and Brightbox's Terraform provider
	// expects an image on every volume).
	BlankImage = "img-blank"
	// UbuntuImage is the official image the simulated servers run, which
	// volumes can be made from too.
	UbuntuImage = "img-3ikco"

	maxSerial = 20
	maxLabel  = 12
	maxText   = 255
)

// ByIDName is the /dev/disk/by-id name of the device of a volume with
// serial on the server it is attached to.
func ByIDName(serial string) string { return ByIDPrefix + serial }

// validSerial and validLabel are what Brightbox's Terraform provider lets
// through as a serial (at most 20 characters, as the docs say) and a
// filesystem label (at most 12).
var (
	validSerial = regexp.MustCompile(`^[A-Za-z0-9_.+-]{1,20}$`)
	validLabel  = regexp.MustCompile(`^[A-Za-z0-9_-]{0,12}$`)
)

// image is an image the simulated cloud has.
type image struct {
	ID, Name, Username string
}

var images = []image{
	{ID: UbuntuImage, Name: "Ubuntu Noble 24.04 server", Username: "ubuntu"},
	{ID: BlankImage, Name: "Blank disk image"},
}

func findImage(id string) (image, bool) {
	i := slices.IndexFunc(images, func(im image) bool { return im.ID == id })
	if i < 0 {
		return image{}, false
	}
	return images[i], true
}

// Volume is a block storage volume as the simulator holds it. AddVolume
// seeds one; the API renders it with its server, account and image.
type Volume struct {
	// ID is "vol-xxxxx"; "" gets a new one.
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	// Status is one of VolumeStatuses; "" means attached when Server is
	// set, else detached. A creating volume becomes detached, a deleting
	// one deleted, as one created or destroyed through the API does.
	Status string `json:"status"`
	// Size is in MiB; 0 means MinVolumeSize.
	Size int `json:"size"`
	// Serial names the device on the server (ByIDName); "" means the ID,
	// as the API defaults it.
	Serial string `json:"serial"`
	// FilesystemType (xfs, ext4) and FilesystemLabel are the filesystem
	// the API made on the volume when it was created, if any.
	FilesystemType  string `json:"filesystem_type,omitempty"`
	FilesystemLabel string `json:"filesystem_label,omitempty"`
	// Image is the image the volume was made from; "" is none (the API
	// shows BlankImage).
	Image            string `json:"image,omitempty"`
	Encrypted        bool   `json:"encrypted"`
	DeleteWithServer bool   `json:"delete_with_server"`
	Boot             bool   `json:"boot"`
	Locked           bool   `json:"locked"`
	// Server is the ID of the server it is attached to.
	Server    string     `json:"server,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
	DeletedAt *time.Time `json:"deleted_at,omitempty"`

	// pending is the attach (to server pending[len("attach:"):]) or
	// detach the API accepted and has not done yet.
	pending string
}

func (v *Volume) clone() Volume { return *v }

// disk is the volume as the Hypervisor sees it, attached to server ("":
// none).
func (v *Volume) disk(server string) simkit.Disk {
	return simkit.Disk{ID: v.ID, ByIDName: ByIDName(v.Serial), SizeBytes: int64(v.Size) << 20, Server: server}
}

// gone reports whether the volume is being or has been deleted.
func (v *Volume) gone() bool { return v.Status == StatusDeleting || v.Status == StatusDeleted }

// attachingTo is the server an accepted attach is for, "" when none is.
func (v *Volume) attachingTo() string {
	if s, ok := strings.CutPrefix(v.pending, pendingAttach); ok {
		return s
	}
	return ""
}

const (
	pendingAttach = "attach:"
	pendingDetach = "detach"
)

// hypervisor runs f on Options.Hypervisor, when there is one. The caller
// holds the state lock.
func (st *state) hypervisor(f func(simkit.Hypervisor) error) error {
	if st.opts.Hypervisor == nil {
		return nil
	}
	return f(st.opts.Hypervisor)
}

func (s *Server) volumeRoutes() {
	s.Handle("GET /1.0/volumes", s.listVolumes)
	s.Handle("POST /1.0/volumes", s.createVolume)
	s.Handle("GET /1.0/volumes/{id}", s.getVolume)
	s.Handle("PUT /1.0/volumes/{id}", s.updateVolume)
	s.Handle("DELETE /1.0/volumes/{id}", s.deleteVolume)
	s.Handle("POST /1.0/volumes/{id}/attach", s.attachVolume)
	s.Handle("POST /1.0/volumes/{id}/detach", s.detachVolume)
	s.Handle("POST /1.0/volumes/{id}/resize", s.resizeVolume)
	s.Handle("PUT /1.0/volumes/{id}/lock_resource", s.lockVolume(true))
	s.Handle("PUT /1.0/volumes/{id}/unlock_resource", s.lockVolume(false))
	s.metadataRoutes()
}

// AddVolume stores a volume as if made earlier (and, with Server, attached
// to that server) and returns it as stored: zero fields get the defaults
// their doc comments give. The Hypervisor is told to create it and attach
// it; its error is returned and the volume is then not added. It panics
// on values the API would refuse: a test's mistake.
func (s *Server) AddVolume(v Volume) (Volume, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	if v.ID == "" {
		v.ID = st.newID("vol")
	}
	if v.Size == 0 {
		v.Size = MinVolumeSize
	}
	if v.Serial == "" {
		v.Serial = v.ID
	}
	if v.CreatedAt.IsZero() {
		v.CreatedAt = epoch
	}
	if v.UpdatedAt.IsZero() {
		v.UpdatedAt = v.CreatedAt
	}
	if v.Status == "" {
		v.Status = VolumeDetached
		if v.Server != "" {
			v.Status = VolumeAttached
		}
	}
	mustEnum("status", v.Status, VolumeStatuses)
	if v.FilesystemType != "" {
		mustEnum("filesystem_type", v.FilesystemType, FilesystemTypes)
	}
	if v.Image != "" {
		if _, ok := findImage(v.Image); !ok {
			panic("gbsim: no image " + v.Image)
		}
	}
	if (v.Status == VolumeAttached) != (v.Server != "") {
		panic("gbsim: an attached volume needs a server, and only an attached one has one")
	}
	if v.Server != "" {
		if _, ok := st.servers.Get(v.Server); !ok {
			panic("gbsim: no server " + v.Server)
		}
	}
	v.pending = ""
	if err := st.hypervisor(func(h simkit.Hypervisor) error { return h.Create(v.disk(""), "") }); err != nil {
		return Volume{}, err
	}
	if v.Server != "" {
		if err := st.hypervisor(func(h simkit.Hypervisor) error { return h.Attach(v.disk(v.Server)) }); err != nil {
			_ = st.hypervisor(func(h simkit.Hypervisor) error { return h.Delete(v.disk("")) })
			return Volume{}, err
		}
	}
	stored := v
	st.volumes.Put(v.ID, &stored)
	st.retiring.Stop(v.ID)
	switch stored.Status {
	case StatusCreating:
		st.settling.Start(v.ID, func() { stored.Status = VolumeDetached })
	case StatusDeleting:
		st.startVolumeDeletion(&stored)
	case StatusDeleted:
		st.retire(v.ID, func() { st.volumes.Del(v.ID) })
	default:
		st.settling.Stop(v.ID)
	}
	return stored.clone(), nil
}

// Volumes returns the volumes, oldest first, deleted ones still listed
// included.
func (s *Server) Volumes() []Volume {
	s.mu.Lock()
	defer s.mu.Unlock()
	return simkit.CloneAll(s.st.volumes.All(), (*Volume).clone)
}

// SetVolumeStatus sets a volume's status (one of VolumeStatuses), stopping
// any pending change, and reports whether it exists. Setting it detached
// detaches it (without the Hypervisor).
func (s *Server) SetVolumeStatus(id, status string) bool {
	mustEnum("status", status, VolumeStatuses)
	s.mu.Lock()
	defer s.mu.Unlock()
	v, found := s.st.volumes.Get(id)
	if found {
		s.st.settling.Stop(id)
		v.Status, v.pending = status, ""
		if status != VolumeAttached {
			v.Server = ""
		}
	}
	return found
}

// volumeRequest is the body of POST and PUT /1.0/volumes
// (brightbox.VolumeOptions).
type volumeRequest struct {
	Name             *string `json:"name"`
	Description      *string `json:"description"`
	Serial           *string `json:"serial"`
	DeleteWithServer *bool   `json:"delete_with_server"`
	FilesystemLabel  *string `json:"filesystem_label"`
	FilesystemType   *string `json:"filesystem_type"`
	Size             *int    `json:"size"`
	Image            *string `json:"image"`
	Encrypted        *bool   `json:"encrypted"`
}

// applyText sets the fields both create and update take: name,
// description, serial and delete_with_server.
func (req *volumeRequest) applyText(v *Volume) error {
	for _, f := range []struct {
		name string
		in   *string
		out  *string
	}{{"name", req.Name, &v.Name}, {"description", req.Description, &v.Description}} {
		if f.in == nil {
			continue
		}
		if len(*f.in) > maxText {
			return fmt.Errorf("%s: at most %d characters", f.name, maxText)
		}
		*f.out = *f.in
	}
	if req.Serial != nil && *req.Serial != "" {
		if !validSerial.MatchString(*req.Serial) {
			return fmt.Errorf("serial: %q is not 1 to %d letters, digits, '_', '.', '+' or '-'", *req.Serial, maxSerial)
		}
		v.Serial = *req.Serial
	}
	if req.DeleteWithServer != nil {
		v.DeleteWithServer = *req.DeleteWithServer
	}
	return nil
}

// applyCreate sets what only a create takes: size, image, filesystem and
// encryption.
func (req *volumeRequest) applyCreate(v *Volume) error {
	v.Size = MinVolumeSize
	if req.Size != nil {
		if *req.Size < MinVolumeSize || *req.Size > MaxVolumeSize {
			return fmt.Errorf("size: %d MiB is not between %d and %d", *req.Size, MinVolumeSize, MaxVolumeSize)
		}
		v.Size = *req.Size
	}
	if req.Image != nil && *req.Image != "" {
		if _, ok := findImage(*req.Image); !ok {
			return fmt.Errorf("image: no image %s", *req.Image)
		}
		v.Image = *req.Image
	}
	if req.FilesystemType != nil && *req.FilesystemType != "" {
		if err := enumError("filesystem_type", *req.FilesystemType, FilesystemTypes); err != nil {
			return err
		}
		if v.Image != "" {
			return fmt.Errorf("filesystem_type: not with image (a volume made from an image has its filesystems)")
		}
		v.FilesystemType = *req.FilesystemType
	}
	if req.FilesystemLabel != nil && *req.FilesystemLabel != "" {
		switch {
		case v.FilesystemType == "":
			return fmt.Errorf("filesystem_label: only with filesystem_type")
		case !validLabel.MatchString(*req.FilesystemLabel):
			return fmt.Errorf("filesystem_label: %q is not at most %d letters, digits, '_' or '-'", *req.FilesystemLabel, maxLabel)
		}
		v.FilesystemLabel = *req.FilesystemLabel
	}
	if req.Encrypted != nil {
		v.Encrypted = *req.Encrypted
	}
	return nil
}

// storageUsed is the size, in MiB, of the volumes not deleted, which the
// account's block_storage_limit bounds.
func (st *state) storageUsed() int {
	n := 0
	for _, v := range st.volumes.All() {
		if v.Status != StatusDeleted {
			n += v.Size
		}
	}
	return n
}

// createVolume serves POST /1.0/volumes: 202 with the volume, creating
// (detached after Options.ProvisioningReads reads). The Hypervisor makes
// its blocks (an image's contents are not simulated: a volume made from
// one starts empty); if it fails, so does the create (500) and nothing
// is left.
func (s *Server) createVolume(r *http.Request) simkit.Response {
	var req volumeRequest
	if resp := decode(r, &req, true); resp != nil {
		return *resp
	}
	st := s.st
	now := st.now()
	v := &Volume{Status: StatusCreating, CreatedAt: now, UpdatedAt: now}
	if err := req.applyCreate(v); err != nil {
		return invalid("%s", err.Error())
	}
	if err := req.applyText(v); err != nil {
		return invalid("%s", err.Error())
	}
	if used := st.storageUsed(); used+v.Size > s.opts.BlockStorageLimit {
		return limitReached("MiB of block storage", s.opts.BlockStorageLimit)
	}
	v.ID = st.newID("vol")
	if v.Serial == "" {
		v.Serial = v.ID
	}
	if err := st.hypervisor(func(h simkit.Hypervisor) error { return h.Create(v.disk(""), "") }); err != nil {
		return fail(http.StatusInternalServerError, "failed to create volume: %v", err)
	}
	st.volumes.Put(v.ID, v)
	st.settling.Start(v.ID, func() { v.Status = VolumeDetached })
	return accepted(s.view(r).volume(v))
}

func (s *Server) listVolumes(r *http.Request) simkit.Response {
	v := s.view(r)
	out := []volumeJSON{}
	for _, vol := range s.st.volumes.All() {
		if s.st.listed(vol.ID) {
			s.st.settling.Read(vol.ID)
			out = append(out, v.volume(vol))
		}
	}
	return ok(out)
}

func (s *Server) getVolume(r *http.Request) simkit.Response {
	v, found := s.st.volumes.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	s.st.settling.Read(v.ID)
	return ok(s.view(r).volume(v))
}

// updateVolume serves PUT /1.0/volumes/{id}: name, description, serial
// (only while detached: "The volume serial can be edited, but only when a
// volume is detached") and delete_with_server; the filesystem, image,
// encryption and size are the create's (size: resize).
func (s *Server) updateVolume(r *http.Request) simkit.Response {
	v, found := s.st.volumes.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	if v.gone() {
		return conflict("Volume %s is %s", v.ID, v.Status)
	}
	var req volumeRequest
	if resp := decode(r, &req, false); resp != nil {
		return *resp
	}
	switch {
	case req.Size != nil:
		return invalid("size: resize the volume to change its size")
	case req.FilesystemType != nil, req.FilesystemLabel != nil:
		return invalid("filesystem_type, filesystem_label: the filesystem attributes cannot be changed after creation")
	case req.Image != nil, req.Encrypted != nil:
		return invalid("image, encrypted: only when the volume is created")
	case req.Serial != nil && *req.Serial != v.Serial && (v.Status != VolumeDetached || v.pending != ""):
		return conflict("Volume %s: the serial can only be changed while the volume is detached", v.ID)
	}
	next := v.clone()
	if err := req.applyText(&next); err != nil {
		return invalid("%s", err.Error())
	}
	next.UpdatedAt = s.st.now()
	*v = next
	return accepted(s.view(r).volume(v))
}

// deleteVolume serves DELETE /1.0/volumes/{id}: 202 with the volume,
// deleting (deleted after Options.ProvisioningReads reads, then listed
// for Options.DeletedReads lists); 409 while it is attached or being
// attached or detached, locked, being created or gone.
func (s *Server) deleteVolume(r *http.Request) simkit.Response {
	v, found := s.st.volumes.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	switch {
	case v.gone():
		return conflict("Volume %s is %s", v.ID, v.Status)
	case v.Locked:
		return conflict("Volume %s is locked", v.ID)
	case v.Status == VolumeAttached || v.pending != "":
		return conflict("Volume %s is attached to a server: detach it first", v.ID)
	case v.Status == StatusCreating:
		return conflict("Volume %s is being created", v.ID)
	}
	if err := s.st.hypervisor(func(h simkit.Hypervisor) error { return h.Delete(v.disk("")) }); err != nil {
		return fail(http.StatusInternalServerError, "failed to delete volume: %v", err)
	}
	v.Status, v.UpdatedAt = StatusDeleting, s.st.now()
	s.st.startVolumeDeletion(v)
	return accepted(s.view(r).volume(v))
}

// startVolumeDeletion settles a deleting volume: deleted, listed for a
// while yet.
func (st *state) startVolumeDeletion(v *Volume) {
	st.settling.Start(v.ID, func() {
		now := st.now()
		v.Status, v.DeletedAt = StatusDeleted, &now
		st.retire(v.ID, func() { st.volumes.Del(v.ID) })
	})
}

func (s *Server) lockVolume(locked bool) simkit.HandlerFunc {
	return func(r *http.Request) simkit.Response {
		v, found := s.st.volumes.Get(r.PathValue("id"))
		if !found {
			return notFound()
		}
		v.Locked = locked
		return ok(s.view(r).volume(v))
	}
}
