package simkit

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

func TestRespondLockAndWritesAnyStatus(t *testing.T) {
	var mu sync.Mutex
	held := false
	k := New(Options{
		Lock:            &mu,
		WritesAnyStatus: true,
		Respond: func(_ *http.Request, op string, resp Response) Response {
			resp.Header = http.Header{"X-Op": {op}, "Content-Type": {"application/json; charset=utf-8"}}
			return resp
		},
	})
	mux := http.NewServeMux()
	k.Handle(mux, "POST /x", func(*http.Request) Response {
		held = !mu.TryLock()
		return JSON(http.StatusNotFound, map[string]string{})
	})
	l := NewListener(mux)
	StartForTest(t, &l)
	resp, err := http.Post(l.URL()+"/x", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !held {
		t.Error("handler ran without Options.Lock")
	}
	if resp.Header.Get("X-Op") != "POST /x" || resp.Header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Errorf("headers %v", resp.Header)
	}
	if k.Writes() != 1 {
		t.Errorf("writes = %d, want 1 with WritesAnyStatus", k.Writes())
	}
	k.InjectAll(Fault{Reset: true}, "GET /y", "POST /x")
	if _, err := http.Post(l.URL()+"/x", "application/json", nil); err == nil {
		t.Error("InjectAll: no reset")
	}
}

func TestDecodeStrict(t *testing.T) {
	var v struct{ A int }
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"A":1,"B":2}`))
	if err := Decode(r, &v); err != nil || v.A != 1 {
		t.Errorf("Decode: %v %+v", err, v)
	}
	r = httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"A":1,"B":2}`))
	if err := DecodeStrict(r, &v); err == nil {
		t.Error("DecodeStrict accepted an unknown field")
	}
}

func TestHelpers(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Authorization", "Bearer tok")
	if !HasBearer(r, "tok") || HasBearer(r, "other") || HasBearer(r, "") {
		t.Error("HasBearer")
	}
	if n, err := PositiveInt("", 7); n != 7 || err != nil {
		t.Errorf("PositiveInt default: %d %v", n, err)
	}
	if _, err := PositiveInt("0", 7); err == nil {
		t.Error("PositiveInt(0) succeeded")
	}
	ops := Operations{Names: map[string]string{"x.get": "GET /x"}, IsEndpoint: func(op string) bool { return op == "GET /y" }}
	for op, want := range map[string]string{"*": "", "x.get": "GET /x", "GET /y": "GET /y"} {
		if got, ok := ops.Resolve(op); !ok || got != want {
			t.Errorf("Resolve(%q) = %q, %v", op, got, ok)
		}
	}
	if _, ok := ops.Resolve("nope"); ok {
		t.Error("Resolve(nope) succeeded")
	}
}

func TestLoadScenario(t *testing.T) {
	type sc struct {
		Name string `json:"name"`
	}
	validate := func(s *sc) []error {
		if s.Name == "" {
			return []error{errString("name: required")}
		}
		return nil
	}
	if got, err := LoadScenario([]byte("name: a\n"), validate); err != nil || got.Name != "a" {
		t.Errorf("valid: %+v %v", got, err)
	}
	_, err := LoadScenario([]byte("bogus: 1\n"), validate)
	if err == nil || err.Error() != `invalid scenario: [unknown field "bogus", name: required]` {
		t.Errorf("every problem at once: %v", err)
	}
	if _, err := LoadScenario([]byte("name: [\n"), validate); err == nil || !strings.Contains(err.Error(), "parsing scenario") {
		t.Errorf("malformed: %v", err)
	}
}

type errString string

func (e errString) Error() string { return string(e) }
