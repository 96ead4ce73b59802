package cloudapi_test

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
)

// TestTLSOption: Options.TLS reaches the default transport and a custom
// *http.Transport base alike, so a cloud behind a private CA works
// whatever base the framework was given.
func TestTLSOption(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	trusting := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}

	for name, opts := range map[string]cloudapi.Options{
		"default transport":  {TLS: trusting, MaxRetries: -1},
		"a custom transport": {TLS: trusting, MaxRetries: -1, Base: &http.Transport{}},
	} {
		t.Run(name, func(t *testing.T) {
			resp, err := cloudapi.NewClient(opts).Get(srv.URL)
			if err != nil {
				t.Fatalf("GET with the server's CA trusted: %v", err)
			}
			_ = resp.Body.Close()
		})
	}
	if resp, err := cloudapi.NewClient(cloudapi.Options{MaxRetries: -1}).Get(srv.URL); err == nil {
		_ = resp.Body.Close()
		t.Fatal("GET without the CA succeeded")
	}
}

// roundTripperFunc is a RoundTripper that is no *http.Transport.
type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestTLSWithAnotherBaseIsAnError: TLS settings that cannot reach the base
// transport fail Validate and every request, rather than being dropped.
func TestTLSWithAnotherBaseIsAnError(t *testing.T) {
	sent := false
	opts := cloudapi.Options{TLS: &tls.Config{MinVersion: tls.VersionTLS12}, MaxRetries: -1,
		Base: roundTripperFunc(func(*http.Request) (*http.Response, error) { sent = true; return nil, http.ErrHandlerTimeout })}
	if err := opts.Validate(); err == nil {
		t.Error("Validate = nil for TLS settings with a base that is no *http.Transport")
	}
	_, err := cloudapi.NewClient(opts).Get("https://cloud.example/")
	if err == nil || sent {
		t.Errorf("GET = %v (sent: %v); want the Validate error, nothing sent", err, sent)
	}
}

// TestDefaultBaseIgnoresAReplacedDefaultTransport: the default base is a
// transport of the package's own, whatever http.DefaultTransport holds, so
// TLS settings apply even after another library replaced it.
func TestDefaultBaseIgnoresAReplacedDefaultTransport(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	saved := http.DefaultTransport
	http.DefaultTransport = roundTripperFunc(func(*http.Request) (*http.Response, error) {
		t.Error("a request went through the replaced http.DefaultTransport")
		return nil, http.ErrHandlerTimeout
	})
	defer func() { http.DefaultTransport = saved }()
	resp, err := cloudapi.NewClient(cloudapi.Options{TLS: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, MaxRetries: -1}).Get(srv.URL)
	if err != nil {
		t.Fatalf("GET with the server's CA trusted: %v", err)
	}
	_ = resp.Body.Close()
}
