package triton

import (
	"context"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/cloud-provider/service/helpers"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
)

// This file is what TRITON_LB_MODE none leaves of the load balancers. Both
// modes need CNS, so an account without it (triton_cns_enabled off) can
// run the CCM, its node controllers and its firewall, only without load
// balancers: the provider then has none (LoadBalancer returns nil), and
// the framework runs no service controller. Nothing would then tell the
// owner of a Service of type LoadBalancer why it never gets an address:
// the controller here does, with one Warning Event per Service.

// LBDisabledControllerName names, for --controllers, the controller that
// warns the Services of type LoadBalancer that TRITON_LB_MODE none leaves
// without a load balancer. In any other mode it has nothing to do.
const LBDisabledControllerName = "triton-lb-disabled"

// EventLoadBalancersDisabled is the reason of the Warning Event on a
// Service of type LoadBalancer when TRITON_LB_MODE is none.
const EventLoadBalancersDisabled = "LoadBalancersDisabled"

// lbDisabledMessage is that Event's message; lbFinalizerMessage is added
// for a Service whose load balancer was made in another mode, and which
// the service controller no longer runs to delete.
const (
	lbDisabledMessage = "No load balancer: the cloud controller manager runs with TRITON_LB_MODE=none, which turns Triton load balancers off, so this Service gets no external address. " +
		"Triton's load balancers need CNS: turn it on for the account (triton account update triton_cns_enabled=true) and set TRITON_LB_MODE to auto, moirai or cns; or use a NodePort Service."
	lbFinalizerMessage = " The Service still has the finalizer " + helpers.LoadBalancerCleanupFinalizer + " of a load balancer made in another mode, which only the service controller removes, so deleting the Service waits: " +
		"set TRITON_LB_MODE back to have its load balancer deleted with it, or remove the finalizer and delete the load balancer yourself."
)

// lbDisabledController records one Warning Event on each Service the
// service controller would serve (see unserved), the first time it sees
// it so: at start for those there already, then for each one created so
// or changed to be. A Service that stops wanting a load balancer, or is
// deleted, is forgotten, so it is warned again if it wants one again; a
// restarted CCM warns each once more.
type lbDisabledController struct {
	recorder record.EventRecorder

	mu     sync.Mutex
	warned map[types.UID]bool
	// stopWatching removes the Service event handler.
	stopWatching func()
}

// lbDisabledControllerFor is the framework.Controller of the controller.
func (p *Provider) lbDisabledControllerFor() framework.Controller {
	return framework.Controller{
		Name: LBDisabledControllerName,
		Run: func(ctx context.Context, env *framework.Env) error {
			if p.api == nil || p.cfg.LoadBalancer.Mode != modeNone || env.Recorder == nil {
				return nil
			}
			c, err := newLBDisabledController(env)
			if err != nil {
				return err
			}
			defer c.stopWatching()
			klog.FromContext(ctx).V(2).Info("Warning Services of type LoadBalancer that they get none (TRITON_LB_MODE none)", "controller", LBDisabledControllerName)
			// Start the Service informer just asked for (see
			// framework.Controller).
			env.Informers.Start(ctx.Done())
			<-ctx.Done()
			return nil
		},
	}
}

// newLBDisabledController registers the controller's Service event
// handler.
func newLBDisabledController(env *framework.Env) (*lbDisabledController, error) {
	c := &lbDisabledController{recorder: env.Recorder, warned: map[types.UID]bool{}}
	informer := env.Informers.Core().V1().Services().Informer()
	reg, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.observe,
		UpdateFunc: func(_, newObj any) { c.observe(newObj) },
		DeleteFunc: c.forget,
	})
	if err != nil {
		return nil, fmt.Errorf("watching Services: %w", err)
	}
	c.stopWatching = func() { _ = informer.RemoveEventHandler(reg) }
	return c, nil
}

// observe warns svc once while the service controller would serve it.
func (c *lbDisabledController) observe(obj any) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return
	}
	c.mu.Lock()
	warn := unserved(svc)
	first := warn && !c.warned[svc.UID]
	if warn {
		c.warned[svc.UID] = true
	} else {
		delete(c.warned, svc.UID)
	}
	c.mu.Unlock()
	if !first {
		return
	}
	msg := lbDisabledMessage
	if hasCleanupFinalizer(svc) {
		msg += lbFinalizerMessage
	}
	c.recorder.Event(svc, corev1.EventTypeWarning, EventLoadBalancersDisabled, msg)
}

// forget drops a deleted Service.
func (c *lbDisabledController) forget(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if svc, ok := obj.(*corev1.Service); ok {
		c.mu.Lock()
		delete(c.warned, svc.UID)
		c.mu.Unlock()
	}
}

// unserved reports whether the service controller, were it running,
// would act on svc: give it a load balancer (of type LoadBalancer, without
// a loadBalancerClass, which is another implementation's, not being
// deleted), or delete the one it made (the cleanup finalizer).
func unserved(svc *corev1.Service) bool {
	wants := svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.LoadBalancerClass == nil && svc.DeletionTimestamp == nil
	return wants || hasCleanupFinalizer(svc)
}

func hasCleanupFinalizer(svc *corev1.Service) bool {
	return slices.Contains(svc.Finalizers, helpers.LoadBalancerCleanupFinalizer)
}
