package tritonsim

import (
	"net/http"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// actionParams are an action's parameters as CloudAPI's restify reads
// them (req.params): the query string's, then the JSON body's for the
// names the query leaves out. triton-go sends them in the query,
// node-triton in the body ({"action":"rename","name":...}).
func actionParams(r *http.Request) (map[string]string, *simkit.Response) {
	params := map[string]string{}
	for k, v := range r.URL.Query() {
		params[k] = v[0]
	}
	var body map[string]any
	if fail := decode(r, &body); fail != nil {
		return nil, fail
	}
	for k, v := range body {
		if _, set := params[k]; set {
			continue
		}
		s, isString := v.(string)
		if !isString {
			resp := invalid("%s must be a string", k)
			return nil, &resp
		}
		params[k] = s
	}
	return params, nil
}

// machineAction serves UpdateMachine, POST /{account}/machines/{id} with
// action= (in the query or the body): start, stop, reboot, rename, resize,
// enable_firewall, disable_firewall, enable_deletion_protection,
// disable_deletion_protection. 202, no body (sdc-cloudapi lib/machines.js).
// start, stop and reboot finish as the machine settles (on its reads, with
// time, or Advance); the others change the machine at once. Each leaves
// its audit record when its job finishes (job), but an enable or disable
// that changes nothing, for which CloudAPI queues no job.
func (s *Server) machineAction(r *http.Request) simkit.Response {
	m, fail := s.liveMachine(r)
	if fail != nil {
		return *fail
	}
	params, fail := actionParams(r)
	if fail != nil {
		return *fail
	}
	caller := callerOf(r)
	switch action := params["action"]; action {
	case "start", "stop", "reboot":
		s.st.powerAction(m, action, caller)
	case "rename":
		if fail := s.st.rename(m, params["name"]); fail != nil {
			return *fail
		}
		s.st.job(m.ID, auditRename, caller)
	case "resize":
		if fail := s.st.resize(m, params["package"]); fail != nil {
			return *fail
		}
		s.st.job(m.ID, auditResize, caller)
	case "enable_firewall", "disable_firewall":
		if on := action == "enable_firewall"; m.FirewallEnabled != on {
			m.FirewallEnabled = on
			s.st.job(m.ID, auditUnknown, caller)
		}
	case "enable_deletion_protection", "disable_deletion_protection":
		if on := action == "enable_deletion_protection"; m.DeletionProtection != on {
			m.DeletionProtection = on
			s.st.job(m.ID, action, caller)
		}
	case "":
		return failCode(http.StatusConflict, codeMissingParameter, "action is required")
	default:
		return invalid("%s is not a valid action", action)
	}
	s.st.touch(m)
	return accepted()
}

// powerAction starts, stops or reboots m: a stopped machine started (or
// rebooted) is stopped until it settles running, a running one stopped is
// stopping until it settles stopped, a running one rebooted stays running
// until its reboot settles. An action already pending finishes first, as
// VMAPI runs a machine's jobs one after the other. Starting a running
// machine or stopping a stopped one changes nothing.
func (st *state) powerAction(m *Machine, action string, caller AuditCaller) {
	st.finishPending(m.ID)
	switch {
	case action != "stop" && m.State == StateStopped:
		st.transition(m, StateStopped, StateRunning, action, caller)
	case action == "stop" && m.State != StateStopped:
		st.transition(m, StateStopping, StateStopped, action, caller)
	case action == "reboot":
		st.transition(m, m.State, m.State, action, caller)
	}
}

// rename gives m the name, as CloudAPI's rename checks it: required, a
// valid alias (at most 189 characters; 63 with CNS on, its names being
// DNS labels) no other machine has.
func (st *state) rename(m *Machine, name string) *simkit.Response {
	var resp simkit.Response
	switch {
	case name == "":
		resp = failCode(http.StatusConflict, codeMissingParameter, "New name must be specified")
	case len(name) > 189:
		resp = invalid("Name cannot be longer than 189 characters.")
	case st.cnsEnabled && len(name) > 63:
		resp = invalid("Name cannot be longer than 63 characters, because you have triton_cns_enabled set on your Account.")
	case !aliasPattern.MatchString(name) || st.nameTaken(name) && name != m.Name:
		resp = invalid("name %q is not valid or already taken", name)
	default:
		m.Name = name
		return nil
	}
	return &resp
}

// resize gives m the package (name or ID), as CloudAPI's resize checks
// it: required, known, and not for KVM machines.
func (st *state) resize(m *Machine, pkg string) *simkit.Response {
	p, found := st.pkg(pkg)
	var resp simkit.Response
	switch {
	case m.Brand == "kvm":
		resp = invalid("resize is not supported for KVM virtualmachines")
	case pkg == "":
		resp = failCode(http.StatusConflict, codeMissingParameter, "package must be specified")
	case !found:
		resp = invalid("%s is not a valid package", pkg)
	default:
		m.Package, m.Memory, m.Disk = p.Name, int(p.Memory), int(p.Disk)
		return nil
	}
	return &resp
}

// transition puts m in state now and settles it to final (on its reads,
// with time, or Advance), recording action in its audit then.
func (st *state) transition(m *Machine, now, final, action string, caller AuditCaller) {
	m.State = now
	st.settling.Start(m.ID, func() {
		m.State = final
		st.touch(m)
		st.record(m.ID, action, caller)
	})
}

// finishPending settles m's pending action, if any, now.
func (st *state) finishPending(id string) {
	for st.settling.Pending(id) {
		st.settling.Read(id)
	}
}
