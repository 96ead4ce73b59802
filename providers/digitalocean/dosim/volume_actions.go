package dosim

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// volumeActionRequest is the body of POST /v2/volumes/{id}/actions and
// POST /v2/volumes/actions (godo's ActionRequest; openapi
// volumes/models/volume_action_post_*.yml).
type volumeActionRequest struct {
	Type          string   `json:"type"`
	DropletID     int      `json:"droplet_id"`
	Region        string   `json:"region"`
	SizeGigabytes int64    `json:"size_gigabytes"`
	VolumeName    string   `json:"volume_name"`
	Tags          []string `json:"tags"`
}

// postVolumeAction serves POST /v2/volumes/{id}/actions: 202 with the
// action "in-progress" (attach_volume, detach_volume, resize_volume).
func (s *Server) postVolumeAction(r *http.Request) (int, any) {
	v, ok := s.st.volumes.Get(r.PathValue("id"))
	if !ok {
		return notFound()
	}
	var req volumeActionRequest
	if err := simkit.Decode(r, &req); err != nil {
		return badJSON(err)
	}
	return s.startVolumeAction(v, req)
}

// postVolumeActionByName serves POST /v2/volumes/actions: attach or detach
// the volume called volume_name in region (the droplet's when the request
// has none); resize is by ID only (openapi volumes/volumeActions_post.yml).
func (s *Server) postVolumeActionByName(r *http.Request) (int, any) {
	var req volumeActionRequest
	if err := simkit.Decode(r, &req); err != nil {
		return badJSON(err)
	}
	if req.Type != "attach" && req.Type != "detach" {
		return unprocessable("type must be attach or detach to act on a volume by name")
	}
	if req.VolumeName == "" {
		return unprocessable("volume_name is required")
	}
	reg := req.Region
	if d, ok := s.st.droplets[req.DropletID]; ok && reg == "" {
		reg = d.Region.Slug
	}
	v, ok := s.st.volumeByName(req.VolumeName, reg)
	if !ok {
		return notFound()
	}
	return s.startVolumeAction(v, req)
}

// startVolumeAction validates req on v and starts the action. It completes,
// and only then changes the volume and the droplet, on its
// Options.ProvisioningReads-th read, on Advance, or SettleAfter after it
// started.
func (s *Server) startVolumeAction(v *Volume, req volumeActionRequest) (int, any) {
	var status int
	var msg string
	switch req.Type {
	case "attach":
		status, msg = s.validateAttach(v, req)
	case "detach":
		status, msg = s.validateDetach(v, req)
	case "resize":
		status, msg = s.validateResize(v, req)
	default:
		status, msg = http.StatusUnprocessableEntity, fmt.Sprintf("type %q is not one of attach, detach, resize", req.Type)
	}
	if status != 0 {
		return fail(status, "%s", msg)
	}
	st := s.st
	reg := v.Region
	a := &Action{
		ID: st.nextAction, Status: ActionInProgress, Type: req.Type + "_volume",
		StartedAt: st.now().UTC().Format(time.RFC3339), ResourceType: "volume", Region: &reg, RegionSlug: reg.Slug,
		volume: v.ID,
	}
	if req.Type != "resize" {
		a.droplet = req.DropletID
	}
	st.nextAction++
	st.actions[a.ID] = a
	st.actionOrder = append(st.actionOrder, a.ID)
	st.acting.Start(actionKey(a.ID), func() { s.completeVolumeAction(a, req.SizeGigabytes) })
	return http.StatusAccepted, map[string]any{"action": a.clone()}
}

// checkRegion reports a request region other than the volume's.
func checkRegion(v *Volume, req volumeActionRequest) (int, string) {
	if req.Region != "" && req.Region != v.Region.Slug {
		return http.StatusUnprocessableEntity, fmt.Sprintf("volume %s is in region %s, not %s", v.ID, v.Region.Slug, req.Region)
	}
	return 0, ""
}

// validateAttach: the droplet exists in the volume's region, neither it
// nor the volume has an action in progress, the volume is attached
// nowhere, and the droplet has room for another volume.
func (s *Server) validateAttach(v *Volume, req volumeActionRequest) (int, string) {
	if status, msg := checkRegion(v, req); status != 0 {
		return status, msg
	}
	d, ok := s.st.droplets[req.DropletID]
	switch {
	case !ok:
		return http.StatusNotFound, msgNotFound
	case d.Region.Slug != v.Region.Slug:
		return http.StatusUnprocessableEntity,
			fmt.Sprintf("volume %s is in region %s and droplet %d in %s", v.ID, v.Region.Slug, d.ID, d.Region.Slug)
	case s.volumeBusy(v.ID) || s.pendingAction(d.ID):
		return http.StatusUnprocessableEntity, msgPendingEvent
	case len(v.DropletIDs) > 0:
		return http.StatusUnprocessableEntity, msgAlreadyAttached
	case len(d.VolumeIDs) >= s.opts.VolumesPerDroplet:
		return http.StatusUnprocessableEntity, msgVolumeLimit
	}
	return 0, ""
}

// validateDetach: the volume is attached to the droplet and neither has an
// action in progress. Without droplet_id it is "Attachment not found", as
// the API answers (godo issue 102).
func (s *Server) validateDetach(v *Volume, req volumeActionRequest) (int, string) {
	if status, msg := checkRegion(v, req); status != 0 {
		return status, msg
	}
	if req.DropletID == 0 {
		return http.StatusUnprocessableEntity, msgAttachmentNotFound
	}
	if _, ok := s.st.droplets[req.DropletID]; !ok {
		return http.StatusNotFound, msgNotFound
	}
	if s.volumeBusy(v.ID) || s.pendingAction(req.DropletID) {
		return http.StatusUnprocessableEntity, msgPendingEvent
	}
	if !slices.Contains(v.DropletIDs, req.DropletID) {
		return http.StatusUnprocessableEntity, msgAttachmentNotFound
	}
	return 0, ""
}

// validateResize: only upwards, at most MaxVolumeSize ("Volumes may only be
// resized upwards. The maximum size for a volume is 16TiB.", openapi
// volumes/volumeActions_post_byId.yml), attached or not, with no action in
// progress on the volume.
func (s *Server) validateResize(v *Volume, req volumeActionRequest) (int, string) {
	if status, msg := checkRegion(v, req); status != 0 {
		return status, msg
	}
	switch {
	case req.SizeGigabytes <= v.SizeGigabytes:
		return http.StatusUnprocessableEntity,
			fmt.Sprintf("Volumes may only be resized upwards: size_gigabytes %d is not above %d", req.SizeGigabytes, v.SizeGigabytes)
	case req.SizeGigabytes > MaxVolumeSize:
		return http.StatusUnprocessableEntity, "The maximum size for a volume is 16TiB."
	case s.volumeBusy(v.ID):
		return http.StatusUnprocessableEntity, msgPendingEvent
	}
	return 0, ""
}

// volumeBusy reports whether volume id has an action in progress.
func (s *Server) volumeBusy(id string) bool {
	for _, a := range s.st.actions {
		if a.volume == id && a.Status == ActionInProgress {
			return true
		}
	}
	return false
}

// completeVolumeAction carries out a volume action when it completes:
// the cloud's state changes, then the Hypervisor is told; if the
// Hypervisor fails, the state goes back and the action ends "errored", as
// the API reports a failed action. The caller holds s.mu.
func (s *Server) completeVolumeAction(a *Action, size int64) {
	st := s.st
	v, ok := st.volumes.Get(a.volume)
	d := st.droplets[a.droplet]
	if !ok || (a.droplet != 0 && d == nil) {
		s.finishAction(a, ActionErrored)
		return
	}
	var err error
	switch a.Type {
	case "attach_volume":
		v.DropletIDs = []int{d.ID}
		d.VolumeIDs = append(d.VolumeIDs, v.ID)
		if err = s.hypervisor(func(h simkit.Hypervisor) error { return h.Attach(v.disk(d.ID)) }); err != nil {
			v.DropletIDs = []int{}
			d.VolumeIDs = slices.DeleteFunc(d.VolumeIDs, func(id string) bool { return id == v.ID })
		}
	case "detach_volume":
		v.DropletIDs = slices.DeleteFunc(v.DropletIDs, func(id int) bool { return id == d.ID })
		d.VolumeIDs = slices.DeleteFunc(d.VolumeIDs, func(id string) bool { return id == v.ID })
		if err = s.hypervisor(func(h simkit.Hypervisor) error { return h.Detach(v.disk(d.ID)) }); err != nil {
			v.DropletIDs = []int{d.ID}
			d.VolumeIDs = append(d.VolumeIDs, v.ID)
		}
	case "resize_volume":
		old := v.SizeGigabytes
		v.SizeGigabytes = size
		if err = s.hypervisor(func(h simkit.Hypervisor) error { return h.Resize(v.disk(v.attachedTo())) }); err != nil {
			v.SizeGigabytes = old
		}
	}
	if err != nil {
		s.finishAction(a, ActionErrored)
		return
	}
	s.finishAction(a, ActionCompleted)
}

// listVolumeActions serves GET /v2/volumes/{id}/actions, newest first.
func (s *Server) listVolumeActions(r *http.Request) (int, any) {
	id := r.PathValue("id")
	if _, ok := s.st.volumes.Get(id); !ok {
		return notFound()
	}
	return s.actionList(r, func(a *Action) bool { return a.volume == id })
}

// getVolumeAction serves GET /v2/volumes/{id}/actions/{action} (a read:
// see startVolumeAction); 404 for an action of another volume.
func (s *Server) getVolumeAction(r *http.Request) (int, any) {
	id, err := strconv.Atoi(r.PathValue("action"))
	if err != nil {
		return notFound()
	}
	if a, ok := s.st.actions[id]; !ok || a.volume != r.PathValue("id") {
		return notFound()
	}
	return http.StatusOK, map[string]any{"action": s.readAction(id)}
}

// volumeActions are the volume actions keep accepts, oldest first.
func (st *state) volumeActions(keep func(*Action) bool) []Action {
	out := []Action{}
	for _, id := range st.actionOrder {
		if a := st.actions[id]; a.volume != "" && keep(a) {
			out = append(out, a.clone())
		}
	}
	return out
}
