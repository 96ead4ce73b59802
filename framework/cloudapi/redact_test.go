package cloudapi

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRedactURL(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{in: "https://api.example.com/v2/droplets?page=2", want: "https://api.example.com/v2/droplets?page=2"},
		{in: "https://user:pass@api.example.com/v1", want: "https://REDACTED@api.example.com/v1"},
		{in: "https://accesskey@rancher/v3", want: "https://REDACTED@rancher/v3"},
		{in: "https://x/v1?token=abc&page=1&api_key=k&Access_Token=z", want: "https://x/v1?token=REDACTED&page=1&api_key=REDACTED&Access_Token=REDACTED"},
		{in: "https://x/v1?X-Amz-Signature=sig&X-Amz-Credential=cred&a=b", want: "https://x/v1?X-Amz-Signature=REDACTED&X-Amz-Credential=REDACTED&a=b"},
		{in: "https://x/v1?a=1;password=p", want: "https://x/v1?a=1;password=REDACTED"},
		{in: "https://x/v1?%74oken=abc", want: "https://x/v1?%74oken=REDACTED"},
		{in: "https://x/v1?token", want: "https://x/v1?token"},
		{in: "https://x/cb#access_token=abc&state=s", want: "https://x/cb#access_token=REDACTED&state=s"},
		// Userinfo url.Parse did not see: a URL missing its "https://".
		{in: "ops:pa55word@api.example.com/v2", want: "REDACTED"},
		{in: "0//:000000@0", want: "REDACTED"},
		{in: "/v2/user@example.com", want: "REDACTED"},
		{in: "#//u:pa55word@host", want: "REDACTED"},
		// Userinfo a '#' or '?' in the password pushed out of the authority.
		{in: "http://a#:pa55word@host", want: "http://a#REDACTED"},
		{in: "http://a?:pa55word@host/v2", want: "http://a?REDACTED"},
	}
	for _, tc := range tests {
		if got := RedactURL(mustParseURL(t, tc.in)); got != tc.want {
			t.Errorf("RedactURL(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if got := RedactURL(nil); got != "" {
		t.Errorf("RedactURL(nil) = %q", got)
	}
	u := mustParseURL(t, "https://u:p@x/?token=abc")
	RedactURL(u)
	if u.String() != "https://u:p@x/?token=abc" {
		t.Errorf("RedactURL modified its argument: %s", u)
	}
}

func TestRedactHeader(t *testing.T) {
	in := http.Header{
		"Authorization":       {"Bearer s3cr3t"},
		"Proxy-Authorization": {"Basic dXNlcjpwYXNz"},
		"X-Auth-Token":        {"gAAAAA"},
		"X-Subject-Token":     {"gBBBBB"},
		"X-Api-Key":           {"k"},
		"Cookie":              {"a=b"},
		"Set-Cookie":          {"session=c; HttpOnly"},
		"X-Vendor-Secret-Id":  {"v"},
		"X-Custom":            {"c"},
		"Content-Type":        {"application/json"},
		"Location":            {"https://x/v1/tokens?token=abc&id=1"},
		"X-Raw-Authorization": {"rawtokenwithoutscheme"},
	}
	want := http.Header{
		"Authorization":       {"Bearer REDACTED"},
		"Proxy-Authorization": {"Basic REDACTED"},
		"X-Auth-Token":        {"REDACTED"},
		"X-Subject-Token":     {"REDACTED"},
		"X-Api-Key":           {"REDACTED"},
		"Cookie":              {"REDACTED"},
		"Set-Cookie":          {"REDACTED"},
		"X-Vendor-Secret-Id":  {"REDACTED"},
		"X-Custom":            {"REDACTED"},
		"Content-Type":        {"application/json"},
		"Location":            {"https://x/v1/tokens?token=REDACTED&id=1"},
		"X-Raw-Authorization": {"REDACTED"},
	}
	got := newRedactor([]string{"x-custom"}).header(in)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	if in.Get("Authorization") != "Bearer s3cr3t" {
		t.Error("the input header was modified")
	}
	if RedactHeader(nil) != nil {
		t.Error("RedactHeader(nil) != nil")
	}
	if got := RedactHeader(http.Header{"X-Custom": {"c"}}).Get("X-Custom"); got != "c" {
		t.Errorf("RedactHeader applied Options.Sensitive of another redactor: %q", got)
	}
}

func TestRedactBody(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "JSON secrets", in: `{"name":"web","password":"hunter2","api_key":"k1","n":1}`,
			want: `{"name":"web","password":"REDACTED","api_key":"REDACTED","n":1}`},
		{name: "nested value of a sensitive key", in: `{"auth":{"identity":{"token":{"id":"t1"}}},"ok":["a"]}`,
			want: `{"auth":{"identity":{"token":{"id":"REDACTED"}}},"ok":["a"]}`},
		{name: "arrays under sensitive keys", in: `{"tokens":["a","b"],"names":["c"]}`,
			want: `{"tokens":["REDACTED","REDACTED"],"names":["c"]}`},
		{name: "OAuth response", in: `{"access_token":"at","refresh_token":"rt","expires_in":7200}`,
			want: `{"access_token":"REDACTED","refresh_token":"REDACTED","expires_in":7200}`},
		{name: "escaped key and quotes in values", in: `{"pass\u0077ord":"a\"b","msg":"say \"password\": hi"}`,
			want: `{"pass\u0077ord":"REDACTED","msg":"say \"password\": hi"}`},
		{name: "whitespace kept", in: "{\n  \"secret\" : \"s\",\n  \"x\": \"y\"\n}",
			want: "{\n  \"secret\" : \"REDACTED\",\n  \"x\": \"y\"\n}"},
		{name: "truncated inside a secret", in: `{"user":"u","password":"hunt`,
			want: `{"user":"u","password":"REDACTED"`},
		{name: "truncated inside a sensitive object", in: `{"application_credential":{"id":"i","secret":"s`,
			want: `{"application_credential":{"id":"REDACTED","secret":"REDACTED"`},
		{name: "top-level array", in: `[{"token":"t"},{"name":"n"}]`,
			want: `[{"token":"REDACTED"},{"name":"n"}]`},
		{name: "form", in: "grant_type=password&username=u&password=p%40ss&client_secret=cs",
			want: "grant_type=password&username=u&password=REDACTED&client_secret=REDACTED"},
		{name: "free text", in: "error: invalid api_key=abc123 for user; Authorization: Bearer xyz.abc",
			want: "error: invalid api_key=REDACTED for user; Authorization: Bearer REDACTED"},
		{name: "free text with quoted values", in: `<p>password: "p w" token='t'</p> Token abc`,
			want: `<p>password: REDACTED token=REDACTED</p> Token REDACTED`},
		{name: "plain text without secrets", in: "not found", want: "not found"},
		{name: "empty", in: "", want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(RedactBody([]byte(tc.in))); got != tc.want {
				t.Errorf("RedactBody(%s)\n got: %s\nwant: %s", tc.in, got, tc.want)
			}
		})
	}
	if RedactBody(nil) != nil {
		t.Error("RedactBody(nil) != nil")
	}
}

func TestRedactError(t *testing.T) {
	r := newRedactor(nil)
	u := mustParseURL(t, "https://alice:pw1@x/v1?token=tok%2B1&page=2")
	cause := errors.New("dial failed for https://alice:pw1@x/v1?token=tok%2B1&page=2 (token tok+1)")

	err := r.error(u, cause)
	if msg := err.Error(); strings.Contains(msg, "pw1") || strings.Contains(msg, "tok+1") || strings.Contains(msg, "tok%2B1") || strings.Contains(msg, "alice") {
		t.Errorf("error still leaks: %q", msg)
	}
	if !errors.Is(err, cause) {
		t.Error("redacted error no longer wraps its cause")
	}

	clean := errors.New("connection refused")
	if got := r.error(u, clean); got != clean { //nolint:errorlint // the very same error value must come back
		t.Errorf("an error without secrets was rewrapped: %v", got)
	}

	ue := &url.Error{Op: "Get", URL: u.String(), Err: cause}
	var got *url.Error
	if !errors.As(r.error(u, ue), &got) || strings.Contains(got.URL, "tok%2B1") || strings.Contains(got.Error(), "tok+1") || strings.Contains(got.Error(), "pw1") {
		t.Errorf("url.Error not redacted: %v", got)
	}
}
