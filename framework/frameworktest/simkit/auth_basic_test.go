package simkit

import (
	"net/http"
	"net/url"
	"testing"
)

// TestBasicAuth: Rancher-style API keys in HTTP Basic, sent by net/http's
// own client, rotated and revoked.
func TestBasicAuth(t *testing.T) {
	var keys BasicAuth
	keys.Set("ACCESSKEY1", "s3cret")
	kit := New(Options{Auth: func(r *http.Request) *Response {
		if _, ok := keys.Check(r); ok {
			return nil
		}
		return &Response{Status: http.StatusUnauthorized, Body: map[string]string{"code": "Unauthorized"},
			Header: http.Header{"Www-Authenticate": {BasicChallenge("Rancher")}}}
	}})
	mux := http.NewServeMux()
	kit.Handle(mux, "GET /v2-beta", func(*http.Request) Response { return JSON(http.StatusOK, map[string]string{}) })
	l := NewListener(mux)
	StartForTest(t, &l)

	get := func(user, password string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, l.URL()+"/v2-beta", nil)
		if user != "" {
			req.SetBasicAuth(user, password)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := get("ACCESSKEY1", "s3cret"); r.StatusCode != http.StatusOK {
		t.Errorf("right key: %d", r.StatusCode)
	}
	// Credentials in the URL are sent as Basic too, as some clients do.
	u, _ := url.Parse(l.URL() + "/v2-beta")
	u.User = url.UserPassword("ACCESSKEY1", "s3cret")
	if r, err := http.Get(u.String()); err != nil || r.StatusCode != http.StatusOK {
		t.Errorf("key in the URL: %v %v", r, err)
	} else {
		r.Body.Close()
	}
	for name, tc := range map[string][2]string{
		"no credentials": {"", ""}, "wrong secret": {"ACCESSKEY1", "guess"}, "unknown key": {"ACCESSKEY2", "s3cret"},
	} {
		if r := get(tc[0], tc[1]); r.StatusCode != http.StatusUnauthorized || r.Header.Get("WWW-Authenticate") != `Basic realm="Rancher"` {
			t.Errorf("%s: %d %q", name, r.StatusCode, r.Header.Get("WWW-Authenticate"))
		}
	}
	keys.Set("ACCESSKEY1", "rotated")
	if r := get("ACCESSKEY1", "s3cret"); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("old secret after rotation: %d", r.StatusCode)
	}
	if r := get("ACCESSKEY1", "rotated"); r.StatusCode != http.StatusOK {
		t.Errorf("new secret: %d", r.StatusCode)
	}
	keys.Delete("ACCESSKEY1")
	if r := get("ACCESSKEY1", "rotated"); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("revoked key: %d", r.StatusCode)
	}
}
