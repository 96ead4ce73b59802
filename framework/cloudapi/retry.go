package cloudapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

type idempotentKey struct{}

// MarkIdempotent marks requests made with ctx as safe to retry even when
// their method (POST, PATCH) is not idempotent, e.g. because the request
// carries a client-generated name the cloud deduplicates on.
func MarkIdempotent(ctx context.Context) context.Context {
	return context.WithValue(ctx, idempotentKey{}, true)
}

// IsIdempotent reports whether r may be retried after it may have reached
// the server. GET, HEAD, OPTIONS, PUT and DELETE are idempotent; POST and
// PATCH only if r carries an "Idempotency-Key" or "X-Idempotency-Key" header
// or its context was marked with MarkIdempotent.
func IsIdempotent(r *http.Request) bool {
	if r == nil {
		return false
	}
	switch r.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodDelete:
		return true
	case http.MethodPost, http.MethodPatch:
		if _, ok := r.Header["Idempotency-Key"]; ok {
			return true
		}
		if _, ok := r.Header["X-Idempotency-Key"]; ok {
			return true
		}
		marked, _ := r.Context().Value(idempotentKey{}).(bool)
		return marked
	default:
		return false
	}
}

// retryReason decides whether an attempt that ended with resp or err should
// be retried, and names the reason for the retries metric: the status code,
// "timeout" or "error".
//
// 429 is always retried: the server refused the request before acting on
// it. So is 503 with Retry-After, which asks the client to come back. Other
// 5xx statuses and transport errors are retried only for idempotent
// requests, since the server may already have acted.
func retryReason(ctx context.Context, idempotent bool, resp *http.Response, err error) (string, bool) {
	if ctx.Err() != nil {
		return "", false
	}
	if err != nil {
		var timeout *attemptTimeoutError
		if errors.As(err, &timeout) {
			return "timeout", idempotent
		}
		return "error", idempotent
	}
	code := resp.StatusCode
	switch code {
	case http.StatusTooManyRequests:
		return "429", true
	case http.StatusServiceUnavailable:
		return "503", idempotent || resp.Header.Get("Retry-After") != ""
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusGatewayTimeout:
		return strconv.Itoa(code), idempotent
	default:
		return "", false
	}
}

// backoff returns how long to wait before retry number attempt+1: the
// server's Retry-After if it sent a valid one, else exponential backoff with
// full jitter. Either way the wait is capped by MaxBackoff.
func (t *transport) backoff(attempt int, resp *http.Response) time.Duration {
	if resp != nil {
		if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), t.now()); ok {
			return min(d, t.opts.MaxBackoff)
		}
	}
	ceiling := t.opts.MaxBackoff
	if attempt < 32 {
		if d := t.opts.MinBackoff << attempt; d > 0 && d < ceiling {
			ceiling = d
		}
	}
	return t.jitter(ceiling)
}

// parseRetryAfter parses a Retry-After value in delta-seconds or HTTP-date
// form. A date in the past means "now".
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		if secs > int64(24*time.Hour/time.Second) {
			secs = int64(24 * time.Hour / time.Second) // avoids overflow; MaxBackoff caps it anyway
		}
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// fullJitter returns a uniformly random duration in [0, d].
func fullJitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return rand.N(d + 1)
}

// sleepContext waits for d or until ctx is done, whichever comes first.
func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// drainAndClose discards a little of a response body that will not be used,
// so the connection can be reused, and closes it.
func drainAndClose(resp *http.Response) {
	if resp == nil || resp.Body == nil {
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
}

// requestBudget is Options.Budget for one request, measured with the
// transport's clock from the request's start.
type requestBudget struct {
	t        *transport
	deadline time.Time // zero: unbounded
}

// ErrBudgetSpent is wrapped by the error of a request that ran out of
// Options.Budget.
var ErrBudgetSpent = errors.New("request budget spent")

func (t *transport) startBudget() requestBudget {
	if t.opts.Budget < 0 {
		return requestBudget{t: t}
	}
	return requestBudget{t: t, deadline: t.now().Add(t.opts.Budget)}
}

// attemptTimeout is Options.Timeout, or less when less of the budget is
// left; ok is false when none is.
func (b requestBudget) attemptTimeout() (time.Duration, bool) {
	if b.deadline.IsZero() {
		return b.t.opts.Timeout, true
	}
	left := b.left()
	return min(b.t.opts.Timeout, left), left > 0
}

// allows reports whether a retry after waiting wait would start within the
// budget.
func (b requestBudget) allows(wait time.Duration) bool {
	return b.deadline.IsZero() || b.t.now().Add(wait).Before(b.deadline)
}

// left is what is left of a bounded budget.
func (b requestBudget) left() time.Duration {
	return max(b.deadline.Sub(b.t.now()), 0)
}

func (b requestBudget) spent() error {
	return fmt.Errorf("%w (%s)", ErrBudgetSpent, b.t.opts.Budget)
}
