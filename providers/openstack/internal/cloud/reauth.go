package cloud

import (
	"context"
	"net/http"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
)

// reauthGuard paces re-authentication: gophercloud asks for a new token
// (keystoneAuth.reauth) whenever an API answers 401 with the current one,
// and the guard spaces those requests (cloudapi.ReauthBackoff) while the
// APIs keep refusing fresh tokens.
type reauthGuard struct {
	backoff *cloudapi.ReauthBackoff
}

func newReauthGuard(clk clock.Clock) *reauthGuard {
	return &reauthGuard{backoff: cloudapi.NewReauthBackoff(clk)}
}

// attempt asks the backoff for leave to request a new token because an
// API refused the current one; an error means backing off.
func (g *reauthGuard) attempt(ctx context.Context) error {
	again, err := g.backoff.Attempt("Keystone token")
	if err != nil {
		return err
	}
	if again {
		klog.FromContext(ctx).Info("The OpenStack APIs refused a fresh token; requesting another one")
	}
	return nil
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
