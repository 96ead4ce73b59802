package openstack

import (
	"context"
	"net/http"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
)

// reauthGuard stands between gophercloud and its re-authentication:
// gophercloud requests a new token whenever an API answers 401 with the
// current one, and the guard paces those requests (cloudapi.ReauthBackoff).
type reauthGuard struct {
	backoff *cloudapi.ReauthBackoff
}

func newReauthGuard(clk clock.Clock) *reauthGuard {
	return &reauthGuard{backoff: cloudapi.NewReauthBackoff(clk)}
}

// wrap returns reauth (gophercloud's ReauthFunc) behind the backoff.
func (g *reauthGuard) wrap(reauth func(context.Context) error) func(context.Context) error {
	if reauth == nil {
		return nil
	}
	return func(ctx context.Context) error {
		again, err := g.backoff.Attempt("Keystone token")
		if err != nil {
			return err
		}
		if again {
			klog.FromContext(ctx).Info("The OpenStack APIs refused a fresh token; requesting another one")
		}
		return reauth(ctx)
	}
}

// watch wraps the transport of API requests: one that carries a token and
// gets any answer but 401 resets the backoff.
func (g *reauthGuard) watch(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	return tokenAccepted{base: rt, guard: g}
}

type tokenAccepted struct {
	base  http.RoundTripper
	guard *reauthGuard
}

func (t tokenAccepted) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err == nil && resp.StatusCode != http.StatusUnauthorized && r.Header.Get("X-Auth-Token") != "" {
		t.guard.backoff.Accepted()
	}
	return resp, err
}
