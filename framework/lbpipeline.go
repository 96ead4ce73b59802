package framework

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/cloud-provider/api"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework/annotations"
)

// ensure is EnsureLoadBalancer (create) and UpdateLoadBalancer (!create):
// check the Service, find or create its LB, record the ID, and bring the
// LB up to date, waiting (up to Env.LoadBalancerWait) while the cloud
// works on it before handing back a retry.
func (l *loadBalancer[C, LB]) ensure(ctx context.Context, clusterName string, svc *corev1.Service, nodes []*corev1.Node, create bool) (*corev1.LoadBalancerStatus, error) {
	logger := klog.FromContext(ctx).WithValues("service", klog.KObj(svc))
	if cur, changed := l.nodes.current(nodes); changed > 0 {
		logger.V(3).Info("Brought the request's Nodes up to date with the Node informer: the request is older than some Nodes' last change", "nodes", len(nodes), "changed", changed)
		nodes = cur
	}
	req, err := l.checkedRequest(clusterName, svc, nodes)
	if err != nil {
		l.recordOwned(ctx, req)
		return nil, err
	}
	req.fresh = l.nodes
	lb, err := l.lookup(ctx, req)
	var inUse *inUseError
	switch {
	case errors.As(err, &inUse):
		l.problems.event(svc, corev1.EventTypeWarning, EventLoadBalancerInUse, false, "%v", err)
		return nil, err
	case IsNotFound(err) && !create && l.deleted(ctx, svc):
		// The node sync of a Service whose own sync just deleted its
		// load balancer: nothing to update, nothing to warn about.
		return nil, nil
	case IsNotFound(err) && !create:
		return nil, fmt.Errorf("no load balancer for the Service yet; its own sync creates it: %w", err)
	case IsNotFound(err):
		lb, err = l.driver.Create(ctx, req)
		if err == nil && l.driver.Inspect(lb).ID == "" {
			// Without the ID the next sync could not find this LB and
			// would create another: the cache is dropped and the next
			// sync finds it by name instead.
			err = errors.New("malformed response: the created load balancer has no ID")
		}
		if err != nil {
			if l.cache != nil {
				l.cache.createFailed()
			}
			return nil, l.retryable(fmt.Errorf("creating load balancer %q: %w", req.Name, err))
		}
		if l.cache != nil {
			l.cache.stored(lb)
		}
		id := l.driver.Inspect(lb).ID
		logger.Info("Created load balancer", "loadBalancerID", id)
		l.problems.event(svc, corev1.EventTypeNormal, EventCreatedLoadBalancer, false, "Created load balancer %s", id)
	case err != nil:
		return nil, l.retryable(err)
	}

	// The ID goes on the Service before any wait: a CCM that dies now finds
	// the LB by it.
	state := l.driver.Inspect(lb)
	if state.ID == "" {
		return nil, l.retryable(errors.New("malformed response: the cloud's load balancer has no ID"))
	}
	if err := l.recordID(ctx, svc, state.ID); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, l.serviceGone(ctx, req, lb, err)
		}
		return nil, err
	}
	if state.Provisioning {
		return l.inProgress(ctx, req, lb, "is provisioning", nil)
	}
	if state.Failed != "" {
		l.problems.event(svc, corev1.EventTypeWarning, EventLoadBalancerFailed, false, "Load balancer %s is in an error state: %s", state.ID, state.Failed)
	}
	changed, err := l.driver.Update(ctx, lb, req)
	switch {
	case err != nil:
		l.cacheWriteFailed(state.ID)
		return nil, l.retryable(fmt.Errorf("updating load balancer %s: %w", state.ID, err))
	case changed:
		if l.cache != nil {
			l.cache.stored(lb)
		}
		logger.Info("Updated load balancer", "loadBalancerID", state.ID)
		l.problems.event(svc, corev1.EventTypeNormal, EventUpdatedLoadBalancer, false, "Updated load balancer %s", state.ID)
	}
	// Update may have written, or read what the list lacked (a listener's
	// PROXY protocol, say): the status comes from lb as it left it.
	state = l.driver.Inspect(lb)
	switch {
	case state.Provisioning:
		// The cloud applies the change; a driver that writes in steps has
		// the next one to make when it is done.
		return l.inProgress(ctx, req, lb, "is applying changes", nil)
	case state.Failed != "":
		return nil, fmt.Errorf("load balancer %s is in an error state: %s", state.ID, state.Failed)
	case state.Pending != "" && (len(state.IPs) > 0 || state.Hostname != ""):
		// The LB works: its addresses are published (a user may need them
		// to finish what is pending, e.g. point a domain at them).
		return l.inProgress(ctx, req, lb, state.Pending, l.ingressStatus(req, state))
	case state.Pending != "":
		return l.inProgress(ctx, req, lb, state.Pending, nil)
	case len(state.IPs) == 0 && state.Hostname == "":
		return nil, api.NewRetryError(fmt.Sprintf("load balancer %s has no address yet", state.ID), l.opts.RetryDelay)
	}
	if err := l.progressDone(ctx, svc); err != nil {
		return nil, fmt.Errorf("removing annotation %s: %w", ProgressAnnotation, err)
	}
	return l.ingressStatus(req, state), nil
}

// recordOwned is what the pipeline does for a Service it refuses (req
// decoded with defaults where annotations did not): the cloud is not
// written and the Service keeps its last good load balancer, but one that
// the Service owns and whose ID its annotation lacks (a CCM created it and
// died before recording it) gets its ID recorded, so that no load balancer
// of the cloud is named by no Service. Reads only, once per version of
// the Service (as its Warning), and only while the annotation is unset; a
// failed lookup changes nothing.
func (l *loadBalancer[C, LB]) recordOwned(ctx context.Context, req *LoadBalancerRequest[C]) {
	if req == nil || req.ID != "" || l.opts.IDAnnotation == "" || l.env.Client == nil || !l.problems.first(req.Service, "\x00lookup refused") {
		return
	}
	lb, err := l.lookup(ctx, req)
	if err != nil {
		return
	}
	id := l.driver.Inspect(lb).ID
	if err := l.recordID(ctx, req.Service, id); err != nil {
		klog.FromContext(ctx).V(2).Info("Could not record the load balancer of a Service refused", "service", klog.KObj(req.Service), "loadBalancerID", id, "err", err)
	}
}

// checkedRequest decodes svc's annotations and runs every check on the
// result: the config's own Validate and the driver's LoadBalancerValidator
// run even when some annotations did not decode (those fields then hold
// their defaults), so one Warning Event lists every problem at once and
// nothing is written. The request is returned with the error too.
func (l *loadBalancer[C, LB]) checkedRequest(clusterName string, svc *corev1.Service, nodes []*corev1.Node) (*LoadBalancerRequest[C], error) {
	req, annotationErr := l.request(clusterName, svc, nodes)
	if v, ok := any(req.Config).(interface{ Validate() error }); ok {
		annotationErr = errors.Join(annotationErr, v.Validate())
	}
	var serviceErr error
	if v, ok := any(l.driver).(LoadBalancerValidator[C]); ok {
		serviceErr = v.Validate(req)
	}
	switch {
	case annotationErr != nil:
		err := errors.Join(annotationErr, serviceErr)
		l.problems.event(svc, corev1.EventTypeWarning, EventInvalidAnnotation, false, "%s", oneLine(err))
		return req, err
	case serviceErr != nil:
		l.problems.event(svc, corev1.EventTypeWarning, EventInvalidService, false, "%s", oneLine(serviceErr))
		return req, serviceErr
	}
	return req, nil
}

// oneLine is err's message with the lines of joined errors separated by
// "; ", as an Event shows it.
func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

// request decodes svc's annotations into a LoadBalancerRequest. The request
// is usable (with defaults) even when decoding failed; the error lists every
// annotation that did not decode. Unknown keys under the prefix only warn.
func (l *loadBalancer[C, LB]) request(clusterName string, svc *corev1.Service, nodes []*corev1.Node) (*LoadBalancerRequest[C], error) {
	cfg := new(C)
	if l.opts.NewConfig != nil {
		cfg = l.opts.NewConfig()
	}
	res, err := annotations.Decode(svc.Annotations, l.opts.AnnotationPrefix, cfg)
	// The ID annotation lives under the prefix too, but is the pipeline's.
	unknown := slices.DeleteFunc(res.Unknown, func(k string) bool { return k == l.opts.IDAnnotation })
	if len(unknown) > 0 && nodes != nil {
		l.problems.event(svc, corev1.EventTypeWarning, EventUnknownAnnotation, false, "Unknown annotations ignored: %v", unknown)
	}
	req := &LoadBalancerRequest[C]{ClusterName: clusterName, Service: svc, Nodes: nodes, Config: cfg}
	if l.opts.IDAnnotation != "" {
		req.ID = svc.Annotations[l.opts.IDAnnotation]
	}
	if l.opts.Name != nil {
		req.Name = l.opts.Name(clusterName, svc, cfg)
	} else {
		req.Name = cloudprovider.DefaultLoadBalancerName(svc)
	}
	return req, err
}

// lookup finds the Service's LB: by the ID annotation first (adopting an
// LB made outside Kubernetes or by an earlier CCM, but never one another
// Service owns: *inUseError), then by the driver's ownership rules; from
// the shared list when there is one.
func (l *loadBalancer[C, LB]) lookup(ctx context.Context, req *LoadBalancerRequest[C]) (*LB, error) {
	if req.ID != "" {
		lb, err := l.get(ctx, req.ID)
		switch {
		case err == nil:
			if err := l.checkOwner(ctx, req, lb); err != nil {
				return nil, err
			}
			return lb, nil
		case !IsNotFound(err):
			return nil, err
		}
		klog.FromContext(ctx).Info("Load balancer in the ID annotation is gone; looking it up by owner", "service", klog.KObj(req.Service), "loadBalancerID", req.ID)
	}
	if l.cache != nil {
		return l.cache.find(ctx, req)
	}
	return l.driver.Find(ctx, req)
}

// lookupOwn is lookup for reads and deletes: an ID annotation naming
// another Service's LB is ignored, and the Service's own LB, if any, is
// looked up by owner.
func (l *loadBalancer[C, LB]) lookupOwn(ctx context.Context, req *LoadBalancerRequest[C]) (*LB, error) {
	lb, err := l.lookup(ctx, req)
	var inUse *inUseError
	if !errors.As(err, &inUse) {
		return lb, err
	}
	klog.FromContext(ctx).V(2).Info("Ignoring the ID annotation: it names another Service's load balancer", "service", klog.KObj(req.Service), "loadBalancerID", req.ID, "owner", klog.KObj(inUse.owner))
	if l.cache != nil {
		return l.cache.find(ctx, req)
	}
	return l.driver.Find(ctx, req)
}

// get returns the LB with this ID.
func (l *loadBalancer[C, LB]) get(ctx context.Context, id string) (*LB, error) {
	if l.cache != nil {
		return l.cache.get(ctx, id)
	}
	return l.driver.Get(ctx, id)
}

func (l *loadBalancer[C, LB]) cacheRemoved(id string) {
	if l.cache != nil {
		l.cache.removed(id)
	}
}

func (l *loadBalancer[C, LB]) cacheWriteFailed(id string) {
	if l.cache != nil {
		l.cache.writeFailed(id)
	}
}

// recordID writes the LB ID annotation back to the Service, so the next
// sync (or the next CCM) finds the LB by ID.
func (l *loadBalancer[C, LB]) recordID(ctx context.Context, svc *corev1.Service, id string) error {
	if l.opts.IDAnnotation == "" || id == "" || svc.Annotations[l.opts.IDAnnotation] == id || l.env.Client == nil {
		return nil
	}
	if err := patchAnnotation(ctx, l.env.Client, svc, l.opts.IDAnnotation, id); err != nil {
		return fmt.Errorf("recording load balancer ID %s on the Service: %w", id, err)
	}
	return nil
}

// deleted reports whether svc is being deleted or no longer wants a load
// balancer, by the object the service controller passed or, that being
// from its cache, by the API server (one GET, made only when the load
// balancer is missing in a node sync).
func (l *loadBalancer[C, LB]) deleted(ctx context.Context, svc *corev1.Service) bool {
	if cleaningUp(svc) {
		return true
	}
	if l.env.Client == nil {
		return false
	}
	fresh, err := l.env.Client.CoreV1().Services(svc.Namespace).Get(ctx, svc.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return true
	case err != nil:
		return false
	}
	return fresh.UID != svc.UID || cleaningUp(fresh)
}

// serviceGone deletes lb, which the sync of a Service that is no longer
// in the API server created or found (err says the Service is not
// found): the Service was deleted before the load balancer's ID reached
// it, perhaps before the service controller's finalizer did, and nothing
// else would delete a load balancer that no Service names.
func (l *loadBalancer[C, LB]) serviceGone(ctx context.Context, req *LoadBalancerRequest[C], lb *LB, err error) error {
	id := l.driver.Inspect(lb).ID
	klog.FromContext(ctx).Info("The Service is gone; deleting its load balancer", "service", klog.KObj(req.Service), "loadBalancerID", id)
	if derr := l.delete(ctx, req, lb, nil); derr != nil {
		return errors.Join(err, derr)
	}
	return err
}

func (l *loadBalancer[C, LB]) retryable(err error) error {
	if IsProvisioning(err) {
		return api.NewRetryError(err.Error(), l.opts.RetryDelay)
	}
	var retry *api.RetryError
	if errors.As(err, &retry) {
		return retry
	}
	return err
}

// ingressStatus is the Service status for the LB: the driver's state, with
// the Service's own hostname (LoadBalancerOptions.Hostname) if it has one.
func (l *loadBalancer[C, LB]) ingressStatus(req *LoadBalancerRequest[C], s LoadBalancerState) *corev1.LoadBalancerStatus {
	if l.opts.Hostname != nil {
		if h := l.opts.Hostname(req.Config); h != "" {
			s.Hostname = h
		}
	}
	return ingressStatus(s)
}

// ingressStatus renders a driver's state as the Service status. A hostname,
// when the driver reports one, is published alone: clouds use it so that
// in-cluster clients go through the LB (PROXY protocol, TLS) instead of
// kube-proxy's shortcut to the IP.
func ingressStatus(s LoadBalancerState) *corev1.LoadBalancerStatus {
	status := &corev1.LoadBalancerStatus{}
	if s.Hostname != "" {
		status.Ingress = []corev1.LoadBalancerIngress{{Hostname: s.Hostname}}
		return status
	}
	for _, ip := range s.IPs {
		ingress := corev1.LoadBalancerIngress{IP: ip, Hostname: s.DNSNames[ip]}
		if s.ProxyProtocol {
			proxy := corev1.LoadBalancerIPModeProxy
			ingress.IPMode = &proxy
		}
		status.Ingress = append(status.Ingress, ingress)
	}
	return status
}
