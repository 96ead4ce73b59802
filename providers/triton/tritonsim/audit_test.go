package tritonsim

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/joyent/triton-go/compute"
)

// auditView is a MachineAudit record as a client decodes it.
type auditView struct {
	Action  string      `json:"action"`
	Success string      `json:"success"`
	Time    string      `json:"time"`
	Caller  AuditCaller `json:"caller"`
}

func readAudit(t *testing.T, s *Server, c clients, id string) []auditView {
	t.Helper()
	var out []auditView
	if _, err := call(t, c, http.MethodGet, "/"+s.Account()+"/machines/"+id+"/audit", nil, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func actions(records []auditView) []string {
	out := []string{}
	for _, r := range records {
		out = append(out, r.Action)
	}
	return out
}

// TestMachineAudit: GET /:login/machines/:id/audit lists the machine's
// finished actions, newest first, each {action, success: "yes", time (ISO
// 8601 with milliseconds), caller {type: signature, ip, keyId}}; a job
// still running is not listed (sdc-cloudapi lib/audit.js list, which
// drops running and queued jobs; docs/index.md "MachineAudit"). A reboot's
// record is later than the Date of the answer that started it, which
// node-triton's `triton instance reboot --wait` waits for
// (lib/tritonapi.js rebootInstance); a metadata change's is later than
// the answer too (_waitForInstanceMetadataChanges).
func TestMachineAudit(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 2})
	inst := c.compute.Instances()
	m, err := inst.Create(ctx(), &compute.CreateInstanceInput{Name: "web-1", Package: DefaultPackage, Image: imageID(t, c, "base-64-lts")})
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(readAudit(t, s, c, m.ID)); len(got) != 0 {
		t.Fatalf("audit while provisioning = %v, want none (its job is running)", got)
	}
	// The second read settles it: provisioned.
	records := readAudit(t, s, c, m.ID)
	if !slices.Equal(actions(records), []string{"provision"}) {
		t.Fatalf("audit after provisioning = %v", actions(records))
	}
	r := records[0]
	keyID := "/" + s.Account() + "/keys/" + s.KeyFingerprint()
	if r.Success != "yes" || r.Caller != (AuditCaller{Type: "signature", IP: "127.0.0.1", KeyID: keyID}) {
		t.Fatalf("provision record %+v", r)
	}
	if _, err := time.Parse("2006-01-02T15:04:05.000Z", r.Time); err != nil {
		t.Fatalf("time %q is not ISO 8601 UTC with milliseconds: %v", r.Time, err)
	}

	resp, err := call(t, c, http.MethodPost, "/"+s.Account()+"/machines/"+m.ID, map[string]string{"action": "reboot"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	answered, err := http.ParseTime(resp.Header.Get("Date"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := call(t, c, http.MethodPost, "/"+s.Account()+"/machines/"+m.ID+"/metadata", map[string]string{"k": "v"}, nil); err != nil {
		t.Fatal(err)
	}
	if got := actions(readAudit(t, s, c, m.ID)); !slices.Equal(got, []string{"provision"}) {
		t.Fatalf("audit while the reboot and the metadata jobs run = %v", got)
	}
	records = readAudit(t, s, c, m.ID)
	if !slices.Equal(actions(records), []string{"set_metadata", "reboot", "provision"}) {
		t.Fatalf("audit after reboot and metadata = %v, want newest first", actions(records))
	}
	if rebooted, _ := time.Parse(time.RFC3339Nano, records[1].Time); !rebooted.After(answered) {
		t.Fatalf("reboot finished at %s, not after the answer's Date %s", records[1].Time, answered)
	}

	if err := inst.Delete(ctx(), &compute.DeleteInstanceInput{ID: m.ID}); err != nil {
		t.Fatal(err)
	}
	s.Advance()
	if got := actions(readAudit(t, s, c, m.ID)); got[0] != "destroy" {
		t.Fatalf("audit of the deleted machine = %v, want destroy first", got)
	}
	s.Purge(m.ID)
	_, err = call(t, c, http.MethodGet, "/"+s.Account()+"/machines/"+m.ID+"/audit", nil, nil)
	wantAPIError(t, err, http.StatusNotFound, "ResourceNotFound")
}

// TestAuditActions: each action's record is named as CloudAPI's
// translateAction names its VMAPI job (sdc-cloudapi lib/audit.js): an
// update by its subtask (rename, resize) or its payload (set_tags,
// replace_tags, remove_tags, *_metadata, *_deletion_protection), a
// firewall change "unknown"; an enable that changes nothing queues no job.
func TestAuditActions(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 1})
	m := s.AddMachine(Machine{Name: "web-1", Tags: map[string]any{"a": "1"}, Metadata: map[string]string{"m": "1"}})
	base := "/" + s.Account() + "/machines/" + m.ID
	for _, step := range []struct {
		method, path string
		body         any
	}{
		{http.MethodPost, base, map[string]string{"action": "stop"}},
		{http.MethodPost, base, map[string]string{"action": "start"}},
		{http.MethodPost, base, map[string]string{"action": "rename", "name": "web-2"}},
		{http.MethodPost, base, map[string]string{"action": "resize", "package": "g4-highcpu-2G"}},
		{http.MethodPost, base, map[string]string{"action": "enable_firewall"}},
		{http.MethodPost, base, map[string]string{"action": "enable_firewall"}}, // no change, no job
		{http.MethodPost, base, map[string]string{"action": "enable_deletion_protection"}},
		{http.MethodPost, base, map[string]string{"action": "disable_deletion_protection"}},
		{http.MethodPost, base + "/tags", map[string]string{"b": "2"}},
		{http.MethodPut, base + "/tags", map[string]string{"c": "3"}},
		{http.MethodDelete, base + "/tags/c", nil},
		{http.MethodPost, base + "/metadata", map[string]string{"n": "2"}},
		{http.MethodDelete, base + "/metadata/n", nil},
		{http.MethodDelete, base + "/metadata", nil},
	} {
		if _, err := call(t, c, step.method, step.path, step.body, nil); err != nil {
			t.Fatalf("%s %s: %v", step.method, step.path, err)
		}
		s.Advance()
	}
	got := actions(readAudit(t, s, c, m.ID))
	slices.Reverse(got)
	want := []string{"stop", "start", "rename", "resize", "unknown", "enable_deletion_protection", "disable_deletion_protection",
		"set_tags", "replace_tags", "remove_tags", "set_metadata", "remove_metadata", "replace_metadata"}
	if !slices.Equal(got, want) {
		t.Fatalf("audit, oldest first = %v, want %v", got, want)
	}
	if len(s.Audit(m.ID)) != len(want) || s.Audit(m.ID)[0].Action != "replace_metadata" {
		t.Fatalf("Audit = %+v", s.Audit(m.ID))
	}
}
