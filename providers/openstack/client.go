package openstack

import (
	"context"
	"net/http"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/providers/openstack/internal/cloud"
)

// This file builds the CCM's HTTP client. The gophercloud clients over
// it, and the rules every call follows (Keystone tokens re-requested on a
// 401 with the credentials cloud.conf holds then, backing off in a 401
// storm; only an API's own 404 for one named resource is a not-found),
// are package internal/cloud's, which the CSI driver shares.

// httpClient is the framework's cloudapi client on a transport with the TLS
// settings of [Global]; [Metadata] request-timeout is the per-request
// timeout unless --cloud-api-timeout is set.
func (p *Provider) httpClient(ctx context.Context, env *framework.Env) (*http.Client, error) {
	tc, err := cloud.TLSConfig(&p.cfg.Global)
	if err != nil {
		return nil, err
	}
	return env.NewHTTPClient(cloudapi.Options{TLS: tc, Timeout: p.cfg.Metadata.RequestTimeout}), nil
}

// closeBody closes the body of a response gophercloud decoded (it closes
// it itself then; a second Close is harmless).
func closeBody(resp *http.Response) {
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
}
