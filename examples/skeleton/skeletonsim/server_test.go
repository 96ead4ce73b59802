package skeletonsim_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ccmkit/ccmkit/examples/skeleton/skeletonsim"
)

// client is a bare HTTP client for the simulator's API.
type client struct {
	t     *testing.T
	url   string
	token string
	http  *http.Client
}

func newClient(t *testing.T, sim *skeletonsim.Server) *client {
	return &client{t: t, url: sim.URL(), token: sim.Token(), http: &http.Client{}}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// errorCode returns the "code" of an error body.
func (r response) errorCode() string {
	var e struct {
		Error struct{ Code, Message string }
	}
	_ = json.Unmarshal(r.body, &e)
	return e.Error.Code
}

func (r response) errorMessage() string {
	var e struct {
		Error struct{ Code, Message string }
	}
	_ = json.Unmarshal(r.body, &e)
	return e.Error.Message
}

func (r response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decoding %s: %v", r.body, err)
	}
}

// do sends a request; body is JSON-encoded unless it is a string.
func (c *client) do(method, path string, body any) response {
	c.t.Helper()
	resp, err := c.send(method, path, body)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

func (c *client) send(method, path string, body any) (response, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return response{}, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, c.url+path, rd)
	if err != nil {
		return response{}, err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: data}, err
}

func TestAuth(t *testing.T) {
	sim := skeletonsim.NewServer(t, skeletonsim.Options{Token: "s3cret"})
	tests := []struct {
		name       string
		token      string
		path       string
		wantStatus int
		wantCode   string
	}{
		{name: "no token", path: "/v1/instances", wantStatus: 401, wantCode: "unauthorized"},
		{name: "wrong token", token: "nope", path: "/v1/instances", wantStatus: 401, wantCode: "unauthorized"},
		{name: "right token", token: "s3cret", path: "/v1/instances", wantStatus: 200},
		{name: "sim endpoints need none", path: "/_sim/state", wantStatus: 200},
		{name: "unknown endpoint", token: "s3cret", path: "/v2/nothing", wantStatus: 404, wantCode: "unknown_endpoint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, sim)
			c.token = tt.token
			resp := c.do("GET", tt.path, nil)
			if resp.status != tt.wantStatus {
				t.Fatalf("status = %d, want %d (%s)", resp.status, tt.wantStatus, resp.body)
			}
			if got := resp.header.Get("Content-Type"); got != "application/json" {
				t.Errorf("Content-Type = %q, want application/json", got)
			}
			if tt.wantCode != "" && resp.errorCode() != tt.wantCode {
				t.Errorf("error code = %q, want %q", resp.errorCode(), tt.wantCode)
			}
		})
	}
}

func TestSetTokenRotates(t *testing.T) {
	sim := skeletonsim.NewServer(t, skeletonsim.Options{Token: "old"})
	sim.SetToken("new")
	c := newClient(t, sim)
	for token, want := range map[string]int{"old": 401, "new": 200} {
		c.token = token
		if got := c.do("GET", "/v1/instances", nil).status; got != want {
			t.Errorf("token %q: status %d, want %d", token, got, want)
		}
	}
}

func TestInstancesPagination(t *testing.T) {
	sim := skeletonsim.NewServer(t, skeletonsim.Options{PerPage: 2})
	for i := range 5 {
		sim.AddInstance(skeletonsim.Instance{Name: fmt.Sprintf("node-%d", i)})
	}
	type meta struct {
		Page, PerPage, Total, NextPage int
	}
	tests := []struct {
		query    string
		wantIDs  []string
		wantMeta meta
	}{
		{"", []string{"i-000001", "i-000002"}, meta{1, 2, 5, 2}},
		{"?page=3", []string{"i-000005"}, meta{3, 2, 5, 0}},
		{"?page=2&per_page=3", []string{"i-000004", "i-000005"}, meta{2, 3, 5, 0}},
		{"?per_page=500", []string{"i-000001", "i-000002", "i-000003", "i-000004", "i-000005"}, meta{1, 200, 5, 0}},
		{"?page=9223372036854775807", []string{}, meta{9223372036854775807, 2, 5, 0}},
	}
	c := newClient(t, sim)
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			var got struct {
				Instances []skeletonsim.Instance
				Meta      struct {
					Page     int `json:"page"`
					PerPage  int `json:"per_page"`
					Total    int `json:"total"`
					NextPage int `json:"next_page"`
				}
			}
			c.do("GET", "/v1/instances"+tt.query, nil).decode(t, &got)
			ids := []string{}
			for _, inst := range got.Instances {
				ids = append(ids, inst.ID)
			}
			if diff := cmp.Diff(tt.wantIDs, ids); diff != "" {
				t.Errorf("IDs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantMeta, meta(got.Meta)); diff != "" {
				t.Errorf("meta (-want +got):\n%s", diff)
			}
		})
	}
	for _, bad := range []string{"?page=0", "?page=x", "?per_page=-1"} {
		if resp := c.do("GET", "/v1/instances"+bad, nil); resp.status != 400 || resp.errorCode() != "bad_request" {
			t.Errorf("%s: got %d %s, want 400 bad_request", bad, resp.status, resp.body)
		}
	}
}

func TestGetInstance(t *testing.T) {
	sim := skeletonsim.NewServer(t, skeletonsim.Options{})
	want := sim.AddInstance(skeletonsim.Instance{Name: "node-1", Type: "s-2", PrivateIPv4: "10.0.0.2"})
	c := newClient(t, sim)

	var got struct{ Instance skeletonsim.Instance }
	c.do("GET", "/v1/instances/"+want.ID, nil).decode(t, &got)
	if diff := cmp.Diff(want, got.Instance); diff != "" {
		t.Errorf("instance (-want +got):\n%s", diff)
	}
	if want.Status != skeletonsim.StatusRunning {
		t.Errorf("default status = %q, want running", want.Status)
	}

	sim.DeleteInstance(want.ID)
	if resp := c.do("GET", "/v1/instances/"+want.ID, nil); resp.status != 404 || resp.errorCode() != "not_found" {
		t.Errorf("after delete: %d %s, want 404 not_found", resp.status, resp.body)
	}
}

func TestStatsAndWrites(t *testing.T) {
	sim := skeletonsim.NewServer(t, skeletonsim.Options{})
	inst := sim.AddInstance(skeletonsim.Instance{Name: "n"})
	c := newClient(t, sim)
	c.do("GET", "/v1/instances", nil)
	c.do("POST", "/v1/routes", map[string]any{"destination_cidr": "10.244.0.0/24", "target_instance_id": inst.ID})
	c.do("DELETE", "/v1/routes/r-000001", nil)
	c.do("DELETE", "/v1/routes/r-000001", nil) // 404, but served: a write
	restore := sim.Fail(500)
	c.do("POST", "/v1/routes", map[string]any{}) // faulted: not a write
	restore()

	wantStats := map[string]int{"GET /v1/instances": 1, "POST /v1/routes": 2, "DELETE /v1/routes/{id}": 2}
	if diff := cmp.Diff(wantStats, sim.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
	if got := sim.Writes(); got != 3 {
		t.Errorf("Writes = %d, want 3", got)
	}

	var stats struct {
		Requests   int            `json:"requests"`
		Writes     int            `json:"writes"`
		Operations map[string]int `json:"operations"`
	}
	c.do("GET", "/_sim/stats", nil).decode(t, &stats)
	if stats.Requests != 5 || stats.Writes != 3 || !cmp.Equal(stats.Operations, wantStats) {
		t.Errorf("/_sim/stats = %+v", stats)
	}
	if got := len(sim.Requests()); got != 5 {
		t.Errorf("request log has %d entries, want 5", got)
	}
}
