package openstacksim

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Cinder volumes are asynchronous, as the real service is (the API
// answers 202 and a volume service does the work): a volume is created
// "creating", deleted "deleting", extended "extending", attached
// "reserved" (Nova's attachment_create; Cinder shows no "attaching" in
// the attachments flow Nova uses since Queens) and detached "detaching",
// and settles, as Octavia's load balancers do, on the
// Options.ProvisioningReads-th read of the volume (GET, a list page
// holding it, or Nova's volume attachment GET or list holding it), on
// Advance, or Common.SettleAfter after it started. Settling calls the
// Hypervisor; its failure leaves the state the real service leaves after
// a failed driver call: a create "error", a delete "error_deleting", an
// extend "error_extending" at the old size, an attach gone again (the
// volume back to available: Nova deletes the attachment), a detach
// rolled back (in-use: roll_detaching).

func (s *Server) volumeRoutes() {
	p := volumeProject
	s.cinderHandle("POST "+p+"/volumes", s.createVolume)
	s.cinderHandle("GET "+p+"/volumes", s.listVolumes(false))
	s.cinderHandle("GET "+p+"/volumes/detail", s.listVolumes(true))
	s.cinderHandle("GET "+p+"/volumes/{id}", s.getVolume)
	s.cinderHandle("PUT "+p+"/volumes/{id}", s.updateVolume)
	s.cinderHandle("DELETE "+p+"/volumes/{id}", s.deleteVolumeAPI)
	s.cinderHandle("POST "+p+"/volumes/{id}/action", s.volumeAction)
	s.cinderHandle("GET "+p+"/volumes/{id}/metadata", s.volumeMetadata)
	s.cinderHandle("POST "+p+"/volumes/{id}/metadata", s.setVolumeMetadata(false))
	s.cinderHandle("PUT "+p+"/volumes/{id}/metadata", s.setVolumeMetadata(true))
}

// volumeCreateRequest is the body of POST /volumes.
type volumeCreateRequest struct {
	Volume *struct {
		Size             json.RawMessage   `json:"size"`
		Name             *string           `json:"name"`
		Description      *string           `json:"description"`
		AvailabilityZone *string           `json:"availability_zone"`
		VolumeType       *string           `json:"volume_type"`
		SnapshotID       *string           `json:"snapshot_id"`
		SourceVolID      *string           `json:"source_volid"`
		ImageRef         *string           `json:"imageRef"`
		ImageID          *string           `json:"image_id"`
		BackupID         *string           `json:"backup_id"`
		Metadata         map[string]string `json:"metadata"`
		Multiattach      any               `json:"multiattach"`
	} `json:"volume"`
}

// uuidLike is the form of a UUID, as Cinder tells IDs from names.
var uuidLike = regexp.MustCompile(`^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$`)

// createVolume is POST /volumes: 202 with the volume "creating"
// (cinder/api/v3/volumes.py create, then the checks of
// cinder/volume/flows/api/create_volume.py, in their order).
func (s *Server) createVolume(r *http.Request, minor int) response {
	var req volumeCreateRequest
	if err := simkit.Decode(r, &req); err != nil {
		return cinderError(http.StatusBadRequest, "Invalid request body: %v", err)
	}
	body := req.Volume
	if body == nil {
		return cinderError(http.StatusBadRequest, "Invalid input for field/attribute volume. Value: None. 'volume' is a required property")
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return strings.TrimSpace(*p)
	}
	project := s.tokenProject(r)
	rec := &volumeRec{project: project, userID: s.tokenUser(r).ID}
	rec.Name, rec.Description, rec.Metadata = str(body.Name), str(body.Description), maps.Clone(body.Metadata)

	var vt *VolumeType
	if ref := str(body.VolumeType); ref != "" {
		t, ok := s.volumeTypeByRef(ref)
		if !ok {
			if uuidLike.MatchString(ref) {
				return cinderError(http.StatusNotFound, "Volume type %s could not be found.", ref)
			}
			return cinderError(http.StatusNotFound, "Volume type with name %s could not be found.", ref)
		}
		vt = &t
	}
	var snap *snapshotRec
	if id := str(body.SnapshotID); body.SnapshotID != nil {
		sn, ok := s.st.volSnapshots.Get(id)
		if !ok || sn.project != project {
			return cinderError(http.StatusNotFound, "Snapshot %s could not be found.", id)
		}
		snap = sn
	}
	var src *volumeRec
	if id := str(body.SourceVolID); body.SourceVolID != nil {
		v, errResp := s.volume(r, id)
		if errResp != nil {
			return *errResp
		}
		src = v
	}
	var img *imageRec
	if ref := cmpOr(str(body.ImageRef), str(body.ImageID)); ref != "" {
		i, ok := s.st.images.Get(ref)
		if !ok || !i.visibleTo(project) {
			return cinderError(http.StatusNotFound, "Image %s could not be found.", ref)
		}
		img = i
	}
	if body.BackupID != nil {
		return cinderError(http.StatusNotFound, "Backup %s could not be found.", str(body.BackupID))
	}
	if b, _ := strconv.ParseBool(strings.ToLower(fmt.Sprint(body.Multiattach))); b {
		return cinderError(http.StatusBadRequest, "multiattach parameter has been removed. The default behavior is to use multiattach enabled volume types. Contact your administrator to create a multiattach enabled volume type and use it to create multiattach volumes.")
	}

	size, sizeText, ok := volumeSize(body.Size)
	if len(body.Size) == 0 || sizeText == "null" {
		switch {
		case snap != nil:
			size, ok = snap.Size, true
		case src != nil:
			size, ok = src.Size, true
		}
	}
	switch {
	case snap != nil && snap.Status != SnapshotAvailable:
		return cinderError(http.StatusBadRequest, "Invalid snapshot: Originating snapshot status must be one of 'available' values")
	case src != nil && src.Status != VolumeAvailable && src.Status != VolumeInUse:
		return cinderError(http.StatusBadRequest, "Invalid volume: Originating source volume status must be one of 'available, in-use' values")
	case !ok || size <= 0:
		return cinderError(http.StatusBadRequest, "Invalid input received: Volume size '%s' must be an integer and greater than 0", sizeText)
	case snap != nil && size < snap.Size:
		return cinderError(http.StatusBadRequest, "Invalid input received: Volume size '%d'GB cannot be smaller than the snapshot size %dGB. They must be >= original snapshot size.", size, snap.Size)
	case src != nil && size < src.Size:
		return cinderError(http.StatusBadRequest, "Invalid input received: Volume size '%d'GB cannot be smaller than original volume size  %dGB. They must be >= original volume size.", size, src.Size)
	case img != nil && size < img.MinDisk:
		return cinderError(http.StatusBadRequest, "Invalid input received: Volume size %dGB cannot be smaller than the image minDisk size %dGB.", size, img.MinDisk)
	}
	rec.Size = size

	// The zone: the one asked for, else the source's, else the default
	// storage zone; a clone stays in its source's zone
	// (cloned_volume_same_az).
	zones := s.volumeZoneNames()
	var srcVol *volumeRec
	if snap != nil {
		srcVol, _ = s.st.volumes.Get(snap.VolumeID)
	} else if src != nil {
		srcVol = src
	}
	az := str(body.AvailabilityZone)
	switch {
	case az == "" && srcVol != nil:
		az = srcVol.AZ
	case az == "":
		az = zones[0]
	}
	if !slices.Contains(zones, az) {
		return cinderError(http.StatusBadRequest, "Availability zone '%s' is invalid.", az)
	}
	if srcVol != nil && srcVol.AZ != az {
		what := "snapshot"
		if src != nil {
			what = "source volume"
		}
		return cinderError(http.StatusBadRequest, "Invalid input received: Volume must be in the same availability zone as the %s", what)
	}
	rec.AZ = az

	// The type: the one asked for, else the source's, else the default.
	if vt == nil && srcVol != nil {
		if t, ok := s.volumeTypeByRef(srcVol.typeID); ok {
			vt = &t
		}
	}
	if vt == nil {
		vt = &s.volumeTypes()[0]
	}
	rec.VolumeType, rec.typeID, rec.Multiattach = vt.Name, vt.ID, vt.multiattach()
	if errResp := s.overQuota(project, "volumes", size); errResp != nil {
		return *errResp
	}

	rec.ID = s.st.newID(kVolume)
	if snap != nil {
		rec.SnapshotID, rec.Bootable = snap.ID, srcVol != nil && srcVol.Bootable
	}
	if src != nil {
		rec.SourceVolID, rec.Bootable = src.ID, src.Bootable
	}
	if img != nil {
		rec.imageID, rec.Bootable = img.ID, true
	}
	rec.Status = VolumeCreating
	s.st.volumes.Put(rec.ID, rec)
	s.st.volumeTasks.Start(rec.ID, func() { s.finishCreate(rec, snap, src) })
	return simkit.JSON(http.StatusAccepted, map[string]any{"volume": s.volumeJSON(r, rec, minor)})
}

// volumeSize reads a size as Cinder's schema takes it: an integer, or a
// string of one. It returns the size, the text for a message, and
// whether it is an integer.
func volumeSize(raw json.RawMessage) (int, string, bool) {
	if len(raw) == 0 {
		return 0, "None", false
	}
	var n int
	if err := json.Unmarshal(raw, &n); err == nil {
		return n, strconv.Itoa(n), true
	}
	var text string
	if err := json.Unmarshal(raw, &text); err == nil {
		n, err := strconv.Atoi(strings.TrimSpace(text))
		return n, text, err == nil
	}
	if string(raw) == "null" {
		return 0, "null", false
	}
	return 0, string(raw), false
}

// finishCreate settles a volume's create: the Hypervisor makes its
// blocks, empty or a copy of the snapshot's or the source volume's (a
// clone is a snapshot of the source, copied, then dropped, as Cinder's
// generic clone does); the volume is then available, or error.
func (s *Server) finishCreate(v *volumeRec, snap *snapshotRec, src *volumeRec) {
	var err error
	switch {
	case snap != nil:
		err = s.hypervisor(func(h simkit.Hypervisor) error { return h.Create(v.disk(""), snap.ID) })
	case src != nil:
		tmp := v.ID + "-clone-source"
		err = s.hypervisor(func(h simkit.Hypervisor) error {
			if err := h.Snapshot(src.disk(src.attachedServer()), tmp); err != nil {
				return err
			}
			defer func() { _ = h.DeleteSnapshot(tmp) }()
			return h.Create(v.disk(""), tmp)
		})
	default:
		err = s.hypervisor(func(h simkit.Hypervisor) error { return h.Create(v.disk(""), "") })
	}
	if err != nil {
		s.setVolumeStatus(v, VolumeError)
		return
	}
	v.hasBlocks = true
	s.setVolumeStatus(v, VolumeAvailable)
}

// cinderVolumeFilters are the volume filters of resource_filters.json;
// cinderOldVolumeFilters those a member may use before 3.31.
var (
	cinderVolumeFilters    = []string{"name", "status", "metadata", "bootable", "migration_status", "availability_zone", "group_id", "size", "created_at", "updated_at", "consumes_quota"}
	cinderOldVolumeFilters = []string{"name", "status", "metadata", "availability_zone", "bootable", "group_id"}
)

// listVolumes is GET /volumes[/detail]: the project's volumes, newest
// first, filtered, sorted and paged as Cinder does (cinder_list.go).
// The page is a read of each volume on it, which may settle its task: it
// shows what the read left.
func (s *Server) listVolumes(detail bool) cinderHandlerFunc {
	return func(r *http.Request, minor int) response {
		q := r.URL.Query()
		filters, errResp := cinderFilters(q, minor, cinderVolumeFilters, cinderOldVolumeFilters)
		if errResp != nil {
			return *errResp
		}
		project := s.tokenProject(r)
		all := s.st.volumes.All()
		items := []map[string]any{}
		for i := len(all) - 1; i >= 0; i-- {
			v := all[i]
			if m := s.volumeJSON(r, v, cinderMaxMinor); v.project == project && cinderMatch(filters, m) {
				items = append(items, m)
			}
		}
		if errResp := cinderSort(q, items, []string{"name", "status", "size", "availability_zone", "updated_at", "bootable", "volume_type"}); errResp != nil {
			return *errResp
		}
		p, errResp := s.cinderPage(r, items, "Volume")
		if errResp != nil {
			return *errResp
		}
		shown := []map[string]any{}
		for _, m := range p.items {
			v, ok := s.st.volumes.Get(itemID(m))
			if !ok || !s.readVolume(v) {
				continue
			}
			if detail {
				shown = append(shown, s.volumeJSON(r, v, minor))
			} else {
				shown = append(shown, map[string]any{"id": v.ID, "name": nullable(v.Name), "links": s.volumeLinks(r, "volumes", v.ID)})
			}
		}
		body := map[string]any{"volumes": shown}
		if len(p.links) > 0 {
			body["volumes_links"] = p.links
		}
		if minor >= 45 && q.Has("with_count") {
			if b, _ := strconv.ParseBool(strings.ToLower(q.Get("with_count"))); b {
				body["count"] = len(items)
			}
		}
		return jsonOK(body)
	}
}

// getVolume counts a read of the volume (see above).
func (s *Server) getVolume(r *http.Request, minor int) response {
	v, errResp := s.volume(r, r.PathValue("id"))
	if errResp != nil {
		return *errResp
	}
	if !s.readVolume(v) {
		return cinderError(http.StatusNotFound, "Volume %s could not be found.", v.ID)
	}
	return jsonOK(map[string]any{"volume": s.volumeJSON(r, v, minor)})
}

// updateVolume is PUT /volumes/{id}: name, description and metadata
// (which replaces the volume's), 200 with the volume.
func (s *Server) updateVolume(r *http.Request, minor int) response {
	v, errResp := s.volume(r, r.PathValue("id"))
	if errResp != nil {
		return *errResp
	}
	var req struct {
		Volume *struct {
			Name        *string           `json:"name"`
			Description *string           `json:"description"`
			Metadata    map[string]string `json:"metadata"`
		} `json:"volume"`
	}
	if err := simkit.Decode(r, &req); err != nil || req.Volume == nil {
		return cinderError(http.StatusBadRequest, "Invalid input for field/attribute volume. Value: None. 'volume' is a required property")
	}
	if u := req.Volume; u.Name != nil || u.Description != nil || u.Metadata != nil {
		if u.Name != nil {
			v.Name = strings.TrimSpace(*u.Name)
		}
		if u.Description != nil {
			v.Description = strings.TrimSpace(*u.Description)
		}
		if u.Metadata != nil {
			v.Metadata = maps.Clone(u.Metadata)
		}
		v.updated = s.st.cinderTick()
	}
	return jsonOK(map[string]any{"volume": s.volumeJSON(r, v, minor)})
}

// deleteVolumeAPI is DELETE /volumes/{id}[?cascade=true]: 202, the volume
// "deleting", then gone. Cinder refuses (400) a volume not available,
// error, error_restoring, error_extending or error_managing, attached, or
// with snapshots (unless cascade, which takes available or error
// snapshots along); force (3.23) is an admin's.
func (s *Server) deleteVolumeAPI(r *http.Request, _ int) response {
	v, errResp := s.volume(r, r.PathValue("id"))
	if errResp != nil {
		return *errResp
	}
	q := r.URL.Query()
	if b, _ := strconv.ParseBool(strings.ToLower(q.Get("force"))); b {
		return cinderPolicyForbidden("volume:force_delete")
	}
	cascade, _ := strconv.ParseBool(strings.ToLower(q.Get("cascade")))
	snaps := s.volumeSnapshotsOf(v.ID)
	ok := slices.Contains([]string{VolumeAvailable, VolumeError, "error_restoring", VolumeErrorExtending, "error_managing"}, v.Status) &&
		len(v.Attachments) == 0
	for _, sn := range snaps {
		if !cascade || sn.Status != SnapshotAvailable && sn.Status != SnapshotError {
			ok = false
		}
	}
	if !ok {
		return cinderError(http.StatusBadRequest, "Invalid volume: Volume status must be available or error or error_restoring or error_extending or error_managing and must not be migrating, attached, belong to a group, have snapshots, awaiting a transfer, or be disassociated from snapshots after volume transfer.")
	}
	s.setVolumeStatus(v, VolumeDeleting)
	v.cascade = cascade
	for _, sn := range snaps {
		s.setSnapshotStatus(sn, SnapshotDeleting)
		s.st.volumeTasks.Stop(sn.ID)
	}
	s.st.volumeTasks.Start(v.ID, func() { s.finishDelete(v) })
	return simkit.NoContent(http.StatusAccepted)
}

// finishDelete settles a delete: the Hypervisor forgets the volume's
// blocks (and, with cascade, its snapshots'); the volume is gone, or
// error_deleting.
func (s *Server) finishDelete(v *volumeRec) {
	for _, sn := range s.volumeSnapshotsOf(v.ID) {
		if !v.cascade {
			continue
		}
		if !sn.hasBlocks {
			s.st.volSnapshots.Del(sn.ID)
			continue
		}
		if err := s.hypervisor(func(h simkit.Hypervisor) error { return h.DeleteSnapshot(sn.ID) }); err != nil {
			s.setSnapshotStatus(sn, SnapshotErrorDeleting)
			s.setVolumeStatus(v, VolumeErrorDeleting)
			return
		}
		s.st.volSnapshots.Del(sn.ID)
	}
	if v.hasBlocks {
		if err := s.hypervisor(func(h simkit.Hypervisor) error { return h.Delete(v.disk("")) }); err != nil {
			s.setVolumeStatus(v, VolumeErrorDeleting)
			return
		}
	}
	s.st.volumes.Del(v.ID)
}

// volumeMetadata is GET /volumes/{id}/metadata.
func (s *Server) volumeMetadata(r *http.Request, _ int) response {
	v, errResp := s.volume(r, r.PathValue("id"))
	if errResp != nil {
		return *errResp
	}
	return jsonOK(map[string]any{"metadata": nonNilMap(maps.Clone(v.Metadata))})
}

// setVolumeMetadata is POST (merge) and PUT (replace)
// /volumes/{id}/metadata: 200 with the volume's metadata.
func (s *Server) setVolumeMetadata(replace bool) cinderHandlerFunc {
	return func(r *http.Request, _ int) response {
		v, errResp := s.volume(r, r.PathValue("id"))
		if errResp != nil {
			return *errResp
		}
		var req struct {
			Metadata map[string]string `json:"metadata"`
		}
		if err := simkit.Decode(r, &req); err != nil || req.Metadata == nil {
			return cinderError(http.StatusBadRequest, "Malformed request body")
		}
		if replace || v.Metadata == nil {
			v.Metadata = map[string]string{}
		}
		maps.Copy(v.Metadata, req.Metadata)
		v.updated = s.st.cinderTick()
		return jsonOK(map[string]any{"metadata": maps.Clone(v.Metadata)})
	}
}
