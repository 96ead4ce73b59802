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
