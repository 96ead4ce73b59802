package ranchersim

import (
	"errors"
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
