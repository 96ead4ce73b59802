package cloudapi

import (
	"context"
	"fmt"
)

// waitForToken blocks until the rate limiter grants a token or ctx is done,
// and observes the time spent waiting. It behaves like rate.Limiter.Wait but
// reads the time from t.now and waits with t.sleep, so tests can use a fake
// clock.
func (t *transport) waitForToken(ctx context.Context) error {
	if t.limiter == nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	now := t.now()
	reservation := t.limiter.ReserveN(now, 1)
	if !reservation.OK() {
		return fmt.Errorf("rate limiter burst %d cannot grant a token", t.limiter.Burst())
	}
	delay := reservation.DelayFrom(now)
	if deadline, ok := ctx.Deadline(); ok && now.Add(delay).After(deadline) {
		reservation.CancelAt(now)
		return fmt.Errorf("rate limiter delay %s would exceed context deadline", delay)
	}
	if err := t.sleep(ctx, delay); err != nil {
		reservation.CancelAt(t.now())
		return err
	}
	rateLimitWait.WithLabelValues(t.opts.Provider).Observe(delay.Seconds())
	return nil
}
