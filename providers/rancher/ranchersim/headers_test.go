package ranchersim

import (
	"net/http"
	"testing"
)

// TestHeadersOnEveryAnswer: Cattle sends X-Rancher-Version
// (ApiRequestFilter.addVersionHeader) and X-API-Schemas
// (ApiRequestFilterDelegate.doFilter, set before any handler runs) on
// every API answer, errors and 401s included, and X-API-Account-Id with
// the user, kind and name of the key's account once the key is
// authenticated (ApiAuthenticator.saveInContext). go-rancher reads
// X-API-Schemas from whatever URL it is given, such as the Rancher CLI's
// <project>/schemas/schemas.
func TestHeadersOnEveryAnswer(t *testing.T) {
	s := NewServer(t, Options{})
	h := s.AddHost(Host{Hostname: "a"})
	schemas := s.ProjectURL(s.URL()) + "/schemas"
	check := func(what string, a answer, authenticated bool) {
		t.Helper()
		if got := a.header.Get("X-API-Schemas"); got != schemas {
			t.Errorf("%s (%d): X-API-Schemas %q, want %q", what, a.status, got, schemas)
		}
		if got := a.header.Get("X-Rancher-Version"); got != RancherVersion {
			t.Errorf("%s (%d): X-Rancher-Version %q, want %q", what, a.status, got, RancherVersion)
		}
		want := map[string]string{"X-API-Account-Id": DefaultProject, "X-API-User-Id": DefaultProject,
			"X-API-Account-Kind": "project", "X-API-Account-Name": projectName}
		for k, v := range want {
			if !authenticated {
				v = ""
			}
			if got := a.header.Get(k); got != v {
				t.Errorf("%s (%d): %s %q, want %q", what, a.status, k, got, v)
			}
		}
	}
	check("GET /hosts", call(t, s, http.MethodGet, "/hosts", ""), true)
	check("GET /hosts/{id}", call(t, s, http.MethodGet, "/hosts/"+h.ID, ""), true)
	check("GET /schemas/schemas", call(t, s, http.MethodGet, "/schemas/schemas", ""), true)
	check("GET /v2-beta", call(t, s, http.MethodGet, "/v2-beta", ""), true)
	check("404", call(t, s, http.MethodGet, "/hosts/1h999", ""), true)
	check("unknown path", call(t, s, http.MethodGet, "/volumes", ""), true)
	check("405", call(t, s, http.MethodDelete, "/settings/"+SettingLBImage, ""), true)
	check("401", callAs(t, "", "", http.MethodGet, s.ProjectURL(s.URL())+"/hosts", ""), false)
	check("camel-case path", call(t, s, http.MethodGet, "/ipAddresses", ""), true)
	defer s.Fail(http.StatusServiceUnavailable, Operations["hosts.list"])()
	check("injected 503", call(t, s, http.MethodGet, "/hosts", ""), true)
}
