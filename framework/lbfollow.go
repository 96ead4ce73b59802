package framework

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cloud-provider/api"
	"k8s.io/klog/v2"
)

// ProgressAnnotation is on a Service while the cloud works on its load
// balancer (creating it, applying a change, or completing something on it:
// LoadBalancerState.Pending) with the pipeline following it
// (Env.LoadBalancerFollow). Its value says what the cloud is doing,
// e.g. "lb-7 is provisioning". When the load balancer is ready the
// pipeline removes it, and that change makes the service controller sync
// the Service again.
const ProgressAnnotation = "ccmkit.io/load-balancer-progress"

// A load balancer the cloud is still working on is the cloud doing its
// job, not a failure. Handing the Service back as a retry frees the
// worker, but the service controller raises a Warning Event for every
// retry; waiting for the cloud holds a worker for as long as the cloud
// takes. With Env.LoadBalancerFollow the pipeline does neither: the sync
// succeeds at once (with the status known so far), the Service gets
// ProgressAnnotation, and the follower looks at the load balancer (on the
// shared list: one list call for all the load balancers it follows) until
// it is ready, then removes the annotation, which makes the service
// controller sync the Service again: the next step, or the final status.

// follower is the set of load balancers the pipeline follows, one per
// Service, and whether its loop runs.
type follower struct {
	mu      sync.Mutex
	pending map[types.UID]*followed
	running bool
}

type followed struct {
	svc types.NamespacedName
	uid types.UID
	id  string
	// pending is the LoadBalancerState.Pending the LB was followed for; ""
	// when it was followed while provisioning.
	pending string
	pause   time.Duration
	due     time.Time
}

// inProgressAsFollowed reports whether the cloud is still at what the LB
// was followed for: provisioning, or the same Pending. Anything else hands
// the Service back, since the next step may be the sync's to make (a
// Pending that Update must act on, say).
func inProgressAsFollowed(s LoadBalancerState, pending string) bool {
	return s.Provisioning || (pending != "" && s.Pending == pending)
}

// inProgress answers a sync whose load balancer lb the cloud is still
// working on (doing says how: "is provisioning"). Following, the sync
// succeeds with status (nil: the Service's status as it is) and the
// follower takes over; else the answer is a retry.
func (l *loadBalancer[C, LB]) inProgress(ctx context.Context, req *LoadBalancerRequest[C], lb *LB, doing string, status *corev1.LoadBalancerStatus) (*corev1.LoadBalancerStatus, error) {
	state := l.driver.Inspect(lb)
	what := fmt.Sprintf("%s %s", state.ID, doing)
	if !l.env.LoadBalancerFollow || l.env.Client == nil {
		return nil, api.NewRetryError("load balancer "+what, l.opts.RetryDelay)
	}
	svc := req.Service
	if svc.Annotations[ProgressAnnotation] != what {
		if err := patchAnnotations(ctx, l.env.Client, svc.Namespace, svc.Name, map[string]*string{ProgressAnnotation: &what}); err != nil {
			return nil, api.NewRetryError(fmt.Sprintf("load balancer %s (and noting it on the Service failed: %v)", what, err), l.opts.RetryDelay)
		}
	}
	pending := ""
	if !state.Provisioning {
		pending = state.Pending
	}
	l.follow(ctx, svc, state.ID, pending)
	l.problems.event(svc, corev1.EventTypeNormal, EventProvisioningLoadBalancer, true, "Load balancer %s; the Service is synced again when it is ready", what)
	if status != nil {
		return status, nil
	}
	// The status stays as it is: an address the load balancer has now (a
	// VIP whose floating IP is still to come) may not be the one it ends
	// with.
	return svc.Status.LoadBalancer.DeepCopy(), nil
}

// progressDone removes ProgressAnnotation from a Service whose load
// balancer is ready (when the follower did not: a CCM restarted meanwhile).
func (l *loadBalancer[C, LB]) progressDone(ctx context.Context, svc *corev1.Service) error {
	if _, ok := svc.Annotations[ProgressAnnotation]; !ok || l.env.Client == nil {
		return nil
	}
	return patchAnnotations(ctx, l.env.Client, svc.Namespace, svc.Name, map[string]*string{ProgressAnnotation: nil})
}

// follow adds the load balancer id of svc, in progress as pending says
// (see followed.pending), to the follower, and starts its loop (with ctx)
// when it is not running.
func (l *loadBalancer[C, LB]) follow(ctx context.Context, svc *corev1.Service, id, pending string) {
	f := &l.follower
	f.mu.Lock()
	defer f.mu.Unlock()
	if e := f.pending[svc.UID]; e == nil || e.id != id || e.pending != pending {
		if f.pending == nil {
			f.pending = map[types.UID]*followed{}
		}
		f.pending[svc.UID] = &followed{svc: types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}, uid: svc.UID, id: id,
			pending: pending, pause: firstLook, due: l.now().Add(firstLook)}
	}
	if !f.running {
		f.running = true
		go l.followLoop(ctx)
	}
}

// unfollow drops what the follower follows for a Service (deleted).
func (l *loadBalancer[C, LB]) unfollow(uid types.UID) {
	l.follower.mu.Lock()
	defer l.follower.mu.Unlock()
	delete(l.follower.pending, uid)
}

// followLoop looks at each followed load balancer when it is due, until
// none is left or ctx ends (the next follow starts it again).
func (l *loadBalancer[C, LB]) followLoop(ctx context.Context) {
	f := &l.follower
	for {
		f.mu.Lock()
		var next time.Time
		for _, e := range f.pending {
			if next.IsZero() || e.due.Before(next) {
				next = e.due
			}
		}
		if next.IsZero() {
			f.running = false
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
		if err := sleepCtx(ctx, next.Sub(l.now())); err != nil {
			f.mu.Lock()
			f.running = false
			f.mu.Unlock()
			return
		}
		f.mu.Lock()
		var due []followed
		for _, e := range f.pending {
			if !e.due.After(l.now()) {
				due = append(due, *e)
			}
		}
		f.mu.Unlock()
		for _, e := range due {
			l.look(ctx, e)
		}
	}
}

// look looks at one followed load balancer: still in progress (or the API
// failing) is a later look; ready, failed or gone hands the Service back
// to the service controller by removing ProgressAnnotation.
func (l *loadBalancer[C, LB]) look(ctx context.Context, e followed) {
	logger := klog.FromContext(ctx).WithValues("service", e.svc, "loadBalancerID", e.id)
	lb, err := l.get(ctx, e.id)
	switch {
	case err == nil && inProgressAsFollowed(l.driver.Inspect(lb), e.pending):
		l.later(e)
		return
	case err != nil && !IsNotFound(err):
		logger.V(2).Info("Looking at a load balancer in progress failed; looking again later", "err", err)
		l.later(e)
		return
	}
	// Out of the set before the patch: the sync the patch starts may
	// follow the load balancer again.
	if !l.drop(e) {
		return
	}
	err = patchAnnotations(ctx, l.env.Client, e.svc.Namespace, e.svc.Name, map[string]*string{ProgressAnnotation: nil})
	switch {
	case err == nil:
		logger.V(2).Info("Load balancer is ready; the Service is synced again")
	case apierrors.IsNotFound(err):
	default:
		logger.V(2).Info("Handing the Service back failed; looking again later", "err", err)
		l.follower.mu.Lock()
		if f := &l.follower; f.pending[e.uid] == nil {
			e.due = l.now().Add(e.pause)
			f.pending[e.uid] = &e
		}
		l.follower.mu.Unlock()
	}
}

// later schedules the next look at e, the pause doubled.
func (l *loadBalancer[C, LB]) later(e followed) {
	f := &l.follower
	f.mu.Lock()
	defer f.mu.Unlock()
	if cur := f.pending[e.uid]; cur != nil && cur.id == e.id {
		cur.pause = min(2*cur.pause, l.opts.RetryDelay)
		cur.due = l.now().Add(cur.pause)
	}
}

// drop takes e out of the set, reporting whether it was still there.
func (l *loadBalancer[C, LB]) drop(e followed) bool {
	f := &l.follower
	f.mu.Lock()
	defer f.mu.Unlock()
	if cur := f.pending[e.uid]; cur != nil && cur.id == e.id && cur.pending == e.pending {
		delete(f.pending, e.uid)
		return true
	}
	return false
}
