package cloudapi

import (
	"fmt"
	"net/http"
)

// WithBearerToken returns a copy of c that sends "Authorization: Bearer
// <token>" on every request to host, calling token for each request so a
// rotated credential (a config.Secret re-read from its file) applies at
// once. Requests to any other host, such as a redirect target, carry no
// token. The transport chain logs the header redacted.
//
//	hc := cloudapi.WithBearerToken(env.HTTPClient, apiURL.Host, cfg.Token.Reveal)
func WithBearerToken(c *http.Client, host string, token func() (string, error)) *http.Client {
	authed := *c
	authed.Transport = &bearerToken{host: host, token: token, next: c.Transport}
	return &authed
}

type bearerToken struct {
	host  string
	token func() (string, error)
	next  http.RoundTripper
}

func (b *bearerToken) RoundTrip(req *http.Request) (*http.Response, error) {
	next := b.next
	if next == nil {
		next = http.DefaultTransport
	}
	if req.URL.Host != b.host {
		return next.RoundTrip(req)
	}
	token, err := b.token()
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("reading the API token: %w", err)
	}
	r := req.Clone(req.Context()) // a RoundTripper must not modify its request
	r.Header.Set("Authorization", "Bearer "+token)
	return next.RoundTrip(r)
}
