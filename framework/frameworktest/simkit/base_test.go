package simkit

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// sim is the smallest simulator: one endpoint behind a rotating bearer
// token.
type sim struct {
	Base
	Bearer
}

func newSim(t *testing.T) *sim {
	s := &sim{}
	s.SetToken("tok-1")
	s.Base = NewBase(Options{Auth: s.Authenticate(Response{Status: http.StatusUnauthorized})},
		func() map[string]int { return map[string]int{"things": 1} })
	s.Handle("POST /things", func(*http.Request) Response { return NoContent(http.StatusCreated) })
	s.NotFound(func(r *http.Request) Response {
		return JSON(http.StatusNotFound, map[string]string{"path": r.URL.Path})
	})
	if s.URL() != "" {
		t.Errorf("URL before Start = %q", s.URL())
	}
	return StartForTest(t, s)
}

func (s *sim) post(t *testing.T, token string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"/things", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestBaseAndBearer(t *testing.T) {
	s := newSim(t)
	if got := s.post(t, "tok-1"); got != http.StatusCreated {
		t.Errorf("with the token: %d", got)
	}
	s.SetToken("tok-2")
	if got := s.post(t, "tok-1"); got != http.StatusUnauthorized {
		t.Errorf("with the old token after SetToken: %d", got)
	}
	if s.Writes() != 1 || s.Stats()["POST /things"] != 2 || len(s.Requests()) != 2 {
		t.Errorf("writes %d, stats %v, requests %v", s.Writes(), s.Stats(), s.Requests())
	}

	var state map[string]int
	if status := getJSON(t, s.URL()+"/_sim/state", &state); status != http.StatusOK || state["things"] != 1 {
		t.Errorf("/_sim/state: %d %v", status, state)
	}
	var stats map[string]any
	if status := getJSON(t, s.URL()+"/_sim/stats", &stats); status != http.StatusOK {
		t.Errorf("/_sim/stats: %d", status)
	}

	s.SetLatency(5 * time.Millisecond)
	s.post(t, "tok-2")
	if s.InjectedLatency() < 5*time.Millisecond {
		t.Errorf("InjectedLatency = %v after SetLatency", s.InjectedLatency())
	}
	s.ClearFaults()
	s.ResetConnections("POST")
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"/things", nil)
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Error("ResetConnections: the request got an answer")
	}
	if s.Handler() == nil {
		t.Error("no Handler")
	}
}

func TestBaseNotFound(t *testing.T) {
	s := newSim(t)
	var body map[string]string
	if status := getJSON(t, s.URL()+"/nope", &body); status != http.StatusNotFound || body["path"] != "/nope" {
		t.Errorf("GET /nope: %d %v", status, body)
	}
	if len(s.Stats()) != 0 || len(s.Requests()) != 0 {
		t.Errorf("the catch-all was counted: %v %v", s.Stats(), s.Requests())
	}
	if s.Kit().Served() != 0 {
		t.Errorf("Kit served %d", s.Kit().Served())
	}
}

// getJSON GETs url, decodes its JSON body into v and returns the status.
func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Errorf("GET %s: %v", url, err)
	}
	return resp.StatusCode
}
