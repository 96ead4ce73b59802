package openstacksim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"testing"
)

// TestRequestIDs: every answer of Keystone, Nova, Neutron, Octavia and
// Glance carries x-openstack-request-id, "req-" and a UUID, new for each
// request (oslo_middleware/request_id.py; Glance's context middleware),
// Nova's also as x-compute-request-id (nova/api/compute_req_id.py); the
// version roots of Nova and Neutron, outside that middleware in their
// api-paste.ini, carry none.
func TestRequestIDs(t *testing.T) {
	s := NewServer(t, Options{})
	c, _ := login(t, s)
	format := regexp.MustCompile(`^req-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	send := func(method, url, token string, body any) *http.Response {
		t.Helper()
		data, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, url, bytes.NewReader(data))
		if token != "" {
			req.Header.Set("X-Auth-Token", token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp
	}
	seen := map[string]bool{}
	for _, req := range []struct {
		method, path, token string
		body                any
		compute             bool
	}{
		{method: "GET", path: identityPrefix + "/"},
		{method: "POST", path: identityPrefix + "/v3/auth/tokens", body: map[string]any{"auth": map[string]any{}}},
		{method: "GET", path: identityPrefix + "/v3/auth/tokens", token: c.token},
		{method: "GET", path: computeV21, compute: true},
		{method: "GET", path: computeV21 + "/servers/detail", token: c.token, compute: true},
		{method: "GET", path: computeV21 + "/servers/detail", compute: true}, // 401
		{method: "GET", path: computeV21 + "/servers/missing", token: c.token, compute: true},
		{method: "GET", path: networkV2 + "/networks", token: c.token},
		{method: "GET", path: networkV2 + "/ports/missing", token: c.token},
		{method: "GET", path: networkV2 + "/no-such-collection", token: c.token},
		{method: "GET", path: lbPrefix + "/"},
		{method: "GET", path: lbaas + "/loadbalancers", token: c.token},
		{method: "GET", path: lbPrefix + "/v2/lbaas/loadbalancers", token: c.token},
		{method: "GET", path: imagePrefix + "/"},
		{method: "GET", path: imageV2 + "/images", token: c.token},
	} {
		resp := send(req.method, s.URL()+req.path, req.token, req.body)
		id := resp.Header.Get("X-Openstack-Request-Id")
		if !format.MatchString(id) || seen[id] {
			t.Errorf("%s %s (%d): request ID %q", req.method, req.path, resp.StatusCode, id)
		}
		seen[id] = true
		if compute := resp.Header.Get("X-Compute-Request-Id"); req.compute && compute != id || !req.compute && compute != "" {
			t.Errorf("%s %s: X-Compute-Request-Id %q, X-Openstack-Request-Id %q", req.method, req.path, compute, id)
		}
	}
	for _, p := range []string{computePrefix + "/", networkPrefix + "/"} {
		if resp := send("GET", s.URL()+p, "", nil); resp.StatusCode >= 400 || resp.Header.Get("X-Openstack-Request-Id") != "" {
			t.Errorf("GET %s: %d, request ID %q, want none", p, resp.StatusCode, resp.Header.Get("X-Openstack-Request-Id"))
		}
	}
}
