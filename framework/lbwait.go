package framework

import (
	"context"
	"time"
)

// DefaultLoadBalancerWait is the --load-balancer-wait default: long enough
// for a healthy cloud to finish most deletes within the sync that asked
// for them (no retry, so no Warning Event from the service controller),
// short enough that a slow one hands the worker back soon.
const DefaultLoadBalancerWait = 30 * time.Second

// firstLook is the pause before the first look at a load balancer the
// cloud is working on; pauses double up to LoadBalancerOptions.RetryDelay.
const firstLook = time.Second

// deleteAndWait deletes lb and, while the driver answers that the cloud is
// still deleting it (ErrProvisioning), waits up to Env.LoadBalancerWait for
// it to be gone, looking at it directly. The result is the driver's last
// answer, or the ErrNotFound that says the load balancer is gone.
func (l *loadBalancer[C, LB]) deleteAndWait(ctx context.Context, lb *LB, req *LoadBalancerRequest[C]) error {
	id := l.driver.Inspect(lb).ID
	deadline := l.now().Add(l.env.LoadBalancerWait)
	for pause := firstLook; ; pause = min(2*pause, l.opts.RetryDelay) {
		err := l.driver.Delete(ctx, lb, req)
		if !IsProvisioning(err) || l.now().Add(pause).After(deadline) {
			return err
		}
		// What the list holds of it is stale now: read it directly.
		l.cacheWriteFailed(id)
		if err := sleepCtx(ctx, pause); err != nil {
			return err
		}
		if lb, err = l.get(ctx, id); err != nil {
			return err
		}
	}
}

// sleepCtx waits d, or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
