package gbsim

import (
	"net/http"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// attachRequest is the body of POST /1.0/volumes/{id}/attach
// (brightbox.VolumeAttachment).
type attachRequest struct {
	Server string `json:"server"`
	Boot   bool   `json:"boot"`
}

// resizeRequest is the body of POST /1.0/volumes/{id}/resize
// (brightbox.VolumeNewSize): from is the size the client last saw, which
// the API checks so that it never acts on stale data.
type resizeRequest struct {
	From *int `json:"from"`
	To   *int `json:"to"`
}

// busy is the 409 for a volume whose state refuses a change now, nil when
// none does.
func (v *Volume) busy() *simkit.Response {
	var resp simkit.Response
	switch {
	case v.gone(), v.Status == StatusCreating, v.Status == StatusFailed:
		resp = conflict("Volume %s is %s", v.ID, v.Status)
	case v.attachingTo() != "":
		resp = conflict("Volume %s is being attached to %s", v.ID, v.attachingTo())
	case v.pending == pendingDetach:
		resp = conflict("Volume %s is being detached", v.ID)
	default:
		return nil
	}
	return &resp
}

// attachedTo counts the volumes attached, or being attached, to server
// id.
func (st *state) attachedTo(id string) (n int, boot bool) {
	for _, v := range st.volumes.All() {
		if v.Server == id || v.attachingTo() == id {
			n++
			boot = boot || (v.Server == id && v.Boot)
		}
	}
	return n, boot
}

// attachVolume serves POST /1.0/volumes/{id}/attach: 202 with the volume,
// still detached; it is attached (status attached, server set, the
// Hypervisor told) after Options.ProvisioningReads reads. 409 while the
// volume is attached, being attached or detached, created, deleted or
// failed, or the server is not active or stopped; 422 for a server that
// does not exist or has Options.VolumesPerServer volumes. A boot volume
// goes only to a stopped server without one.
func (s *Server) attachVolume(r *http.Request) simkit.Response {
	st := s.st
	v, found := st.volumes.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	var req attachRequest
	if resp := decode(r, &req, false); resp != nil {
		return *resp
	}
	if req.Server != "" && v.attachingTo() == req.Server {
		return accepted(s.view(r).volume(v)) // on its way there already
	}
	if resp := v.busy(); resp != nil {
		return *resp
	}
	if v.Status == VolumeAttached {
		return conflict("Volume %s is already attached to %s", v.ID, v.Server)
	}
	srv, ok := st.servers.Get(req.Server)
	switch {
	case req.Server == "":
		return invalid("server: required")
	case !ok || srv.Status == StatusDeleted:
		return invalid("server: no server %s", req.Server)
	case srv.Status != StatusActive && srv.Status != StatusInactive:
		return conflict("Server %s is %s", srv.ID, srv.Status)
	}
	n, hasBoot := st.attachedTo(srv.ID)
	switch {
	case req.Boot && srv.Status != StatusInactive:
		return conflict("Server %s must be stopped to attach a boot volume", srv.ID)
	case req.Boot && hasBoot:
		return conflict("Server %s has a boot volume", srv.ID)
	case n >= s.opts.VolumesPerServer:
		return invalid("Server %s has the maximum of %d volumes attached", srv.ID, s.opts.VolumesPerServer)
	}
	v.pending = pendingAttach + srv.ID
	st.settling.Start(v.ID, func() { st.finishAttach(v, req.Boot) })
	return accepted(s.view(r).volume(v))
}

// finishAttach attaches v to the server its attach is for, unless the
// server went meanwhile; if the Hypervisor fails, it stays detached.
func (st *state) finishAttach(v *Volume, boot bool) {
	id := v.attachingTo()
	v.pending = ""
	if srv, ok := st.servers.Get(id); !ok || srv.Status == StatusDeleted {
		return
	}
	if err := st.hypervisor(func(h simkit.Hypervisor) error { return h.Attach(v.disk(id)) }); err != nil {
		return
	}
	v.Status, v.Server, v.Boot, v.UpdatedAt = VolumeAttached, id, boot, st.now()
}

// detachVolume serves POST /1.0/volumes/{id}/detach: 202 with the volume,
// still attached; it is detached after Options.ProvisioningReads reads.
// 409 when it is not attached, or is being attached, created or deleted,
// or is the boot volume of a running server.
func (s *Server) detachVolume(r *http.Request) simkit.Response {
	st := s.st
	v, found := st.volumes.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	if v.pending == pendingDetach {
		return accepted(s.view(r).volume(v)) // on its way already
	}
	if resp := v.busy(); resp != nil {
		return *resp
	}
	if v.Status != VolumeAttached {
		return conflict("Volume %s is not attached", v.ID)
	}
	if srv, ok := st.servers.Get(v.Server); ok && v.Boot && srv.Status == StatusActive {
		return conflict("Volume %s is the boot volume of %s, which is running", v.ID, srv.ID)
	}
	v.pending = pendingDetach
	st.settling.Start(v.ID, func() { st.finishDetach(v) })
	return accepted(s.view(r).volume(v))
}

// finishDetach detaches v; if the Hypervisor fails, it stays attached.
func (st *state) finishDetach(v *Volume) {
	v.pending = ""
	if err := st.hypervisor(func(h simkit.Hypervisor) error { return h.Detach(v.disk(v.Server)) }); err != nil {
		return
	}
	v.Status, v.Server, v.Boot, v.UpdatedAt = VolumeDetached, "", false, st.now()
}

// resizeVolume serves POST /1.0/volumes/{id}/resize {from, to}: 202 with
// the volume at its new size at once ("Volumes can be resized instantly at
// any time"), attached or not, the Hypervisor told first (its failure is a
// 500 and no change). 409 when from is not the volume's size (stale) or
// the volume is being created or deleted; 422 when to is not larger
// ("cannot be decreased") or above MaxVolumeSize; 403 beyond the
// account's block storage.
func (s *Server) resizeVolume(r *http.Request) simkit.Response {
	st := s.st
	v, found := st.volumes.Get(r.PathValue("id"))
	if !found {
		return notFound()
	}
	var req resizeRequest
	if resp := decode(r, &req, false); resp != nil {
		return *resp
	}
	switch {
	case v.gone(), v.Status == StatusCreating, v.Status == StatusFailed:
		return conflict("Volume %s is %s", v.ID, v.Status)
	case req.From == nil || req.To == nil:
		return invalid("from and to: required")
	case *req.From != v.Size:
		return conflict("from: volume %s is %d MiB, not %d", v.ID, v.Size, *req.From)
	case *req.To <= v.Size:
		return invalid("to: a volume can only grow: %d MiB is not more than %d", *req.To, v.Size)
	case *req.To > MaxVolumeSize:
		return invalid("to: %d MiB is more than the maximum, %d", *req.To, MaxVolumeSize)
	case st.storageUsed()-v.Size+*req.To > s.opts.BlockStorageLimit:
		return limitReached("MiB of block storage", s.opts.BlockStorageLimit)
	}
	old := v.Size
	v.Size = *req.To
	if err := st.hypervisor(func(h simkit.Hypervisor) error { return h.Resize(v.disk(v.Server)) }); err != nil {
		v.Size = old
		return fail(http.StatusInternalServerError, "failed to resize volume: %v", err)
	}
	v.UpdatedAt = st.now()
	return accepted(s.view(r).volume(v))
}

// releaseVolumes is what a server's deletion does to its volumes: each
// attached (or being attached) is detached, or, with delete_with_server,
// deleted; the Hypervisor's errors are ignored (the server is gone either
// way).
func (st *state) releaseVolumes(server string) {
	for _, v := range st.volumes.All() {
		if v.attachingTo() == server {
			st.settling.Stop(v.ID)
			v.pending = ""
		}
		if v.Server != server {
			continue
		}
		st.settling.Stop(v.ID)
		_ = st.hypervisor(func(h simkit.Hypervisor) error { return h.Detach(v.disk(server)) })
		v.Status, v.Server, v.Boot, v.pending, v.UpdatedAt = VolumeDetached, "", false, "", st.now()
		if v.DeleteWithServer {
			_ = st.hypervisor(func(h simkit.Hypervisor) error { return h.Delete(v.disk("")) })
			v.Status = StatusDeleting
			st.startVolumeDeletion(v)
		}
	}
}
