package cloudapi

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
)

func TestLogVerbosityLevels(t *testing.T) {
	tests := []struct {
		verbosity   int
		wantPresent []string
		wantAbsent  []string
	}{
		{verbosity: 3, wantAbsent: []string{"Cloud API request"}},
		{verbosity: 4, wantPresent: []string{`"Cloud API request"`, `operation="PUT /v2/tags/{id}"`, `status=200`, `attempt=1`, `duration=`},
			wantAbsent: []string{"requestHeaders", "requestBody"}},
		{verbosity: 6, wantPresent: []string{"requestHeaders", "responseHeaders", "ccmkit/dev (test)"},
			wantAbsent: []string{"requestBody", "responseBody"}},
		{verbosity: 8, wantPresent: []string{`requestBody="{\"name\":\"x\"}"`, `responseBody="pong"`}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("v=%d", tc.verbosity), func(t *testing.T) {
			var buf syncBuffer
			ctx := klog.NewContext(t.Context(), textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(tc.verbosity), textlogger.Output(&buf))))
			srv := newScriptedServer(t, reply{status: http.StatusOK, body: "pong"})

			_, body, err := do(t, NewTransport(Options{Provider: "test"}), newRequest(t, ctx, http.MethodPut, srv.URL+"/v2/tags/12345", `{"name":"x"}`))
			if err != nil || body != "pong" {
				t.Fatalf("got %q, %v", body, err)
			}
			log := buf.String()
			for _, s := range tc.wantPresent {
				if !strings.Contains(log, s) {
					t.Errorf("log lacks %s:\n%s", s, log)
				}
			}
			for _, s := range tc.wantAbsent {
				if strings.Contains(log, s) {
					t.Errorf("log has %s:\n%s", s, log)
				}
			}
		})
	}
}

func TestLoggedBodiesAreTruncated(t *testing.T) {
	large := `{"items":"` + strings.Repeat("a", 10<<10) + `","password":"late-s3cret"}`
	srv := newScriptedServer(t, reply{status: http.StatusOK, body: large})
	var buf syncBuffer
	ctx := klog.NewContext(t.Context(), textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(10), textlogger.Output(&buf))))

	_, body, err := do(t, NewTransport(Options{}), newRequest(t, ctx, http.MethodPost, srv.URL, large))
	if err != nil {
		t.Fatal(err)
	}
	if body != large {
		t.Errorf("caller read %d body bytes, want all %d", len(body), len(large))
	}
	log := buf.String()
	if !strings.Contains(log, fmt.Sprintf("... (truncated from %d bytes)", len(large))) || !strings.Contains(log, `... (truncated)`) {
		t.Errorf("log does not mark both bodies as truncated:\n%s", log)
	}
	if len(log) > 3*maxLoggedBody {
		t.Errorf("log line is %d bytes, want two bodies of at most %d", len(log), maxLoggedBody)
	}
	if strings.Contains(log, "late-s3cret") {
		t.Error("log contains a secret")
	}
}

func TestPeekBody(t *testing.T) {
	tests := []struct {
		name      string
		body      io.Reader
		wantHead  string
		wantTotal int
		wantRead  string
		wantErr   bool
	}{
		{name: "short", body: strings.NewReader("abc"), wantHead: "abc", wantTotal: 3, wantRead: "abc"},
		{name: "exactly n", body: strings.NewReader("abcd"), wantHead: "abcd", wantTotal: 4, wantRead: "abcd"},
		{name: "longer than n", body: strings.NewReader("abcdefgh"), wantHead: "abcd", wantTotal: -1, wantRead: "abcdefgh"},
		{name: "read error kept", body: io.MultiReader(strings.NewReader("ab"), errReader{io.ErrClosedPipe}), wantHead: "ab", wantTotal: 2, wantRead: "ab", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := &http.Response{Body: io.NopCloser(tc.body)}
			head, total := peekBody(resp, 4)
			rest, err := io.ReadAll(resp.Body)
			if string(head) != tc.wantHead || total != tc.wantTotal || string(rest) != tc.wantRead || (err != nil) != tc.wantErr {
				t.Errorf("peekBody = %q, %d; body then reads %q, %v; want %q, %d, %q, error %t",
					head, total, rest, err, tc.wantHead, tc.wantTotal, tc.wantRead, tc.wantErr)
			}
		})
	}
}
