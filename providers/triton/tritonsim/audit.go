package tritonsim

import (
	"fmt"
	"net"
	"net/http"
	"regexp"
	"slices"
	"time"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
)

// Audit actions, as CloudAPI's lib/audit.js translates VMAPI's jobs
// (translateAction): the job's task, or for an update its subtask (rename,
// resize) or what its payload changes. An update that changes none of
// those (enable_firewall, disable_firewall) is "unknown".
const (
	auditProvision        = "provision"
	auditStart            = "start"
	auditStop             = "stop"
	auditReboot           = "reboot"
	auditDestroy          = "destroy"
	auditRename           = "rename"
	auditResize           = "resize"
	auditUnknown          = "unknown"
	auditSetTags          = "set_tags"
	auditReplaceTags      = "replace_tags"
	auditRemoveTags       = "remove_tags"
	auditSetMetadata      = "set_metadata"
	auditReplaceMetadata  = "replace_metadata"
	auditRemoveMetadata   = "remove_metadata"
	auditEnableProtection = "enable_deletion_protection"
	auditDisableProtect   = "disable_deletion_protection"
)

// AuditRecord is one finished action on a machine, as MachineAudit serves
// it (sdc-cloudapi lib/audit.js translate; docs/index.md "MachineAudit").
type AuditRecord struct {
	Action string `json:"action"`
	// Success is "yes" or "no".
	Success string      `json:"success"`
	Time    time.Time   `json:"time"`
	Caller  AuditCaller `json:"caller"`
}

// AuditCaller is who asked for an action: CloudAPI's audit context
// (lib/app.js saveContext), type "signature" with the client's address
// and its key's keyId.
type AuditCaller struct {
	Type  string `json:"type"`
	IP    string `json:"ip,omitempty"`
	KeyID string `json:"keyId,omitempty"`
}

// auditJSON is a record as CloudAPI writes it: its time in milliseconds
// (a JavaScript Date), which clients compare with the Date header of the
// answer that started the action (node-triton's rebootInstance waits for
// a reboot record later than that).
type auditJSON struct {
	Action  string      `json:"action"`
	Success string      `json:"success"`
	Time    string      `json:"time"`
	Caller  AuditCaller `json:"caller"`
}

// keyIDParam is the keyId of an Authorization: Signature header.
var keyIDParam = regexp.MustCompile(`keyId="([^"]*)"`)

// callerOf is the audit caller of r: its signature's keyId and the
// client's address.
func callerOf(r *http.Request) AuditCaller {
	c := AuditCaller{Type: "signature"}
	if m := keyIDParam.FindStringSubmatch(r.Header.Get("Authorization")); m != nil {
		c.KeyID = m[1]
	}
	c.IP = r.RemoteAddr
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		c.IP = host
	}
	return c
}

// record records that action on machine id finished now, successfully.
func (st *state) record(id, action string, caller AuditCaller) {
	st.audits[id] = append(st.audits[id], AuditRecord{Action: action, Success: "yes",
		Time: st.opts.Now().UTC(), Caller: caller})
}

// job is the VMAPI job of an action on machine id whose change is made
// at once: its audit record appears when it finishes, after the answer,
// as a job's does (node-triton's `triton instance metadata set -w` waits
// for a record later than the answer), on the reads that settle a
// machine (GETs of it, list pages holding it, reads of its audit), with
// time, or on Advance.
func (st *state) job(id, action string, caller AuditCaller) {
	st.jobSeq++
	key := fmt.Sprintf("%s/%d", id, st.jobSeq)
	st.jobKeys[id] = append(st.jobKeys[id], key)
	st.jobs.Start(key, func() {
		st.jobKeys[id] = slices.DeleteFunc(st.jobKeys[id], func(k string) bool { return k == key })
		if len(st.jobKeys[id]) == 0 {
			delete(st.jobKeys, id)
		}
		st.record(id, action, caller)
	})
}

// read counts a read of machine id: of its pending state change and of
// its pending jobs.
func (st *state) read(id string) {
	st.settling.Read(id)
	for _, key := range slices.Clone(st.jobKeys[id]) {
		st.jobs.Read(key)
	}
}

// Audit returns a machine's finished actions, newest first, as
// MachineAudit serves them.
func (s *Server) Audit(id string) []AuditRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.st.audits[id])
	slices.Reverse(out)
	return out
}

// machineAudit serves MachineAudit (GET /{account}/machines/{id}/audit):
// the machine's finished actions, newest first; a job still running is
// not listed. A deleted machine keeps its records (destroy the newest)
// until it is purged. Reading it counts as a read of the machine's
// pending actions, which settle on their reads as on GETs of the machine.
func (s *Server) machineAudit(r *http.Request) simkit.Response {
	id := r.PathValue("id")
	if _, found := s.st.machines.Get(id); !found {
		return notFound("VM", id)
	}
	s.st.read(id)
	records := s.st.audits[id]
	out := make([]auditJSON, 0, len(records))
	for _, rec := range slices.Backward(records) {
		out = append(out, auditJSON{Action: rec.Action, Success: rec.Success,
			Time: rec.Time.Format("2006-01-02T15:04:05.000Z07:00"), Caller: rec.Caller})
	}
	return ok(out)
}
