package cloudapi

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestUserAgent(t *testing.T) {
	tests := []struct {
		version, provider, want string
	}{
		{version: "v0.1.0", provider: "digitalocean", want: "ccmkit/v0.1.0 (digitalocean)"},
		{version: "", provider: "openstack", want: "ccmkit/dev (openstack)"},
		{version: "v1.2.3", provider: "", want: "ccmkit/v1.2.3"},
	}
	for _, tc := range tests {
		if got := UserAgent(tc.version, tc.provider); got != tc.want {
			t.Errorf("UserAgent(%q, %q) = %q, want %q", tc.version, tc.provider, got, tc.want)
		}
	}
}

func TestUserAgentHeader(t *testing.T) {
	tests := []struct {
		name    string
		version string
		sdkUA   string
		want    string
	}{
		{name: "SDK user agent appended", version: "v0.1.0", sdkUA: "godo/1.236.0", want: "ccmkit/v0.1.0 (digitalocean) godo/1.236.0"},
		{name: "no SDK user agent", version: "v0.1.0", want: "ccmkit/v0.1.0 (digitalocean)"},
		{name: "dev version", sdkUA: "godo/1.236.0", want: "ccmkit/dev (digitalocean) godo/1.236.0"},
		{name: "not prefixed twice", version: "v0.1.0", sdkUA: "ccmkit/v0.1.0 (digitalocean) godo/1.236.0", want: "ccmkit/v0.1.0 (digitalocean) godo/1.236.0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newScriptedServer(t)
			client := NewClient(Options{Provider: "digitalocean", Version: tc.version})
			req := newRequest(t, t.Context(), http.MethodGet, srv.URL, "")
			if tc.sdkUA != "" {
				req.Header.Set("User-Agent", tc.sdkUA)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got := srv.Requests()[0].Header.Get("User-Agent"); got != tc.want {
				t.Errorf("server saw User-Agent %q, want %q", got, tc.want)
			}
			if got := req.Header.Get("User-Agent"); got != tc.sdkUA {
				t.Errorf("caller's request was modified: User-Agent %q, want %q", got, tc.sdkUA)
			}
		})
	}
}

func TestOptionsDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   Options
		want Options
	}{
		{
			name: "zero value",
			want: Options{Version: "dev", Burst: 1, MaxRetries: DefaultMaxRetries, MinBackoff: DefaultMinBackoff,
				MaxBackoff: DefaultMaxBackoff, Timeout: DefaultTimeout, Budget: 2 * DefaultTimeout},
		},
		{
			name: "burst from QPS, retries disabled, MinBackoff capped by MaxBackoff",
			in:   Options{Provider: "p", Version: "v1", QPS: 7.9, MaxRetries: -3, MinBackoff: time.Minute, MaxBackoff: time.Second, Timeout: time.Second},
			want: Options{Provider: "p", Version: "v1", QPS: 7.9, Burst: 7, MaxRetries: 0, MinBackoff: time.Second, MaxBackoff: time.Second, Timeout: time.Second, Budget: 2 * time.Second},
		},
		{
			name: "explicit values kept",
			in:   Options{QPS: 10, Burst: 3, MaxRetries: 2, MinBackoff: time.Millisecond, MaxBackoff: time.Minute, Timeout: time.Hour, Budget: -1},
			want: Options{Version: "dev", QPS: 10, Burst: 3, MaxRetries: 2, MinBackoff: time.Millisecond, MaxBackoff: time.Minute, Timeout: time.Hour, Budget: -1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in.withDefaults()
			if got.Base == nil || got.Operation == nil {
				t.Error("Base and Operation must be defaulted")
			}
			if got.Base == http.DefaultTransport {
				t.Error("Base must be a clone of http.DefaultTransport, not the shared one")
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Options{}, "Base", "Operation")); diff != "" {
				t.Errorf("withDefaults (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOddInputsDoNotPanic(t *testing.T) {
	rt := NewTransport(Options{MaxRetries: -1})
	if err := roundTripErr(rt, nil); err == nil {
		t.Error("RoundTrip(nil) returned no error")
	}
	if err := roundTripErr(rt, &http.Request{Method: http.MethodGet}); err == nil {
		t.Error("RoundTrip without URL returned no error")
	}

	nilNil := NewTransport(Options{Base: roundTripperFunc(func(*http.Request) (*http.Response, error) { return nil, nil })})
	if err := roundTripErr(nilNil, newRequest(t, t.Context(), http.MethodPost, "http://example.invalid/", "x")); err == nil {
		t.Error("want an error when the base transport returns neither response nor error")
	}

	noBody := NewTransport(Options{Base: roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Request: r}, nil // nil Body and Header
	})})
	resp, body, err := do(t, noBody, newRequest(t, t.Context(), http.MethodGet, "http://example.invalid/", ""))
	if err != nil || resp.StatusCode != http.StatusOK || body != "" {
		t.Errorf("nil response body: got %v, %q, %v", resp, body, err)
	}

	headerless := &http.Request{Method: http.MethodGet, URL: mustParseURL(t, "http://example.invalid/")} // nil Header
	if err := roundTripErr(noBody, headerless); err != nil {
		t.Errorf("request without Header: %v", err)
	}

	failingBody := newRequest(t, t.Context(), http.MethodPut, "http://example.invalid/?token=s3cret", "")
	failingBody.Body = io.NopCloser(errReader{errors.New("disk on fire")})
	err = roundTripErr(noBody, failingBody)
	if err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("unreadable request body: err = %v, want it reported", err)
	}
}

func TestRequestBodyReplayedFromGetBody(t *testing.T) {
	srv := newScriptedServer(t, reply{status: http.StatusBadGateway}, reply{status: http.StatusOK})
	tr, _ := newFakeTimeTransport(Options{})
	// http.NewRequest sets GetBody for a strings.Reader; the request is
	// replayed either way.
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, srv.URL, strings.NewReader("same bytes"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := do(t, tr, req); err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, r := range srv.Requests() {
		bodies = append(bodies, r.Body)
	}
	if diff := cmp.Diff([]string{"same bytes", "same bytes"}, bodies); diff != "" {
		t.Errorf("bodies (-want +got):\n%s", diff)
	}
}
