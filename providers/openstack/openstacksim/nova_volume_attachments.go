package openstacksim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Nova's volume attachments (nova/api/openstack/compute/
// volume_attachments.py and compute/api.py attach_volume/detach_volume):
// POST /servers/{id}/os-volume_attachments reserves a device name and a
// Cinder attachment at once (200 with the device; the volume "reserved")
// and the compute host attaches the volume later: the attachment
// settles as Cinder's volumes do (cinder_volume_api.go), the Hypervisor
// attaches it, and the volume is in-use. DELETE begins detaching (202;
// the volume "detaching") and the attachment goes when it settles. The
// attachment's ID in Nova is the volume's; from 2.89 lists and shows give
// attachment_id and bdm_uuid instead of id, and 2.70 adds tag, 2.79
// delete_on_termination.

// DefaultMaxDiskDevices is the simulator's Nova
// [compute]max_disk_devices_to_attach: the disks one server may have, its
// root disk included, so 25 volumes (vdb … vdz). Nova's own default is
// -1 (no limit), the limit then being what the hypervisor has room for
// (libvirt's virtio-blk disks take a PCI slot each, some 28 in all).
const DefaultMaxDiskDevices = 26

func (s *Server) novaVolumeAttachmentRoutes() {
	c := computeV21 + "/servers/{id}/os-volume_attachments"
	s.novaHandle("GET "+c, s.listVolumeAttachments)
	s.novaHandle("POST "+c, s.attachVolume)
	s.novaHandle("GET "+c+"/{volume}", s.getVolumeAttachment)
	s.novaHandle("PUT "+c+"/{volume}", s.updateVolumeAttachment)
	s.novaHandle("DELETE "+c+"/{volume}", s.detachVolume)
}

// serverAttachments are the attachments of server id (Nova's block
// device mappings of volumes), in the order they were made, with their
// volumes.
func (s *Server) serverAttachments(id string) []attachmentRef {
	var out []attachmentRef
	for _, v := range s.st.volumes.All() {
		for i := range v.Attachments {
			if v.Attachments[i].ServerID == id {
				out = append(out, attachmentRef{v, &v.Attachments[i]})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].a.BDMUUID < out[j].a.BDMUUID })
	return out
}

// attachmentRef is an attachment and its volume.
type attachmentRef struct {
	v *volumeRec
	a *VolumeAttachment
}

// attachmentJSON is Nova's view of an attachment at 2.minor.
func attachmentJSON(a *VolumeAttachment, minor int) map[string]any {
	out := map[string]any{"volumeId": a.VolumeID, "serverId": a.ServerID, "device": a.Device}
	if minor < 89 {
		out["id"] = a.VolumeID
	} else {
		out["attachment_id"], out["bdm_uuid"] = a.ID, a.BDMUUID
	}
	if minor >= 70 {
		out["tag"] = nullable(a.Tag)
	}
	if minor >= 79 {
		out["delete_on_termination"] = a.DeleteOnTermination
	}
	return out
}

// listVolumeAttachments is GET /servers/{id}/os-volume_attachments
// (limit and offset as Nova's common.limited); a read of each volume.
func (s *Server) listVolumeAttachments(r *http.Request, minor int) response {
	srv, errResp := s.server(r)
	if errResp != nil {
		return *errResp
	}
	for _, ar := range s.serverAttachments(srv.ID) {
		s.readVolume(ar.v)
	}
	atts := s.serverAttachments(srv.ID)
	p, err := simkit.PageByOffset(r, len(atts), simkit.OffsetPages{Default: s.opts.MaxLimit, Max: s.opts.MaxLimit})
	if err != nil {
		return novaError(http.StatusBadRequest, "%v", err)
	}
	out := []map[string]any{}
	for _, ar := range atts[p.Start:p.End] {
		out = append(out, attachmentJSON(ar.a, minor))
	}
	return jsonOK(map[string]any{"volumeAttachments": out})
}

// attachment is the server's attachment of the request's {volume}; with
// read, it is a read of the volume, which may settle a pending attach or
// detach.
func (s *Server) attachment(r *http.Request, read bool) (*serverRec, *attachmentRef, *response) {
	srv, errResp := s.server(r)
	if errResp != nil {
		return nil, nil, errResp
	}
	volID := r.PathValue("volume")
	find := func() *attachmentRef {
		for _, ar := range s.serverAttachments(srv.ID) {
			if ar.v.ID == volID {
				return &ar
			}
		}
		return nil
	}
	if ar := find(); ar != nil && read {
		s.readVolume(ar.v)
	}
	ar := find()
	if ar == nil {
		resp := novaError(http.StatusNotFound, "Instance %s is not attached to volume %s", srv.ID, volID)
		return srv, nil, &resp
	}
	return srv, ar, nil
}

func (s *Server) getVolumeAttachment(r *http.Request, minor int) response {
	_, ar, errResp := s.attachment(r, true)
	if errResp != nil {
		return *errResp
	}
	return jsonOK(map[string]any{"volumeAttachment": attachmentJSON(ar.a, minor)})
}

// devicePattern is the device names Nova's schema takes.
var devicePattern = regexp.MustCompile(`^(/dev/x{0,1}[a-z]{0,1}d{0,1})([a-z]+)[0-9]*$`)

// attachRequest is the body of POST …/os-volume_attachments.
type attachRequest struct {
	VolumeAttachment map[string]json.RawMessage `json:"volumeAttachment"`
}

// attachVolume is POST /servers/{id}/os-volume_attachments.
func (s *Server) attachVolume(r *http.Request, minor int) response {
	srv, errResp := s.server(r)
	if errResp != nil {
		return *errResp
	}
	var req attachRequest
	if err := simkit.Decode(r, &req); err != nil || req.VolumeAttachment == nil {
		return novaError(http.StatusBadRequest, "Invalid input for field/attribute volumeAttachment. Value: None. 'volumeAttachment' is a required property")
	}
	body := req.VolumeAttachment
	allowed := []string{"volumeId", "device"}
	if minor >= 49 {
		allowed = append(allowed, "tag")
	}
	if minor >= 79 {
		allowed = append(allowed, "delete_on_termination")
	}
	for k := range body {
		if !slices.Contains(allowed, k) {
			return novaError(http.StatusBadRequest, "Invalid input for field/attribute volumeAttachment. Value: %s. Additional properties are not allowed ('%s' was unexpected)", rawObject(body), k)
		}
	}
	var volID, device, tag string
	var deleteOnTermination bool
	_ = json.Unmarshal(body["volumeId"], &volID)
	_ = json.Unmarshal(body["device"], &device)
	_ = json.Unmarshal(body["tag"], &tag)
	if raw, ok := body["delete_on_termination"]; ok {
		if err := json.Unmarshal(raw, &deleteOnTermination); err != nil {
			return novaError(http.StatusBadRequest, "Invalid input for field/attribute delete_on_termination. Value: %s. %s is not of type 'boolean'", raw, raw)
		}
	}
	switch {
	case volID == "":
		return novaError(http.StatusBadRequest, "Invalid input for field/attribute volumeAttachment. Value: %s. 'volumeId' is a required property", rawObject(body))
	case !uuidLike.MatchString(volID):
		return novaError(http.StatusBadRequest, "Invalid input for field/attribute volumeId. Value: %s. '%s' is not a 'uuid'", volID, volID)
	case device != "" && !devicePattern.MatchString(device):
		return novaError(http.StatusBadRequest, "Invalid input for field/attribute device. Value: %s. '%s' does not match '%s'", device, device, devicePattern)
	case len(tag) > 60 || strings.ContainsAny(tag, "/,"):
		return novaError(http.StatusBadRequest, "Invalid input for field/attribute tag. Value: %s. '%s' does not match '^[^,/]*$'", tag, tag)
	}
	if errResp := serverAcceptsVolumeChange(srv, "attach_volume"); errResp != nil {
		return *errResp
	}
	v, ok := s.st.volumes.Get(volID)
	if !ok || v.project != srv.project {
		return novaError(http.StatusNotFound, "Volume %s could not be found.", volID)
	}
	var others []string
	for _, a := range v.Attachments {
		if a.ServerID == srv.ID {
			return novaError(http.StatusBadRequest, "Invalid volume: volume %s already attached", v.ID)
		}
		others = append(others, a.ServerID)
	}
	if len(others) > 0 && !v.Multiattach {
		return novaError(http.StatusBadRequest, "Invalid volume: volume %s is already attached to instances: %s", v.ID, strings.Join(others, " "))
	}
	dev := s.nextDevice(srv.ID)
	if dev == "" {
		return novaError(http.StatusForbidden, "The maximum allowed number of disk devices (%d) to attach to a single instance has been exceeded.", s.opts.MaxDiskDevices)
	}
	if v.Multiattach && minor < 60 {
		return novaError(http.StatusBadRequest, "Multiattach volumes are only supported starting with compute API version 2.60.")
	}
	// Cinder's attachment_create: an error status, or one that cannot be
	// reserved, is Cinder's 400, which Nova passes on as InvalidInput.
	cinderSays := func(msg string) response {
		return novaError(http.StatusBadRequest, "Invalid input received: Invalid volume: %s (HTTP 400) (Request-ID: %s)", msg, newRequestID())
	}
	reservable := []string{VolumeAvailable, "downloading"}
	if v.Multiattach {
		reservable = []string{VolumeAvailable, VolumeInUse, "downloading"}
	}
	switch {
	case strings.Contains(v.Status, "error"):
		return cinderSays(fmt.Sprintf("Volume attachments can not be created if the volume is in an error state. The Volume %s currently has a status of: %s ", v.ID, v.Status))
	case !slices.Contains(reservable, v.Status):
		return cinderSays(fmt.Sprintf("Volume %s status must be %s to reserve, but the current status is %s.", v.ID, strings.Join(reservable, " or "), v.Status))
	}
	v.Attachments = append(v.Attachments, VolumeAttachment{
		ID: s.st.newID(kAttachment), VolumeID: v.ID, ServerID: srv.ID, Device: dev, Tag: tag,
		DeleteOnTermination: deleteOnTermination, BDMUUID: s.st.newID(kBDM), Status: AttachAttaching,
	})
	attID := v.Attachments[len(v.Attachments)-1].ID
	prev := v.Status
	s.setVolumeStatus(v, VolumeReserved)
	s.st.volumeTasks.Start(v.ID, func() { s.finishAttach(v, attID, prev) })
	out := map[string]any{"id": v.ID, "serverId": srv.ID, "volumeId": v.ID, "device": dev}
	if minor >= 70 {
		out["tag"] = nullable(tag)
	}
	if minor >= 79 {
		out["delete_on_termination"] = deleteOnTermination
	}
	return jsonOK(map[string]any{"volumeAttachment": out})
}

// rawObject renders a request object for a message.
func rawObject(m map[string]json.RawMessage) string {
	data, _ := json.Marshal(m)
	return string(data)
}

// serverAcceptsVolumeChange is Nova's check_instance_state for
// attach_volume and detach_volume: the server must be active, paused or
// stopped, with no task (409 otherwise).
func serverAcceptsVolumeChange(srv *serverRec, method string) *response {
	var resp response
	switch {
	case srv.Status != StatusActive && srv.Status != StatusShutoff && srv.Status != StatusPaused:
		resp = novaError(http.StatusConflict, "Cannot '%s' instance %s while it is in vm_state %s", method, srv.ID, vmState(srv.Status))
	case srv.TaskState != "":
		resp = novaError(http.StatusConflict, "Cannot '%s' instance %s while it is in task_state %s", method, srv.ID, srv.TaskState)
	default:
		return nil
	}
	return &resp
}

// nextDevice is the next free device name on server id (/dev/vdb on, vda
// being the root disk), "" when the server has Options.MaxDiskDevices
// disks already.
func (s *Server) nextDevice(id string) string {
	used := map[string]bool{"a": true}
	for _, ar := range s.serverAttachments(id) {
		used[strings.TrimPrefix(ar.a.Device, "/dev/vd")] = true
	}
	if len(used)+1 > s.opts.MaxDiskDevices {
		return ""
	}
	for i := 0; ; i++ {
		if l := deviceLetters(i); !used[l] {
			return "/dev/vd" + l
		}
	}
}

// deviceLetters is the i-th disk's letters: a … z, aa, ab, ….
func deviceLetters(i int) string {
	var b []byte
	for i++; i > 0; i = (i - 1) / 26 {
		b = append([]byte{byte('a' + (i-1)%26)}, b...)
	}
	return string(b)
}

// finishAttach settles an attach: the Hypervisor attaches the volume and
// the attachment completes (the volume in-use), or, when it fails, Nova
// deletes the attachment and the volume is as it was.
func (s *Server) finishAttach(v *volumeRec, attID, prev string) {
	i := slices.IndexFunc(v.Attachments, func(a VolumeAttachment) bool { return a.ID == attID })
	if i < 0 {
		return
	}
	a := &v.Attachments[i]
	if err := s.hypervisor(func(h simkit.Hypervisor) error { return h.Attach(v.disk(a.ServerID)) }); err != nil {
		v.Attachments = slices.Delete(v.Attachments, i, i+1)
		s.setVolumeStatus(v, prev)
		return
	}
	tick := s.st.cinderTick()
	a.Status, a.AttachedAt = AttachAttached, tick
	v.Status, v.updated = VolumeInUse, tick
}

// detachVolume is DELETE /servers/{id}/os-volume_attachments/{volume}:
// 202, the volume "detaching" (Cinder's begin_detaching, which wants it
// in-use and attached: 400 otherwise), then, when it settles, detached:
// the Hypervisor detaches it and the volume is available (in-use while
// other servers have it); if that fails, Nova rolls the detach back
// (in-use).
func (s *Server) detachVolume(r *http.Request, _ int) response {
	srv, errResp := s.server(r)
	if errResp != nil {
		return *errResp
	}
	if v, ok := s.st.volumes.Get(r.PathValue("volume")); !ok || v.project != srv.project {
		return novaError(http.StatusNotFound, "Volume %s could not be found.", r.PathValue("volume"))
	}
	_, ar, errResp := s.attachment(r, false)
	if errResp != nil {
		return *errResp
	}
	if errResp := serverAcceptsVolumeChange(srv, "detach_volume"); errResp != nil {
		return *errResp
	}
	v, a := ar.v, ar.a
	if v.Status != VolumeInUse || a.Status != AttachAttached {
		return novaError(http.StatusBadRequest, "Invalid volume: Invalid input received: Invalid volume: Unable to detach volume. Volume status must be 'in-use' and attach_status must be 'attached' to detach. (HTTP 400) (Request-ID: %s)", newRequestID())
	}
	a.Status = AttachDetaching
	s.setVolumeStatus(v, VolumeDetaching)
	attID := a.ID
	s.st.volumeTasks.Start(v.ID, func() { s.finishDetach(v, attID) })
	return simkit.NoContent(http.StatusAccepted)
}

// finishDetach settles a detach.
func (s *Server) finishDetach(v *volumeRec, attID string) {
	i := slices.IndexFunc(v.Attachments, func(a VolumeAttachment) bool { return a.ID == attID })
	if i < 0 {
		return
	}
	a := &v.Attachments[i]
	if err := s.hypervisor(func(h simkit.Hypervisor) error { return h.Detach(v.disk(a.ServerID)) }); err != nil {
		a.Status = AttachAttached
		s.setVolumeStatus(v, VolumeInUse)
		return
	}
	v.Attachments = slices.Delete(v.Attachments, i, i+1)
	status := VolumeAvailable
	if len(v.Attachments) > 0 {
		status = VolumeInUse
	}
	s.setVolumeStatus(v, status)
}

// updateVolumeAttachment is PUT …/os-volume_attachments/{volume}: before
// 2.85, or with another volumeId, a swap, which only an admin (and
// Cinder) may ask for (403); from 2.85 it updates delete_on_termination
// (202).
func (s *Server) updateVolumeAttachment(r *http.Request, minor int) response {
	if _, errResp := s.server(r); errResp != nil {
		return *errResp
	}
	var req attachRequest
	if err := simkit.Decode(r, &req); err != nil || req.VolumeAttachment == nil {
		return novaError(http.StatusBadRequest, "Invalid input for field/attribute volumeAttachment. Value: None. 'volumeAttachment' is a required property")
	}
	var volID string
	_ = json.Unmarshal(req.VolumeAttachment["volumeId"], &volID)
	if minor < 85 || volID != r.PathValue("volume") {
		return policyForbidden("os_compute_api:os-volumes-attachments:swap")
	}
	_, ar, errResp := s.attachment(r, false)
	if errResp != nil {
		return *errResp
	}
	if raw, ok := req.VolumeAttachment["delete_on_termination"]; ok {
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return novaError(http.StatusBadRequest, "Invalid input for field/attribute delete_on_termination. Value: %s. %s is not of type 'boolean'", raw, raw)
		}
		ar.a.DeleteOnTermination = b
	}
	return simkit.NoContent(http.StatusAccepted)
}

// detachServerVolumes is what deleting a server does to its volumes:
// each is detached (the Hypervisor told, its error ignored: the server
// is gone either way; an attach or detach under way ends there), and
// deleted when its attachment said delete_on_termination.
func (s *Server) detachServerVolumes(id string) {
	for _, ar := range s.serverAttachments(id) {
		v := ar.v
		i := slices.IndexFunc(v.Attachments, func(a VolumeAttachment) bool { return a.ServerID == id })
		if i < 0 {
			continue
		}
		a := v.Attachments[i]
		if a.Status != AttachAttached {
			s.st.volumeTasks.Stop(v.ID) // the pending task is this attachment's
		}
		if a.Status != AttachAttaching {
			_ = s.hypervisor(func(h simkit.Hypervisor) error { return h.Detach(v.disk(id)) })
		}
		v.Attachments = slices.Delete(v.Attachments, i, i+1)
		if a.Status != AttachAttached || v.Status == VolumeInUse {
			status := VolumeAvailable
			if slices.ContainsFunc(v.Attachments, func(b VolumeAttachment) bool { return b.Status != AttachAttaching }) {
				status = VolumeInUse
			}
			s.setVolumeStatus(v, status)
		}
		if a.DeleteOnTermination && v.Status == VolumeAvailable && len(s.volumeSnapshotsOf(v.ID)) == 0 {
			if v.hasBlocks {
				_ = s.hypervisor(func(h simkit.Hypervisor) error { return h.Delete(v.disk("")) })
			}
			s.st.volumes.Del(v.ID)
		}
	}
}

// volumesAttached is a server's os-extended-volumes:volumes_attached at
// 2.minor: each volume (delete_on_termination from 2.3).
func (s *Server) volumesAttached(id string, minor int) []map[string]any {
	out := []map[string]any{}
	for _, ar := range s.serverAttachments(id) {
		m := map[string]any{"id": ar.v.ID}
		if minor >= 3 {
			m["delete_on_termination"] = ar.a.DeleteOnTermination
		}
		out = append(out, m)
	}
	return out
}
