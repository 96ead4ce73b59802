package openstacksim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// cinderAdminActions are the volume actions only an admin may take, by
// the body's action key, with their policy rule.
var cinderAdminActions = map[string]string{
	"os-reset_status":               "volume_extension:volume_admin_actions:reset_status",
	"os-force_delete":               "volume_extension:volume_admin_actions:force_delete",
	"os-force_detach":               "volume_extension:volume_admin_actions:force_detach",
	"os-migrate_volume":             "volume_extension:volume_admin_actions:migrate_volume",
	"os-migrate_volume_completion":  "volume_extension:volume_admin_actions:migrate_volume_completion",
	"os-unmanage":                   "volume_extension:volume_unmanage",
	"os-extend_volume_completion":   "volume_extension:volume_admin_actions:extend_volume_completion",
	"os-volume_upload_image_public": "volume_extension:volume_actions:upload_public",
}

// volumeAction is POST /volumes/{id}/action: os-extend (202, see
// extendVolume), os-set_bootable (200) and os-update_readonly_flag
// (202); the admin actions are 403 for the member the simulator's users
// are; any other is 400 "There is no such action".
func (s *Server) volumeAction(r *http.Request, minor int) response {
	v, errResp := s.volume(r, r.PathValue("id"))
	if errResp != nil {
		return *errResp
	}
	var body map[string]json.RawMessage
	if err := simkit.Decode(r, &body); err != nil || len(body) == 0 {
		return cinderError(http.StatusBadRequest, "Malformed request body")
	}
	keys := slices.Sorted(mapKeys(body))
	action := keys[0]
	if rule, ok := cinderAdminActions[action]; ok {
		return cinderPolicyForbidden(rule)
	}
	switch action {
	case "os-extend":
		var req struct {
			NewSize json.RawMessage `json:"new_size"`
		}
		if err := json.Unmarshal(body[action], &req); err != nil || len(req.NewSize) == 0 {
			return cinderError(http.StatusBadRequest, "Invalid input for field/attribute os-extend. Value: %s. 'new_size' is a required property", body[action])
		}
		size, text, ok := volumeSize(req.NewSize)
		if !ok || size <= 0 {
			return cinderError(http.StatusBadRequest, "Invalid input for field/attribute new_size. Value: %s. %s is not a valid size", text, text)
		}
		return s.extendVolume(v, size, minor)
	case "os-set_bootable":
		var req struct {
			Bootable any `json:"bootable"`
		}
		_ = json.Unmarshal(body[action], &req)
		b, err := strconv.ParseBool(strings.ToLower(fmt.Sprint(req.Bootable)))
		if err != nil {
			return cinderError(http.StatusBadRequest, "Invalid input for field/attribute bootable. Value: %v. %v is not of type 'boolean', 'string'", req.Bootable, req.Bootable)
		}
		v.Bootable, v.updated = b, s.st.cinderTick()
		return simkit.NoContent(http.StatusOK)
	case "os-update_readonly_flag":
		var req struct {
			Readonly any `json:"readonly"`
		}
		_ = json.Unmarshal(body[action], &req)
		b, err := strconv.ParseBool(strings.ToLower(fmt.Sprint(req.Readonly)))
		if err != nil {
			return cinderError(http.StatusBadRequest, "Invalid input for field/attribute readonly. Value: %v. %v is not of type 'boolean', 'string'", req.Readonly, req.Readonly)
		}
		if v.Metadata == nil {
			v.Metadata = map[string]string{}
		}
		v.Metadata["readonly"] = strconv.FormatBool(b)
		return simkit.NoContent(http.StatusAccepted)
	}
	return cinderError(http.StatusBadRequest, "There is no such action: %s", action)
}

// extendVolume is os-extend (cinder/volume/api.py _extend): 202, the
// volume "extending", then back in its status at the new size. An
// in-use volume extends only from 3.42 (before, it must be available);
// the size must grow and fit the gigabytes quota (413).
func (s *Server) extendVolume(v *volumeRec, size, minor int) response {
	expected := VolumeAvailable
	if minor >= 42 && v.Status == VolumeInUse {
		expected = VolumeInUse
	}
	if size <= v.Size {
		return cinderError(http.StatusBadRequest, "Invalid input received: New size for extend must be greater than current size. (current: %d, extended: %d).", v.Size, size)
	}
	if v.Status != expected {
		return cinderError(http.StatusBadRequest, "Invalid volume: Volume %s status must be '{'status': '%s'}' to extend, currently %s.", v.ID, expected, v.Status)
	}
	if errResp := s.overQuota(v.project, "", size-v.Size); errResp != nil {
		return *errResp
	}
	v.prevStatus, v.newSize = v.Status, size
	s.setVolumeStatus(v, VolumeExtending)
	s.st.volumeTasks.Start(v.ID, func() { s.finishExtend(v) })
	return simkit.NoContent(http.StatusAccepted)
}

// finishExtend settles an extend: the volume takes its new size and the
// Hypervisor grows it (on the server it is attached to, if any: Cinder
// tells Nova, whose libvirt driver resizes the attached disk); the
// volume is back in its status, or error_extending at its old size.
func (s *Server) finishExtend(v *volumeRec) {
	old := v.Size
	v.Size = v.newSize
	if err := s.hypervisor(func(h simkit.Hypervisor) error { return h.Resize(v.disk(v.attachedServer())) }); err != nil {
		v.Size = old
		s.setVolumeStatus(v, VolumeErrorExtending)
		return
	}
	s.setVolumeStatus(v, v.prevStatus)
}
