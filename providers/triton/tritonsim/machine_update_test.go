package tritonsim

import (
	"net/http"
	"strings"
	"testing"
)

// TestActionsTakeJSONBody sends each action as node-triton does
// (lib/cloudapi2.js _doMachine, renameMachine, resizeMachine): POST
// /{account}/machines/{id} with the action and its parameters in a JSON
// body, which CloudAPI reads as it reads the query (restify's req.params;
// sdc-cloudapi lib/machines.js).
func TestActionsTakeJSONBody(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: 1})
	m := s.AddMachine(Machine{Name: "web-1"})
	path := "/" + s.Account() + "/machines/" + m.ID
	pkg := s.State().Packages[1]
	for _, step := range []struct {
		body  map[string]string
		check func(Machine) bool
	}{
		{map[string]string{"action": "stop"}, func(m Machine) bool { return m.State == StateStopped }},
		{map[string]string{"action": "start"}, func(m Machine) bool { return m.State == StateRunning }},
		{map[string]string{"action": "reboot"}, func(m Machine) bool { return m.State == StateRunning }},
		{map[string]string{"action": "rename", "name": "web-2"}, func(m Machine) bool { return m.Name == "web-2" }},
		{map[string]string{"action": "resize", "package": pkg.ID}, func(m Machine) bool { return m.Package == pkg.Name && m.Memory == int(pkg.Memory) }},
		{map[string]string{"action": "enable_firewall"}, func(m Machine) bool { return m.FirewallEnabled }},
		{map[string]string{"action": "disable_firewall"}, func(m Machine) bool { return !m.FirewallEnabled }},
		{map[string]string{"action": "enable_deletion_protection"}, func(m Machine) bool { return m.DeletionProtection }},
		{map[string]string{"action": "disable_deletion_protection"}, func(m Machine) bool { return !m.DeletionProtection }},
	} {
		resp, err := call(t, c, http.MethodPost, path, step.body, nil)
		if err != nil || resp.StatusCode != http.StatusAccepted {
			t.Fatalf("%v: %v, %v", step.body, resp, err)
		}
		s.Advance()
		if got, _ := s.Machine(m.ID); !step.check(got) {
			t.Fatalf("after %v: %+v", step.body, got)
		}
	}
}

// TestActionRefusals: the answers of sdc-cloudapi lib/machines.js for an
// action it cannot take, whether its parameters come in the query or the
// body.
func TestActionRefusals(t *testing.T) {
	s, c := setup(t, Options{})
	m := s.AddMachine(Machine{Name: "web-1"})
	path := "/" + s.Account() + "/machines/" + m.ID
	for name, tc := range map[string]struct {
		body   map[string]string
		status int
		code   string
	}{
		"no action":          {map[string]string{}, http.StatusConflict, "MissingParameter"},
		"unknown action":     {map[string]string{"action": "explode"}, http.StatusConflict, "InvalidArgument"},
		"rename, no name":    {map[string]string{"action": "rename"}, http.StatusConflict, "MissingParameter"},
		"rename, over 63":    {map[string]string{"action": "rename", "name": strings.Repeat("a", 64)}, http.StatusConflict, "InvalidArgument"},
		"resize, no package": {map[string]string{"action": "resize"}, http.StatusConflict, "MissingParameter"},
		"resize, unknown":    {map[string]string{"action": "resize", "package": "g9-huge"}, http.StatusConflict, "InvalidArgument"},
	} {
		_, err := call(t, c, http.MethodPost, path, tc.body, nil)
		t.Run(name, func(t *testing.T) { wantAPIError(t, err, tc.status, tc.code) })
	}
	if got, _ := s.Machine(m.ID); got.Name != "web-1" || got.Package != DefaultPackage {
		t.Fatalf("refused actions changed the machine: %+v", got)
	}
}
