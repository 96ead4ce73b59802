package ranchersim

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	rancher "github.com/rancher/go-rancher/v2"
)

// connect is a real go-rancher client for s, with the environment API
// key of its Options.
func connect(t *testing.T, s *Server) *rancher.RancherClient {
	t.Helper()
	env := s.Env(s.URL())
	return connectAs(t, env["CATTLE_URL"], env["CATTLE_ACCESS_KEY"], env["CATTLE_SECRET_KEY"])
}

func connectAs(t *testing.T, url, access, secret string) *rancher.RancherClient {
	t.Helper()
	c, err := rancher.NewRancherClient(&rancher.ClientOpts{Url: url, AccessKey: access, SecretKey: secret})
	if err != nil {
		t.Fatalf("NewRancherClient: %v", err)
	}
	return c
}

// setup starts a simulator and returns it with a connected client.
func setup(t *testing.T, opts Options) (*Server, *rancher.RancherClient) {
	t.Helper()
	s := NewServer(t, opts)
	return s, connect(t, s)
}

// wantAPIError fails unless err is a go-rancher *ApiError with status
// whose body holds each of want ("code=NotUnique", "fieldName=name").
func wantAPIError(t *testing.T, err error, status int, want ...string) {
	t.Helper()
	ae, ok := errors.AsType[*rancher.ApiError](err)
	if !ok {
		t.Fatalf("err = %v, want a *ApiError with status %d", err, status)
	}
	if ae.StatusCode != status {
		t.Fatalf("status = %d (%v), want %d", ae.StatusCode, err, status)
	}
	for _, w := range want {
		if !strings.Contains(ae.Body, w) {
			t.Errorf("error body %q lacks %q", ae.Body, w)
		}
	}
}

// filters is a ListOpts with the filters.
func filters(kv ...any) *rancher.ListOpts {
	o := rancher.NewListOpts()
	for i := 0; i+1 < len(kv); i += 2 {
		o.Filters[kv[i].(string)] = kv[i+1]
	}
	return o
}

// answer is a raw HTTP answer of the API: status, headers, JSON body.
type answer struct {
	status int
	header http.Header
	body   map[string]any
}

// call sends method path (under the project URL unless it starts with
// "/v2-beta" or "http") with body (raw, "" for none) as the environment's
// key, and decodes the answer.
func call(t *testing.T, s *Server, method, path, body string) answer {
	t.Helper()
	env := s.Env(s.URL())
	return callAs(t, env["CATTLE_ACCESS_KEY"], env["CATTLE_SECRET_KEY"], method, apiURL(s, path), body)
}

// apiURL is path's absolute URL: under the project URL unless absolute
// or under /v2-beta.
func apiURL(s *Server, path string) string {
	switch {
	case strings.HasPrefix(path, "http"):
		return path
	case strings.HasPrefix(path, APIVersion):
		return s.URL() + path
	}
	return s.ProjectURL(s.URL()) + path
}

// callAs is call with the key access:secret ("" for no credentials) and
// an absolute URL.
func callAs(t *testing.T, access, secret, method, u, body string) answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	if access != "" {
		req.SetBasicAuth(access, secret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, header: resp.Header}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 {
		if err := json.Unmarshal(data, &a.body); err != nil {
			t.Fatalf("%s %s: %s, body not a JSON object: %q", method, u, resp.Status, data)
		}
	}
	return a
}

// dataIDs are the IDs of a collection answer's data, in order.
func (a answer) dataIDs() []string {
	var ids []string
	data, _ := a.body["data"].([]any)
	for _, d := range data {
		doc, _ := d.(map[string]any)
		id, _ := doc["id"].(string)
		ids = append(ids, id)
	}
	return ids
}
