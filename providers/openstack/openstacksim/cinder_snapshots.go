package openstacksim

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Cinder snapshot statuses.
const (
	SnapshotCreating      = "creating"
	SnapshotAvailable     = "available"
	SnapshotDeleting      = "deleting"
	SnapshotError         = "error"
	SnapshotErrorDeleting = "error_deleting"
)

// VolumeSnapshot is a Cinder snapshot of a volume.
type VolumeSnapshot struct {
	ID          string `json:"id"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	VolumeID    string `json:"volume_id"`
	// Size is the volume's size when it was taken, in GiB.
	Size     int               `json:"size"`
	Status   string            `json:"status"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

type snapshotRec struct {
	VolumeSnapshot
	project, userID, updated string
	// hasBlocks: the Hypervisor copied the volume's blocks (Snapshot
	// succeeded), so DeleteSnapshot is due when it goes.
	hasBlocks bool
}

func (sn VolumeSnapshot) clone() VolumeSnapshot {
	sn.Metadata = maps.Clone(sn.Metadata)
	return sn
}

func (s *Server) snapshotRoutes() {
	p := volumeProject
	s.cinderHandle("POST "+p+"/snapshots", s.createSnapshot)
	s.cinderHandle("GET "+p+"/snapshots", s.listSnapshots(false))
	s.cinderHandle("GET "+p+"/snapshots/detail", s.listSnapshots(true))
	s.cinderHandle("GET "+p+"/snapshots/{id}", s.getSnapshot)
	s.cinderHandle("PUT "+p+"/snapshots/{id}", s.updateSnapshot)
	s.cinderHandle("DELETE "+p+"/snapshots/{id}", s.deleteSnapshotAPI)
	s.cinderHandle("POST "+p+"/snapshots/{id}/action", s.snapshotAction)
}

// VolumeSnapshots returns every snapshot, oldest first.
func (s *Server) VolumeSnapshots() []VolumeSnapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return simkit.CloneAll(s.st.volSnapshots.All(), func(sn *snapshotRec) VolumeSnapshot { return sn.clone() })
}

func (s *Server) setSnapshotStatus(sn *snapshotRec, status string) {
	sn.Status, sn.updated = status, s.st.cinderTick()
}

// volumeSnapshotsOf are the snapshots of volume id.
func (s *Server) volumeSnapshotsOf(id string) []*snapshotRec {
	var out []*snapshotRec
	for _, sn := range s.st.volSnapshots.All() {
		if sn.VolumeID == id {
			out = append(out, sn)
		}
	}
	return out
}

func (s *Server) snapshot(r *http.Request) (*snapshotRec, *response) {
	sn, ok := s.st.volSnapshots.Get(r.PathValue("id"))
	if !ok || sn.project != s.tokenProject(r) {
		resp := cinderError(http.StatusNotFound, "Snapshot %s could not be found.", r.PathValue("id"))
		return nil, &resp
	}
	return sn, nil
}

// readSnapshot counts a read of sn (see cinder_volume_api.go); false if
// it is gone.
func (s *Server) readSnapshot(sn *snapshotRec) bool {
	s.st.volumeTasks.Read(sn.ID)
	_, ok := s.st.volSnapshots.Get(sn.ID)
	return ok
}

// snapshotJSON is a snapshot as Cinder shows it to its owner
// (cinder/api/views/snapshots.py, v3/views/snapshots.py): with detail
// (show, create, /snapshots/detail) the extended attributes
// (progress, project_id), group_snapshot_id from 3.14, user_id from 3.41
// and consumes_quota from 3.65.
func (s *Server) snapshotJSON(sn *snapshotRec, minor int, detail bool) map[string]any {
	out := map[string]any{
		"id": sn.ID, "created_at": cinderCreated.Format(cinderTSLayout), "updated_at": nullable(sn.updated),
		"name": nullable(sn.Name), "description": nullable(sn.Description), "volume_id": sn.VolumeID,
		"status": sn.Status, "size": sn.Size, "metadata": nonNilMap(maps.Clone(sn.Metadata)),
	}
	if !detail {
		return out
	}
	progress := "0%"
	if sn.Status == SnapshotAvailable {
		progress = "100%"
	}
	out["os-extended-snapshot-attributes:progress"] = progress
	out["os-extended-snapshot-attributes:project_id"] = sn.project
	if minor >= 14 {
		out["group_snapshot_id"] = nil
	}
	if minor >= 41 {
		out["user_id"] = sn.userID
	}
	if minor >= 65 {
		out["consumes_quota"] = true
	}
	return out
}

// snapshotInUseMsg is Cinder's answer to force=false from 3.66, in its
// spelling.
const snapshotInUseMsg = "Since microversion 3.66 the 'force' flag is invalid for this request.  For backward compatability, however, when the 'force' flag is passed with a value evaluating to True, it is silently ignored." //nolint:misspell // Cinder's own message, verbatim

// createSnapshot is POST /snapshots: 202 with the snapshot "creating"; it
// settles as volumes do, the Hypervisor copying the volume's blocks
// (available, or error). The volume must be available, or in-use with
// force=true (any in-use volume from 3.66, where force=false is 400),
// and the snapshot must fit the snapshots and gigabytes quotas (413)
// (cinder/api/v3/snapshots.py, cinder/volume/api.py
// create_snapshot_in_db).
func (s *Server) createSnapshot(r *http.Request, minor int) response {
	var req struct {
		Snapshot *struct {
			VolumeID    string            `json:"volume_id"`
			Force       any               `json:"force"`
			Name        *string           `json:"name"`
			DisplayName *string           `json:"display_name"`
			Description *string           `json:"description"`
			Metadata    map[string]string `json:"metadata"`
		} `json:"snapshot"`
	}
	if err := simkit.Decode(r, &req); err != nil {
		return cinderError(http.StatusBadRequest, "Invalid request body: %v", err)
	}
	b := req.Snapshot
	if b == nil || b.VolumeID == "" {
		return cinderError(http.StatusBadRequest, "Invalid input for field/attribute snapshot. 'volume_id' is a required property")
	}
	v, errResp := s.volume(r, b.VolumeID)
	if errResp != nil {
		return *errResp
	}
	force := false
	if b.Force != nil {
		f, err := strconv.ParseBool(strings.ToLower(fmt.Sprint(b.Force)))
		if err != nil {
			return cinderError(http.StatusBadRequest, "Invalid input for field/attribute force. Value: %v. %v is not of type 'boolean', 'string'", b.Force, b.Force)
		}
		force = f
		if minor >= 66 && !force {
			return cinderError(http.StatusBadRequest, "%s", snapshotInUseMsg)
		}
	}
	if v.Status == VolumeError {
		return cinderError(http.StatusBadRequest, "Invalid volume: The snapshot cannot be created when the volume is in error status.")
	}
	valid := []string{VolumeAvailable}
	if force || minor >= 66 {
		valid = append(valid, VolumeInUse)
	}
	if !slices.Contains(valid, v.Status) {
		return cinderError(http.StatusBadRequest, "Invalid volume: Volume %s status must be %s, but current status is: %s.", v.ID, strings.Join(valid, ", "), v.Status)
	}
	if errResp := s.overQuota(v.project, "snapshots", v.Size); errResp != nil {
		return *errResp
	}
	str := func(ps ...*string) string {
		for _, p := range ps {
			if p != nil {
				return strings.TrimSpace(*p)
			}
		}
		return ""
	}
	sn := &snapshotRec{
		VolumeSnapshot: VolumeSnapshot{
			ID: s.st.newID(kSnapshot), Name: str(b.Name, b.DisplayName), Description: str(b.Description),
			VolumeID: v.ID, Size: v.Size, Status: SnapshotCreating, Metadata: maps.Clone(b.Metadata),
		},
		project: v.project, userID: s.tokenUser(r).ID,
	}
	s.st.volSnapshots.Put(sn.ID, sn)
	s.st.volumeTasks.Start(sn.ID, func() {
		if err := s.hypervisor(func(h simkit.Hypervisor) error { return h.Snapshot(v.disk(v.attachedServer()), sn.ID) }); err != nil {
			s.setSnapshotStatus(sn, SnapshotError)
			return
		}
		sn.hasBlocks = true
		s.setSnapshotStatus(sn, SnapshotAvailable)
	})
	return simkit.JSON(http.StatusAccepted, map[string]any{"snapshot": s.snapshotJSON(sn, minor, true)})
}

// cinderSnapshotFilters are the snapshot filters of
// resource_filters.json; cinderOldSnapshotFilters a member's before 3.31.
var (
	cinderSnapshotFilters    = []string{"name", "status", "volume_id", "metadata", "availability_zone", "consumes_quota"}
	cinderOldSnapshotFilters = []string{"status", "volume_id", "name", "metadata"}
)

// listSnapshots is GET /snapshots[/detail]: the project's snapshots,
// newest first, filtered, sorted and paged as volumes are; a page is a
// read of each snapshot on it.
func (s *Server) listSnapshots(detail bool) cinderHandlerFunc {
	return func(r *http.Request, minor int) response {
		q := r.URL.Query()
		filters, errResp := cinderFilters(q, minor, cinderSnapshotFilters, cinderOldSnapshotFilters)
		if errResp != nil {
			return *errResp
		}
		project := s.tokenProject(r)
		all := s.st.volSnapshots.All()
		items := []map[string]any{}
		for i := len(all) - 1; i >= 0; i-- {
			sn := all[i]
			m := s.snapshotJSON(sn, cinderMaxMinor, true)
			if v, ok := s.st.volumes.Get(sn.VolumeID); ok {
				m["availability_zone"] = v.AZ
			}
			if sn.project == project && cinderMatch(filters, m) {
				items = append(items, m)
			}
		}
		if errResp := cinderSort(q, items, []string{"name", "status", "size", "volume_id", "updated_at"}); errResp != nil {
			return *errResp
		}
		p, errResp := s.cinderPage(r, items, "Snapshot")
		if errResp != nil {
			return *errResp
		}
		shown := []map[string]any{}
		for _, m := range p.items {
			if sn, ok := s.st.volSnapshots.Get(itemID(m)); ok && s.readSnapshot(sn) {
				shown = append(shown, s.snapshotJSON(sn, minor, detail))
			}
		}
		body := map[string]any{"snapshots": shown}
		if len(p.links) > 0 {
			body["snapshots_links"] = p.links
		}
		return jsonOK(body)
	}
}

// getSnapshot counts a read of the snapshot.
func (s *Server) getSnapshot(r *http.Request, minor int) response {
	sn, errResp := s.snapshot(r)
	if errResp != nil {
		return *errResp
	}
	if !s.readSnapshot(sn) {
		return cinderError(http.StatusNotFound, "Snapshot %s could not be found.", sn.ID)
	}
	return jsonOK(map[string]any{"snapshot": s.snapshotJSON(sn, minor, true)})
}

// updateSnapshot is PUT /snapshots/{id}: name and description, 200.
func (s *Server) updateSnapshot(r *http.Request, minor int) response {
	sn, errResp := s.snapshot(r)
	if errResp != nil {
		return *errResp
	}
	var req struct {
		Snapshot *struct {
			Name        *string `json:"name"`
			Description *string `json:"description"`
		} `json:"snapshot"`
	}
	if err := simkit.Decode(r, &req); err != nil || req.Snapshot == nil {
		return cinderError(http.StatusBadRequest, "Invalid input for field/attribute snapshot. Value: None. 'snapshot' is a required property")
	}
	if req.Snapshot.Name != nil {
		sn.Name = strings.TrimSpace(*req.Snapshot.Name)
	}
	if req.Snapshot.Description != nil {
		sn.Description = strings.TrimSpace(*req.Snapshot.Description)
	}
	sn.updated = s.st.cinderTick()
	return jsonOK(map[string]any{"snapshot": s.snapshotJSON(sn, minor, true)})
}

// deleteSnapshotAPI is DELETE /snapshots/{id}: 202, "deleting", then
// gone (the Hypervisor forgets its blocks; its failure leaves it
// error_deleting). Only an available or error snapshot may go (400).
// Volumes made from it keep their blocks.
func (s *Server) deleteSnapshotAPI(r *http.Request, _ int) response {
	sn, errResp := s.snapshot(r)
	if errResp != nil {
		return *errResp
	}
	if sn.Status != SnapshotAvailable && sn.Status != SnapshotError {
		return cinderError(http.StatusBadRequest, "Invalid snapshot: Snapshot status must be available or error and must not be part of a group.")
	}
	s.setSnapshotStatus(sn, SnapshotDeleting)
	s.st.volumeTasks.Start(sn.ID, func() {
		if sn.hasBlocks {
			if err := s.hypervisor(func(h simkit.Hypervisor) error { return h.DeleteSnapshot(sn.ID) }); err != nil {
				s.setSnapshotStatus(sn, SnapshotErrorDeleting)
				return
			}
		}
		s.st.volSnapshots.Del(sn.ID)
	})
	return simkit.NoContent(http.StatusAccepted)
}

// snapshotAction is POST /snapshots/{id}/action: the admin actions are
// 403, os-update_snapshot_status Nova's (403 too for a member).
func (s *Server) snapshotAction(r *http.Request, _ int) response {
	if _, errResp := s.snapshot(r); errResp != nil {
		return *errResp
	}
	var body map[string]json.RawMessage
	if err := simkit.Decode(r, &body); err != nil || len(body) == 0 {
		return cinderError(http.StatusBadRequest, "Malformed request body")
	}
	action := slices.Sorted(mapKeys(body))[0]
	switch action {
	case "os-reset_status":
		return cinderPolicyForbidden("volume_extension:snapshot_admin_actions:reset_status")
	case "os-force_delete":
		return cinderPolicyForbidden("volume_extension:snapshot_admin_actions:force_delete")
	case "os-update_snapshot_status":
		return cinderPolicyForbidden("snapshot_extension:snapshot_actions:update_snapshot_status")
	case "os-unmanage":
		return cinderPolicyForbidden("snapshot_extension:snapshot_unmanage")
	}
	return cinderError(http.StatusBadRequest, "There is no such action: %s", action)
}
