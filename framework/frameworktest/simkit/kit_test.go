package simkit

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// newTestServer serves GET/PUT /things/{id} (PUT 404s on "missing") and
// POST /login (NoAuth, NoWrite), behind a token check.
func newTestServer(t *testing.T, opts Options) (*Kit, *httptest.Server) {
	t.Helper()
	opts.Auth = func(r *http.Request) *Response {
		if r.Header.Get("X-Token") == "ok" {
			return nil
		}
		return &Response{Status: http.StatusUnauthorized, Body: map[string]string{"error": "who are you"}}
	}
	opts.ErrorBody = func(_ *http.Request, e ErrorInfo) any {
		return map[string]any{"op": e.Op, "status": e.Status, "code": e.Code, "msg": e.Message}
	}
	k := New(opts)
	mux := http.NewServeMux()
	k.Handle(mux, "GET /things/{id}", func(r *http.Request) Response {
		return JSON(http.StatusOK, map[string]string{"id": r.PathValue("id")})
	})
	k.Handle(mux, "PUT /things/{id}", func(r *http.Request) Response {
		if r.PathValue("id") == "missing" {
			return JSON(http.StatusNotFound, map[string]string{"msg": "no"})
		}
		var body map[string]any
		if err := Decode(r, &body); err != nil {
			return JSON(http.StatusBadRequest, map[string]string{"msg": err.Error()})
		}
		return NoContent(http.StatusNoContent)
	})
	k.Handle(mux, "POST /login", func(*http.Request) Response {
		return Response{Status: http.StatusCreated, Body: map[string]string{}, Header: http.Header{"X-Subject": {"tok"}}}
	}, NoAuth, NoWrite)
	mux.HandleFunc("GET /_sim/stats", k.ServeStats)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return k, ts
}

func do(t *testing.T, ts *httptest.Server, method, path, body string, token bool) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
	if token {
		req.Header.Set("X-Token", "ok")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestHandleAuthWritesAndLog(t *testing.T) {
	k, ts := newTestServer(t, Options{})
	if r := do(t, ts, "GET", "/things/a", "", false); r.StatusCode != http.StatusUnauthorized || r.Header.Get("Content-Type") != ContentType {
		t.Errorf("no token: %d %q", r.StatusCode, r.Header.Get("Content-Type"))
	}
	if r := do(t, ts, "POST", "/login", "", false); r.StatusCode != http.StatusCreated || r.Header.Get("X-Subject") != "tok" {
		t.Errorf("login: %d %v", r.StatusCode, r.Header)
	}
	do(t, ts, "PUT", "/things/a", `{}`, true)
	do(t, ts, "PUT", "/things/missing", `{}`, true)
	do(t, ts, "PUT", "/things/a", `{} x`, true)
	if k.Writes() != 1 {
		t.Errorf("writes = %d, want 1: failures, reads and NoWrite endpoints do not count", k.Writes())
	}
	if got := k.Stats(); got["PUT /things/{id}"] != 3 || got["POST /login"] != 1 || got["GET /things/{id}"] != 1 {
		t.Errorf("stats = %v", got)
	}
	log := k.Requests()
	if len(log) != 5 || log[0].Status != 401 || log[3].Status != 404 || log[4].Status != 400 {
		t.Errorf("log = %+v", log)
	}
	var stats struct {
		Requests, Writes int
		Operations       map[string]int
	}
	if err := json.NewDecoder(do(t, ts, "GET", "/_sim/stats", "", false).Body).Decode(&stats); err != nil {
		t.Fatal(err)
	}
	if stats.Requests != 5 || stats.Writes != 1 {
		t.Errorf("/_sim/stats = %+v", stats)
	}
	if ops := k.Ops(); len(ops) != 3 {
		t.Errorf("ops = %v", ops)
	}
}

func TestFaultMatching(t *testing.T) {
	for _, tt := range []struct {
		op   string
		want bool
	}{
		{"", true}, {"*", true}, {"GET /things/{id}", true}, {"PUT /things/{id}", false},
		{"GET /things*", true}, {"GET /other*", false}, {"GET", true}, {"POST", false},
		{"* /things/*", true}, {"* /th*", true}, {"* /other/*", false},
	} {
		if got := (Fault{Op: tt.op}).Matches("GET /things/{id}"); got != tt.want {
			t.Errorf("Fault{Op: %q}.Matches = %v, want %v", tt.op, got, tt.want)
		}
	}
}

func TestFaults(t *testing.T) {
	k, ts := newTestServer(t, Options{})
	k.Inject(Fault{Op: "GET /things/{id}", Status: 429, RetryAfter: 1500 * time.Millisecond, Count: 2})
	for i := range 2 {
		r := do(t, ts, "GET", "/things/a", "", true)
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		if r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") != "2" || body["op"] != "GET /things/{id}" {
			t.Errorf("try %d: %d %q %v", i, r.StatusCode, r.Header.Get("Retry-After"), body)
		}
	}
	if r := do(t, ts, "GET", "/things/a", "", true); r.StatusCode != http.StatusOK {
		t.Errorf("after Count: %d", r.StatusCode)
	}
	// Faults come before auth: an unauthenticated request sees the fault.
	remove := k.Fail(503)
	if r := do(t, ts, "GET", "/things/a", "", false); r.StatusCode != http.StatusServiceUnavailable || r.Header.Get("Retry-After") != "0" {
		t.Errorf("503: %d %q", r.StatusCode, r.Header.Get("Retry-After"))
	}
	remove()
	k.ResetConnections("PUT")
	req, _ := http.NewRequest(http.MethodPut, ts.URL+"/things/a", strings.NewReader("{}"))
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Error("reset: no error")
	}
	if got := k.Requests(); got[len(got)-1].Status != 0 {
		t.Errorf("reset logged as %d", got[len(got)-1].Status)
	}
	k.ClearFaults()
	k.SetLatency(10 * time.Millisecond)
	start := time.Now()
	do(t, ts, "GET", "/things/a", "", true)
	if time.Since(start) < 10*time.Millisecond || k.InjectedLatency() < 10*time.Millisecond {
		t.Error("latency not applied")
	}
}

func TestFaultRateIsSeeded(t *testing.T) {
	pattern := func() string {
		_, ts := newTestServer(t, Options{Common: Common{Seed: 7, Faults: []Fault{{Status: 500, Rate: 0.5}}}})
		var b strings.Builder
		for range 20 {
			if do(t, ts, "GET", "/things/a", "", true).StatusCode == http.StatusInternalServerError {
				b.WriteByte('x')
			} else {
				b.WriteByte('.')
			}
		}
		return b.String()
	}
	a, b := pattern(), pattern()
	if a != b || !strings.Contains(a, "x") || !strings.Contains(a, ".") {
		t.Errorf("patterns %s and %s", a, b)
	}
}

func TestBodyLimitAndBaseURL(t *testing.T) {
	_, ts := newTestServer(t, Options{MaxBodyBytes: 8})
	if r := do(t, ts, "PUT", "/things/a", `{"a":"0123456789"}`, true); r.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("large body: %d", r.StatusCode)
	}
	r := httptest.NewRequest(http.MethodGet, "http://example.com:8080/x", nil)
	if got := BaseURL(r); got != "http://example.com:8080" {
		t.Errorf("BaseURL = %q", got)
	}
}

func TestScenarioFault(t *testing.T) {
	ops := Operations{Names: map[string]string{"x": "GET /x"}, IsEndpoint: func(op string) bool { return op == "GET /y" }}
	f := ScenarioFault{Operation: "x", Status: 429, RetryAfter: "2s", Delay: "5ms", Count: 1}
	if errs := f.Validate(field.NewPath("faults").Index(0), ops); len(errs) != 0 {
		t.Fatal(errs)
	}
	if got := f.Fault(ops); got.Op != "GET /x" || got.RetryAfter != 2*time.Second || got.Delay != 5*time.Millisecond {
		t.Errorf("Fault = %+v", got)
	}
	for op, want := range map[string]string{"*": "", "GET /y": "GET /y"} {
		if got, ok := ops.Resolve(op); !ok || got != want {
			t.Errorf("Resolve(%q) = %q, %v", op, got, ok)
		}
	}
	bad := ScenarioFault{Operation: "y", Status: 200, Rate: 2, RetryAfter: "-1s", Count: -1, Reset: true}
	var got []string
	for _, e := range bad.Validate(field.NewPath("f"), ops) {
		got = append(got, e.Field+": "+e.Type.String())
	}
	want := []string{"f.operation: Invalid value", "f.status: Invalid value", "f.reset: Forbidden",
		"f.retryAfter: Invalid value", "f.rate: Invalid value", "f.count: Invalid value"}
	if !slices.Equal(got, want) {
		t.Errorf("problems = %q, want %q", got, want)
	}
	if errs := (ScenarioFault{Operation: "*"}).Validate(field.NewPath("f"), ops); len(errs) != 1 || errs[0].Type != field.ErrorTypeRequired {
		t.Errorf("a fault with nothing to do: %v", errs)
	}
}

// TestRawAndTruncatedFaults: a fault can answer with a page that is not
// the cloud's error body (a proxy's HTML 404), or serve the request and
// cut its JSON in half.
func TestRawAndTruncatedFaults(t *testing.T) {
	k, ts := newTestServer(t, Options{})
	remove := k.Inject(Fault{Status: http.StatusNotFound, ContentType: "text/html", Body: "<html>Not Found</html>"})
	r := do(t, ts, "GET", "/things/a", "", true)
	body, _ := io.ReadAll(r.Body)
	if r.StatusCode != http.StatusNotFound || r.Header.Get("Content-Type") != "text/html" || string(body) != "<html>Not Found</html>" {
		t.Errorf("HTML 404: %d %q %q", r.StatusCode, r.Header.Get("Content-Type"), body)
	}
	remove()

	k.Inject(Fault{Op: "GET /things/{id}", Truncate: true, Count: 1})
	r = do(t, ts, "GET", "/things/abcdef", "", true)
	body, err := io.ReadAll(r.Body)
	full := `{"id":"abcdef"}` + "\n"
	if err != nil || r.StatusCode != http.StatusOK || string(body) != full[:len(full)/2] || r.ContentLength != int64(len(full)/2) {
		t.Errorf("truncated: %d %q (length %d), %v; want 200 %q", r.StatusCode, body, r.ContentLength, err, full[:len(full)/2])
	}
	if r := do(t, ts, "GET", "/things/abcdef", "", true); r.StatusCode != http.StatusOK {
		t.Errorf("after Count: %d", r.StatusCode)
	} else if b, _ := io.ReadAll(r.Body); string(b) != full {
		t.Errorf("after Count: %q", b)
	}
}

// TestFaultCodeAndRetryAfterOn: a fault's Code reaches the simulator's
// error body, and RetryAfterOn picks the statuses that carry Retry-After.
func TestFaultCodeAndRetryAfterOn(t *testing.T) {
	k, ts := newTestServer(t, Options{RetryAfterOn: func(status int) bool { return status == http.StatusTooManyRequests }})
	k.Inject(Fault{Status: http.StatusServiceUnavailable, Code: "maintenance", Count: 1})
	k.Inject(Fault{Op: "PUT /things/{id}", Status: http.StatusTooManyRequests, Message: "slow down", Count: 1})
	r := do(t, ts, "GET", "/things/a", "", true)
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	if r.StatusCode != http.StatusServiceUnavailable || body["code"] != "maintenance" || body["msg"] != "" || r.Header.Get("Retry-After") != "" {
		t.Errorf("503: %d %v Retry-After %q", r.StatusCode, body, r.Header.Get("Retry-After"))
	}
	r = do(t, ts, "PUT", "/things/a", "{}", true)
	body = nil
	_ = json.NewDecoder(r.Body).Decode(&body)
	if r.StatusCode != http.StatusTooManyRequests || body["code"] != "" || body["msg"] != "slow down" || r.Header.Get("Retry-After") != "0" {
		t.Errorf("429: %d %v Retry-After %q", r.StatusCode, body, r.Header.Get("Retry-After"))
	}
}
