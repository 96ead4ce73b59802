package framework

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"
)

// loadBalancerCleanupFinalizer is the service controller's finalizer on a
// Service whose load balancer it has yet to delete.
const loadBalancerCleanupFinalizer = "service.kubernetes.io/load-balancer-cleanup"

// inUseError: a Service's ID annotation names a load balancer that another
// existing Service owns.
type inUseError struct {
	id, annotation string
	owner          *corev1.Service
}

func (e *inUseError) Error() string {
	return fmt.Sprintf("load balancer %s, named in annotation %s, belongs to Service %s/%s: not taking it over; remove the annotation (copied from that Service, perhaps) and the Service gets a load balancer of its own",
		e.id, e.annotation, e.owner.Namespace, e.owner.Name)
}

// checkOwner returns an *inUseError when lb, found by req's ID annotation,
// belongs to another Service that still exists (one of type LoadBalancer,
// or whose load balancer the service controller has yet to delete). It
// asks only drivers that can tell ownership (LoadBalancerOwnership), and
// only when lb is not req's own; a load balancer no Service owns is
// adopted, with an Event.
func (l *loadBalancer[C, LB]) checkOwner(ctx context.Context, req *LoadBalancerRequest[C], lb *LB) error {
	own, ok := any(l.driver).(LoadBalancerOwnership[C, LB])
	if !ok || own.Owns(lb, req) {
		return nil
	}
	if sh, ok := any(l.driver).(LoadBalancerSharing[C, LB]); ok && sh.Shares(lb, req) {
		return nil
	}
	services, err := l.env.Services(ctx)
	if err != nil {
		return fmt.Errorf("checking which Service owns load balancer %s: %w", req.ID, err)
	}
	for _, other := range services {
		if other.UID == req.Service.UID || other.Spec.Type != corev1.ServiceTypeLoadBalancer && !slices.Contains(other.Finalizers, loadBalancerCleanupFinalizer) {
			continue
		}
		if oreq, _ := l.request(req.ClusterName, other, nil); own.Owns(lb, oreq) {
			return &inUseError{id: req.ID, annotation: l.opts.IDAnnotation, owner: other}
		}
	}
	if req.Nodes != nil {
		klog.FromContext(ctx).Info("Adopting the load balancer named in the ID annotation", "service", klog.KObj(req.Service), "loadBalancerID", req.ID)
		l.problems.event(req.Service, corev1.EventTypeNormal, EventLoadBalancerAdopted, true, "Adopting load balancer %s, named in annotation %s", req.ID, l.opts.IDAnnotation)
	}
	return nil
}

// Services returns every Service of the cluster: from the shared informer
// when it has synced (no API call), else listed through Client. It is for
// the rare reads a load-balancer driver makes across Services (which one
// owns, or shares, a load balancer).
func (e *Env) Services(ctx context.Context) ([]*corev1.Service, error) {
	if e.Informers != nil {
		if inf := e.Informers.Core().V1().Services(); inf.Informer().HasSynced() {
			return inf.Lister().List(labels.Everything())
		}
	}
	if e.Client == nil {
		return nil, nil
	}
	list, err := e.Client.CoreV1().Services(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]*corev1.Service, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}
