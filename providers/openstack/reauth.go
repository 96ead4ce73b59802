package openstack

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Re-authentication backoff: after a fresh token was refused too, the next
// re-authentication waits reauthMinBackoff, doubling up to reauthMaxBackoff,
// until an API accepts a token again.
const (
	reauthMinBackoff = time.Second
	reauthMaxBackoff = time.Minute
	reauthKey        = "keystone"
)

// reauthGuard stands between gophercloud and its re-authentication.
// gophercloud requests a new token whenever an API answers 401 with the
// current one; when the APIs refuse every token (a revoked role, a broken
// Keystone middleware) that is one token request per API call. The guard
// lets the first re-authentication through at once and backs off the
// following ones, until a request with a token is accepted (any answer but
// 401), which resets it: a token that expires now and then is renewed
// without delay every time.
type reauthGuard struct {
	backoff *flowcontrol.Backoff
	clock   clock.Clock
}

func newReauthGuard(clk clock.Clock) *reauthGuard {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &reauthGuard{backoff: flowcontrol.NewFakeBackOff(reauthMinBackoff, reauthMaxBackoff, clk), clock: clk}
}

// wrap returns reauth (gophercloud's ReauthFunc) behind the backoff.
func (g *reauthGuard) wrap(reauth func(context.Context) error) func(context.Context) error {
	if reauth == nil {
		return nil
	}
	return func(ctx context.Context) error {
		now := g.clock.Now()
		if g.backoff.IsInBackOffSinceUpdate(reauthKey, now) {
			return fmt.Errorf("not requesting another Keystone token yet: the APIs refused the last one too; backing off up to %s", g.backoff.Get(reauthKey))
		}
		if d := g.backoff.Get(reauthKey); d > 0 {
			klog.FromContext(ctx).Info("The OpenStack APIs refused a fresh token; requesting another one", "nextAttemptIn", min(2*d, reauthMaxBackoff))
		}
		g.backoff.Next(reauthKey, now)
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
	if err == nil && resp.StatusCode != http.StatusUnauthorized && r.Header.Get("X-Auth-Token") != "" &&
		t.guard.backoff.Get(reauthKey) > 0 {
		t.guard.backoff.Reset(reauthKey)
	}
	return resp, err
}
