package cloudapi

import (
	"fmt"
	"time"

	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"
)

// Re-authentication backoff: after a fresh token was refused too, the next
// request for a token waits ReauthMinBackoff, doubling up to
// ReauthMaxBackoff, until the API accepts a token again.
const (
	ReauthMinBackoff = time.Second
	ReauthMaxBackoff = time.Minute
	reauthKey        = "token"
)

// ReauthBackoff paces the token requests a client makes because the API
// refused its token (401). An SDK asks for a new token on every 401; when
// the API refuses every token (a revoked role, a broken auth middleware)
// that is one token request per API call. The first re-authentication
// goes through at once and the following ones back off, until a request
// with a token is accepted (any answer but 401), which resets it: a token
// that expires now and then is renewed without delay every time. A
// token fetched because the old one expired by its own clock is not a
// re-authentication and needs no leave. Safe for concurrent use.
type ReauthBackoff struct {
	backoff *flowcontrol.Backoff
	clock   clock.Clock
}

// NewReauthBackoff returns a backoff on clk (nil: the real clock).
func NewReauthBackoff(clk clock.Clock) *ReauthBackoff {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &ReauthBackoff{backoff: flowcontrol.NewFakeBackOff(ReauthMinBackoff, ReauthMaxBackoff, clk), clock: clk}
}

// Attempt asks leave to request a new token after the API refused one;
// an error (naming what) means backing off, nil counts the attempt.
// Whether this attempt follows an earlier refused one is reported too,
// for the log.
func (g *ReauthBackoff) Attempt(what string) (again bool, err error) {
	now := g.clock.Now()
	if g.backoff.IsInBackOffSinceUpdate(reauthKey, now) {
		return true, fmt.Errorf("not requesting another %s yet: the API refused the last one too; backing off up to %s", what, g.backoff.Get(reauthKey))
	}
	again = g.backoff.Get(reauthKey) > 0
	g.backoff.Next(reauthKey, now)
	return again, nil
}

// Accepted records that the API accepted a token: the next refusal
// re-authenticates at once.
func (g *ReauthBackoff) Accepted() {
	if g.backoff.Get(reauthKey) > 0 {
		g.backoff.Reset(reauthKey)
	}
}
