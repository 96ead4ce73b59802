package cloudapi

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
)

// Every secret the credential test sends or receives. None may be logged.
var secrets = []string{
	"s3cr3t-token",         // Authorization: Bearer
	"x-auth-s3cr3t",        // X-Auth-Token
	"vendor-session-value", // header listed in Options.Sensitive
	"query-tok3n",          // ?token=
	"query-k3y",            // ?api_key=
	"sess-id-123",          // ?sid= listed in Options.Sensitive
	"urlus3r", "pa55word",  // URL user information
	base64.StdEncoding.EncodeToString([]byte("urlus3r:pa55word")), // the Basic header http.Client derives from it
	"hunter2",             // JSON "password"
	"keystone-t0ken-id",   // JSON {"token": {"id": ...}}
	"app-cred-s3cret",     // JSON "application_credential_secret"
	"form-passw0rd",       // form password=
	"client-s3cr3t",       // form client_secret=
	"subject-t0ken-value", // response X-Subject-Token
	"cookie-s3cr3t",       // response Set-Cookie
	"acc3ss-t0ken-value",  // response JSON "access_token"
	"refr3sh-value",       // response JSON "refresh_token"
	"resp-api-k3y",        // response JSON "api_key"
	"refused-t0ken",       // ?token= on a request that fails to connect
}

// credentialServer answers like an identity service that hands out tokens.
// Its first answer is a 503 with Retry-After so retries get logged too.
func credentialServer(t *testing.T) *scriptedServer {
	tokenReply := reply{
		status: http.StatusCreated,
		header: map[string]string{
			"Content-Type":    "application/json",
			"X-Subject-Token": "subject-t0ken-value",
			"Set-Cookie":      "session=cookie-s3cr3t; HttpOnly",
		},
		body: `{"access_token":"acc3ss-t0ken-value","refresh_token":"refr3sh-value","token_type":"bearer","expires_in":3600,"user":{"name":"admin","api_key":"resp-api-k3y"}}`,
	}
	unavailable := tokenReply
	unavailable.status = http.StatusServiceUnavailable
	unavailable.header = map[string]string{"Retry-After": "0", "X-Subject-Token": "subject-t0ken-value"}
	return newScriptedServer(t, unavailable, tokenReply)
}

// makeCredentialRequests sends requests carrying every kind of credential
// through a client built by NewClient, and returns the error of a request
// to a server that refuses connections.
func makeCredentialRequests(t *testing.T, ctx context.Context, srv *scriptedServer) error {
	t.Helper()
	opts := Options{Provider: "openstack", Version: "v0.1.0", Sensitive: []string{"X-Vendor-Session", "sid"}}
	tr, _ := newFakeTimeTransport(opts)
	client := &http.Client{Transport: tr}
	base, _ := url.Parse(srv.URL)
	base.User = url.UserPassword("urlus3r", "pa55word")

	requests := []struct {
		method, path, query, contentType, body string
		header                                 map[string]string
	}{
		{
			method: http.MethodPost, path: "/v3/auth/tokens",
			query:       "token=query-tok3n&api_key=query-k3y&sid=sess-id-123&limit=10",
			contentType: "application/json",
			body:        `{"auth":{"identity":{"methods":["password"],"password":{"user":{"name":"admin","password":"hunter2"}}}}}`,
			header:      map[string]string{"Authorization": "Bearer s3cr3t-token", "X-Auth-Token": "x-auth-s3cr3t", "X-Vendor-Session": "vendor-session-value"},
		},
		{
			method: http.MethodPost, path: "/v3/auth/tokens", contentType: "application/json",
			body: `{"auth":{"identity":{"methods":["token","application_credential"],"token":{"id":"keystone-t0ken-id"},` +
				`"application_credential":{"id":"ac1","application_credential_secret":"app-cred-s3cret"}}}}`,
		},
		{
			method: http.MethodPost, path: "/token", contentType: "application/x-www-form-urlencoded",
			body: "grant_type=password&username=admin&password=form-passw0rd&client_id=app&client_secret=client-s3cr3t",
		},
	}
	for _, r := range requests {
		u := *base
		u.Path, u.RawQuery = r.path, r.query
		req := newRequest(t, ctx, r.method, u.String(), r.body)
		req.Header.Set("Content-Type", r.contentType)
		req.Header.Set("User-Agent", "gophercloud/v2.8.0")
		for k, v := range r.header {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", r.method, r.path, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}

	// net/http's Client would wrap this error in a *url.Error carrying the
	// full query string (it only strips the password), so call the
	// transport directly: its own error must be clean.
	refused := newRequest(t, ctx, http.MethodGet, closedServerURL(t)+"/v2/servers?token=refused-t0ken", "")
	err := roundTripErr(tr, refused)
	if err == nil {
		t.Fatal("want an error from a closed server")
	}
	return err
}

// assertNoCredentials fails if the log leaks a secret, lacks the request
// lines, or shows Authorization with anything but a redacted value.
func assertNoCredentials(t *testing.T, log string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(log, s) {
			t.Errorf("log contains secret %q", s)
		}
	}
	for _, want := range []string{`"Cloud API request"`, `operation="POST /v3/auth/tokens"`, `status=201`, `requestBody=`, `responseBody=`, `"Retrying cloud API request"`, `refused`} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %s, so the test proves nothing; log:\n%s", want, log)
		}
	}
	auth := regexp.MustCompile(`"Authorization":\["([^"]*)"\]`).FindAllStringSubmatch(log, -1)
	if len(auth) == 0 {
		t.Error("log shows no Authorization header at all")
	}
	for _, m := range auth {
		if m[1] != "Bearer "+Redacted && m[1] != "Basic "+Redacted {
			t.Errorf("Authorization logged as %q, want a redacted value", m[1])
		}
	}
	if n := strings.Count(log, "Authorization"); n != len(auth) {
		t.Errorf("Authorization appears %d times but only %d times as a redacted header", n, len(auth))
	}
}

func TestCredentialsNeverLogged(t *testing.T) {
	t.Run("contextual logger at V(10)", func(t *testing.T) {
		var buf syncBuffer
		logger := textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(10), textlogger.Output(&buf)))
		ctx := klog.NewContext(t.Context(), logger)

		err := makeCredentialRequests(t, ctx, credentialServer(t))

		assertNoCredentials(t, buf.String())
		if strings.Contains(err.Error(), "refused-t0ken") {
			t.Errorf("transport error %q contains the query token", err)
		}
	})
	t.Run("global klog at -v=10", func(t *testing.T) {
		var buf syncBuffer
		defer setGlobalKlogVerbosity(t, &buf, "10")()

		err := makeCredentialRequests(t, t.Context(), credentialServer(t))
		klog.Flush()

		assertNoCredentials(t, buf.String())
		if strings.Contains(err.Error(), "refused-t0ken") {
			t.Errorf("transport error %q contains the query token", err)
		}
	})
}

func TestTransportErrorsDoNotLeakCredentials(t *testing.T) {
	leakyBase := roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		return nil, &url.Error{Op: "Get", URL: r.URL.String(), Err: errors.New("proxy said no to " + r.URL.String())}
	})
	tests := []struct {
		name string
		base http.RoundTripper
		url  string
	}{
		{name: "connection refused", url: closedServerURL(t) + "/v2/droplets?token=t0p-s3cret&page=2"},
		{name: "base error embeds the URL", base: leakyBase, url: "https://urlus3r:pa55word@api.example.com/v1?api_key=t0p-s3cret&X-Amz-Signature=s1gnature-s3cret"},
		{name: "escaped secret", base: leakyBase, url: "https://api.example.com/v1?token=t0p%2Fs3cret"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := NewTransport(Options{Base: tc.base, MaxRetries: -1})
			_, _, err := do(t, rt, newRequest(t, t.Context(), http.MethodGet, tc.url, ""))
			if err == nil {
				t.Fatal("want an error")
			}
			for _, s := range []string{"t0p-s3cret", "t0p/s3cret", "t0p%2Fs3cret", "s1gnature-s3cret", "urlus3r", "pa55word"} {
				if strings.Contains(err.Error(), s) {
					t.Errorf("error %q contains secret %q", err, s)
				}
			}
			var ue *url.Error
			if errors.As(err, &ue) && strings.Contains(ue.URL, "s3cret") {
				t.Errorf("unwrapped *url.Error still carries the secret: %q", ue.URL)
			}
		})
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// setGlobalKlogVerbosity routes the global klog logger to w at verbosity v
// and returns a function that restores stderr output at verbosity 0.
func setGlobalKlogVerbosity(t *testing.T, w io.Writer, v string) func() {
	var fs flag.FlagSet
	klog.InitFlags(&fs)
	for name, value := range map[string]string{"v": v, "logtostderr": "false", "alsologtostderr": "false", "stderrthreshold": "FATAL"} {
		if err := fs.Set(name, value); err != nil {
			t.Fatal(err)
		}
	}
	klog.SetOutput(w)
	return func() {
		klog.Flush()
		_ = fs.Set("v", "0")
		_ = fs.Set("logtostderr", "true")
		klog.SetOutput(os.Stderr)
	}
}
