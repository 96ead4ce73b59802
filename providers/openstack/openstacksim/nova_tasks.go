package openstacksim

import (
	"net/http"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Nova runs server actions asynchronously (compute API reference, "Stop
// Server (os-stop Action)", "Start Server (os-start Action)", "Delete
// Server": 202 or 204, the work done later): the server shows the task in
// OS-EXT-STS:task_state (powering-off, powering-on, deleting) with its
// status unchanged (nova/api/openstack/common.py maps those tasks to the
// vm_state's status), then SHUTOFF, ACTIVE or gone (404). The task
// settles as a pending load balancer does: on the ProvisioningReads-th
// read of the server (GET, or a /servers or /servers/detail page holding
// it), on Advance, or Common.SettleAfter after it started. Another
// os-stop or os-start meanwhile is 409 ("… while it is in task_state …",
// nova/compute/api.py check_instance_state); a delete takes over from
// the task, and a second delete is ignored (204), as Nova's is.

// Server task states Nova shows.
const (
	taskPoweringOff = "powering-off"
	taskPoweringOn  = "powering-on"
	taskDeleting    = "deleting"
)

// startTask runs task on v: it settles by applying done.
func (s *Server) startTask(v *serverRec, task string, done func()) {
	v.TaskState = task
	s.st.serverTasks.Start(v.ID, func() {
		v.TaskState = ""
		done()
	})
}

// stopTask ends v's task, if it has one, without its effect.
func (s *Server) stopTask(v *serverRec) {
	s.st.serverTasks.Stop(v.ID)
	v.TaskState = ""
}

// readServer counts a read of v; the ProvisioningReads-th read of a
// server with a task settles it. It reports whether v still exists.
func (s *Server) readServer(v *serverRec) bool {
	s.st.serverTasks.Read(v.ID)
	_, exists := s.st.servers.Get(v.ID)
	return exists
}

// stopServer is os-stop.
func (s *Server) stopServer(v *serverRec) response {
	if v.Status != StatusActive && v.Status != StatusError {
		return novaError(http.StatusConflict, "Cannot 'stop' instance %s while it is in vm_state %s", v.ID, vmState(v.Status))
	}
	if v.TaskState != "" {
		return novaError(http.StatusConflict, "Cannot 'stop' instance %s while it is in task_state %s", v.ID, v.TaskState)
	}
	s.startTask(v, taskPoweringOff, func() { v.Status = StatusShutoff })
	return simkit.NoContent(http.StatusAccepted)
}

// startServer is os-start.
func (s *Server) startServer(v *serverRec) response {
	if v.Status != StatusShutoff {
		return novaError(http.StatusConflict, "Cannot 'start' instance %s while it is in vm_state %s", v.ID, vmState(v.Status))
	}
	if v.TaskState != "" {
		return novaError(http.StatusConflict, "Cannot 'start' instance %s while it is in task_state %s", v.ID, v.TaskState)
	}
	s.startTask(v, taskPoweringOn, func() { v.Status = StatusActive })
	return simkit.NoContent(http.StatusAccepted)
}

// deleteServerAPI is DELETE /servers/{id}: 204, the server gone once the
// task settles.
func (s *Server) deleteServerAPI(r *http.Request, _ int) response {
	v, errResp := s.server(r)
	if errResp != nil {
		return *errResp
	}
	if v.TaskState != taskDeleting {
		s.startTask(v, taskDeleting, func() { s.deleteServer(v.ID) })
	}
	return noContent()
}
