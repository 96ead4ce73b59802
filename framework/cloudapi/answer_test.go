package cloudapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
)

// TestAnswerOf: an error answer that came through the transport keeps its
// body for AnswerOf after the SDK read it, as godo's ErrorResponse keeps
// only the drained *http.Response.
func TestAnswerOf(t *testing.T) {
	big := `{"id":"not_found","message":"` + strings.Repeat("x", MaxAnswerBody) + `"}`
	tests := []struct {
		name     string
		rep      reply
		wantBody string
	}{
		{"the API's 404", reply{status: 404, header: map[string]string{"Content-Type": "application/json"}, body: doNotFound}, doNotFound},
		{"a proxy's page", reply{status: 404, header: map[string]string{"Content-Type": "text/html"}, body: proxyPage}, proxyPage},
		{"an empty 404", reply{status: 404}, ""},
		{"a body past the limit is cut", reply{status: 404, header: map[string]string{"Content-Type": "application/json"}, body: big}, big[:MaxAnswerBody]},
		{"a success keeps no body", reply{status: 200, header: map[string]string{"Content-Type": "application/json"}, body: `{"droplet":{}}`}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newScriptedServer(t, tt.rep)
			resp, body, err := do(t, NewTransport(Options{Provider: "test"}), newRequest(t, context.Background(), http.MethodGet, srv.URL+"/v2/droplets/7", ""))
			if err != nil {
				t.Fatal(err)
			}
			if body != tt.rep.body {
				t.Errorf("the SDK read %d bytes, want the whole body (%d)", len(body), len(tt.rep.body))
			}
			a := AnswerOf(resp)
			if a.Status != tt.rep.status || a.Header.Get("Content-Type") != resp.Header.Get("Content-Type") {
				t.Errorf("AnswerOf = %d %v, want the response's status and header", a.Status, a.Header)
			}
			if string(a.Body) != tt.wantBody {
				t.Errorf("AnswerOf body = %d bytes %.40q, want %d bytes %.40q", len(a.Body), a.Body, len(tt.wantBody), tt.wantBody)
			}
			if got, want := doRule.IsNotFound(OneResource, a), tt.name == "the API's 404"; got != want {
				t.Errorf("IsNotFound = %v, want %v", got, want)
			}
		})
	}
	if a := AnswerOf(nil); a.Status != 0 || a.Body != nil {
		t.Errorf("AnswerOf(nil) = %+v", a)
	}
	foreign := &http.Response{StatusCode: http.StatusNotFound, Header: http.Header{}, Body: http.NoBody}
	if a := AnswerOf(foreign); a.Status != 404 || a.Body != nil {
		t.Errorf("AnswerOf(a response the transport did not build) = %+v, want the status and no body", a)
	}
}

// TestAnswerRecorder: an SDK whose error keeps neither the response nor
// its headers (triton-go) still gets the whole answer through the context,
// and after retries it is the last attempt's.
func TestAnswerRecorder(t *testing.T) {
	srv := newScriptedServer(t,
		reply{status: 503, body: "busy"},
		reply{status: 410, header: map[string]string{"Content-Type": "application/json"}, body: tritonDeletedVM},
	)
	rt, _ := newFakeTimeTransport(Options{Provider: "test"})
	ctx, rec := RecordAnswers(context.Background())
	if _, ok := rec.Last(); ok {
		t.Error("Last before any request: ok")
	}
	resp, _, err := do(t, rt, newRequest(t, ctx, http.MethodGet, srv.URL+"/acct/machines/b6979942", ""))
	if err != nil || resp.StatusCode != http.StatusGone {
		t.Fatalf("answer = %v, %v; want the 410 after a retry", resp, err)
	}
	a, ok := rec.Last()
	if !ok || a.Status != 410 || string(a.Body) != tritonDeletedVM {
		t.Fatalf("Last = %d %s, %v; want the 410 and its body", a.Status, a.Body, ok)
	}
	if !tritonRule.IsNotFound(OneResource, a) {
		t.Error("the recorded 410 of a deleted machine is not a not-found")
	}

	// A request that got no answer leaves nothing to classify.
	ctx, rec = RecordAnswers(context.Background())
	if _, _, err := do(t, NewTransport(Options{Provider: "test", MaxRetries: -1}), newRequest(t, ctx, http.MethodGet, closedServerURL(t), "")); err == nil {
		t.Fatal("request to a closed server: no error")
	}
	if a, ok := rec.Last(); ok {
		t.Errorf("Last after a refused connection = %+v, true; want nothing", a)
	}
}

// TestAnswerBodyKeptWhileLogged: at -v=8 the transport logs the start of
// the body and puts it back; the kept body is still the whole answer.
func TestAnswerBodyKeptWhileLogged(t *testing.T) {
	srv := newScriptedServer(t, reply{status: 404, header: map[string]string{"Content-Type": "application/json"}, body: doNotFound})
	var log syncBuffer
	ctx := klog.NewContext(t.Context(), textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(8), textlogger.Output(&log))))
	resp, body, err := do(t, NewTransport(Options{Provider: "test"}), newRequest(t, ctx, http.MethodGet, srv.URL+"/v2/droplets/7", ""))
	if err != nil || body != doNotFound {
		t.Fatalf("answer = %q, %v", body, err)
	}
	if a := AnswerOf(resp); !json.Valid(a.Body) || !doRule.IsNotFound(OneResource, a) {
		t.Errorf("AnswerOf body = %q; want the API's not-found", a.Body)
	}
	if !strings.Contains(log.String(), "not_found") {
		t.Errorf("the body was not logged, so the test did not peek at it: %s", log.String())
	}
}
