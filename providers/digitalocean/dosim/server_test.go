package dosim

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

func TestAccountAndRateHeaders(t *testing.T) {
	s, c := setup(t, Options{})
	acct, resp, err := c.Account.Get(ctx())
	if err != nil {
		t.Fatal(err)
	}
	if acct.Status != "active" || acct.UUID == "" {
		t.Errorf("account = %+v", acct)
	}
	if resp.Limit != RateLimit || resp.Remaining != RateLimit-1 || resp.Reset.Before(time.Now()) {
		t.Errorf("rate = %+v", resp.Rate)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type = %q", ct)
	}
	if _, resp, _ = c.Account.Get(ctx()); resp.Remaining != RateLimit-2 {
		t.Errorf("remaining after 2 requests = %d", resp.Remaining)
	}
	if got := s.Stats()["GET /v2/account"]; got != 2 {
		t.Errorf("stats = %v", s.Stats())
	}
}

func TestUnauthorized(t *testing.T) {
	s, _ := setup(t, Options{Token: "right"})
	_, _, err := newClient(t, s, "wrong", 0).Account.Get(ctx())
	er := errorResponse(t, err, http.StatusUnauthorized)
	if er.Message != "Unable to authenticate you." || er.RequestID == "" || er.RequestID != er.Response.Header.Get("X-Request-Id") {
		t.Errorf("error = %+v", er)
	}
	if er.Response.Header.Get("RateLimit-Limit") == "" {
		t.Error("401 without rate-limit headers")
	}

	resp, err := http.Get(s.URL() + "/v2/droplets")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body apiError
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusUnauthorized || body.ID != "unauthorized" {
		t.Errorf("no token: %d %+v", resp.StatusCode, body)
	}

	s.SetToken("rotated")
	if _, _, err := newClient(t, s, "right", 0).Account.Get(ctx()); err == nil {
		t.Error("old token accepted after SetToken")
	}
	if _, _, err := newClient(t, s, "rotated", 0).Account.Get(ctx()); err != nil {
		t.Error(err)
	}
	if s.Writes() != 0 {
		t.Errorf("writes = %d", s.Writes())
	}
}

func TestUnknownEndpoint(t *testing.T) {
	s, _ := setup(t, Options{})
	resp, err := http.Get(s.URL() + "/v2/nope")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Content-Type") == "" || resp.Header.Get("RateLimit-Remaining") == "" {
		t.Errorf("status %d headers %v", resp.StatusCode, resp.Header)
	}
}

func TestSimEndpoints(t *testing.T) {
	s, c := setup(t, Options{})
	s.AddDroplet(Droplet{Name: "a"})
	if _, _, err := c.Droplets.List(ctx(), nil); err != nil {
		t.Fatal(err)
	}
	var stats struct {
		Requests   int            `json:"requests"`
		Operations map[string]int `json:"operations"`
	}
	getJSON(t, s.URL()+"/_sim/stats", &stats)
	if stats.Requests != 1 || stats.Operations["GET /v2/droplets"] != 1 {
		t.Errorf("stats = %+v", stats)
	}
	var snap Snapshot
	getJSON(t, s.URL()+"/_sim/state", &snap)
	if len(snap.Droplets) != 1 || snap.Droplets[0].Name != "a" {
		t.Errorf("state = %+v", snap)
	}
	if got := s.Requests(); len(got) != 1 || got[0].Op != "GET /v2/droplets" || got[0].Status != 200 {
		t.Errorf("requests = %+v", got)
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

func TestEnv(t *testing.T) {
	s := New(Options{Token: "tok"})
	env := s.Env("http://x")
	if env["DO_ACCESS_TOKEN"] != "tok" || env["DO_OVERRIDE_URL"] != "http://x" || env["REGION"] != "nyc3" {
		t.Errorf("env = %v", env)
	}
}
