package framework

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/cloud-provider/api"
)

// DefaultLoadBalancerWait is the --load-balancer-wait default: long enough
// for a healthy cloud to finish most creates and changes within the sync
// that asked for them (no retry, so no Warning Event from the service
// controller), short enough that a slow one hands the worker back soon.
const DefaultLoadBalancerWait = 30 * time.Second

// firstLook is the pause before the first look at a load balancer the
// pipeline waits for; pauses double up to LoadBalancerOptions.RetryDelay.
const firstLook = time.Second

// settle waits, until deadline, for the cloud to finish working on the
// load balancer id (provisioning it, or applying a change) and returns it
// then. The looks go through the shared list when the driver has one, so
// all the Services waiting at one moment share one list call. A
// provisioning load balancer is the cloud doing its job, not a problem: it
// gets a Normal Event. When deadline comes first, the answer is a retry
// (what says the load balancer "is provisioning" or "is applying
// changes"), and the service controller asks again without blocking a
// worker longer.
func (l *loadBalancer[C, LB]) settle(ctx context.Context, req *LoadBalancerRequest[C], id string, deadline time.Time, doing string) (*LB, error) {
	retry := api.NewRetryError(fmt.Sprintf("load balancer %s %s", id, doing), l.opts.RetryDelay)
	if l.now().Add(firstLook).After(deadline) {
		return nil, retry
	}
	l.problems.event(req.Service, corev1.EventTypeNormal, EventProvisioningLoadBalancer, true, "Waiting for load balancer %s, which %s", id, doing)
	for pause := firstLook; !l.now().Add(pause).After(deadline); pause = min(2*pause, l.opts.RetryDelay) {
		if err := sleepCtx(ctx, pause); err != nil {
			return nil, err
		}
		lb, err := l.get(ctx, id)
		if err != nil {
			return nil, l.retryable(fmt.Errorf("waiting for load balancer %s: %w", id, err))
		}
		if !l.driver.Inspect(lb).Provisioning {
			return lb, nil
		}
	}
	return nil, retry
}

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
