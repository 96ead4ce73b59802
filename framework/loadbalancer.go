package framework

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/cloud-provider/api"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework/annotations"
)

// LoadBalancerDriver is what a provider implements for its cloud's load
// balancers; NewLoadBalancer wraps it in the pipeline every cloud shares.
// C is the provider's annotation struct (see package annotations), LB the
// cloud's load-balancer object as its SDK returns it.
//
// Lookups return an error wrapping ErrNotFound when the LB does not exist.
// Any method may return an error wrapping ErrProvisioning to mean "busy, try
// again shortly"; the pipeline turns it into a requeue, never a blocking wait.
type LoadBalancerDriver[C, LB any] interface {
	// Get returns the LB with this cloud ID (from the ID annotation).
	Get(ctx context.Context, id string) (*LB, error)
	// Find returns the LB owned by this Service, by ownership tag or name.
	Find(ctx context.Context, req *LoadBalancerRequest[C]) (*LB, error)
	// Create provisions the LB as req describes.
	Create(ctx context.Context, req *LoadBalancerRequest[C]) (*LB, error)
	// Update makes lb match req, writing only what differs (reconcile.Diff
	// helps), and reports whether it wrote anything. A second Update with
	// nothing changed must make zero cloud writes. Update leaves *lb as the
	// cloud now reports it (most APIs answer a write with the object; what
	// a driver reads to complete a listed LB goes there too), so the
	// pipeline needs no extra read and takes the Service's status from it:
	// with a LoadBalancerLister, when it wrote, that value also replaces the
	// LB in the shared list.
	// lb may be a shallow copy of a listed LB, so Update assigns new slices
	// and maps to it (*lb = *updated) and never modifies the ones it has.
	Update(ctx context.Context, lb *LB, req *LoadBalancerRequest[C]) (changed bool, err error)
	// Delete removes lb and everything the driver created for it.
	Delete(ctx context.Context, lb *LB, req *LoadBalancerRequest[C]) error
	// Inspect reports what the pipeline needs to know about lb.
	Inspect(lb *LB) LoadBalancerState
}

// LoadBalancerLister is implemented by drivers whose cloud lists all its load
// balancers in a few calls. The pipeline then serves Get and Find from one
// shared list, refreshed when it is older than Env.LoadBalancerCacheTTL, and
// writes its own creates, updates and deletes through to it: a burst of new
// Services costs one list and a create each, LBs waiting to become active
// share one list per poll instead of a GET each, and a node change costs
// one update per LB with no reads. Get, Find and Create are still called
// when the list cannot answer (an LB newer than the list, a failing list).
//
// The pipeline hands out shallow copies of listed LBs: drivers must not
// modify the slices and maps of an LB they are given, only replace them.
type LoadBalancerLister[C, LB any] interface {
	// List returns every load balancer the driver may own (all pages).
	List(ctx context.Context) ([]*LB, error)
	// Owns reports whether lb is the one Find would return for req. It runs
	// for each listed LB on every lookup, so it must be cheap and make no
	// calls.
	Owns(lb *LB, req *LoadBalancerRequest[C]) bool
}

// LoadBalancerValidator is implemented by drivers that reject Services their
// cloud cannot serve (a protocol it lacks, source ranges it cannot enforce).
// Validate runs after the annotations are decoded and before any cloud
// call; an error becomes a Warning Event on the Service and nothing is
// written.
type LoadBalancerValidator[C any] interface {
	Validate(req *LoadBalancerRequest[C]) error
}

// LoadBalancerState is a driver's summary of one cloud LB.
type LoadBalancerState struct {
	ID string
	// Provisioning: the cloud is still creating or changing the LB.
	Provisioning bool
	// Failed, when non-empty, is the cloud's reason the LB is broken.
	Failed string
	// IPs and Hostname become status.loadBalancer.ingress.
	IPs      []string
	Hostname string
	// ProxyProtocol: the LB speaks PROXY protocol to the nodes, so traffic to
	// the LB IP must not be short-circuited by kube-proxy (ipMode: Proxy).
	ProxyProtocol bool
}

// LoadBalancerRequest is one Service's desired load balancer.
type LoadBalancerRequest[C any] struct {
	ClusterName string
	Service     *corev1.Service
	// Nodes are the nodes the service controller selected as members; nil
	// on delete.
	Nodes []*corev1.Node
	// Name is the LB name (LoadBalancerOptions.Name, default
	// cloudprovider.DefaultLoadBalancerName).
	Name string
	// ID is the LB ID from the Service's ID annotation, "" when none.
	ID string
	// Config is the decoded annotation struct.
	Config *C
}

// LoadBalancerOptions configures NewLoadBalancer.
type LoadBalancerOptions[C any] struct {
	// AnnotationPrefix is the provider's annotation prefix; keys under it
	// that no field claims are reported as Warning Events.
	AnnotationPrefix string
	// IDAnnotation, when set, is the Service annotation that records the
	// cloud LB ID: read to find (and adopt) the LB, written back after create.
	IDAnnotation string
	// Name returns the LB name for a Service; nil means
	// cloudprovider.DefaultLoadBalancerName.
	Name func(clusterName string, svc *corev1.Service, cfg *C) string
	// NewConfig returns a config pre-filled with cluster-wide defaults,
	// which annotations override; nil means the zero C.
	NewConfig func() *C
	// RetryDelay is the requeue delay while the cloud is provisioning;
	// default 5s.
	RetryDelay time.Duration
	// Hostname, when set and not "", is published as the Service's ingress
	// instead of the LB's addresses (e.g. a hostname annotation), so that
	// in-cluster clients resolve it and go through the LB.
	Hostname func(cfg *C) string
}

// Event reasons the pipeline emits on Services.
const (
	EventInvalidAnnotation     = "InvalidAnnotation"
	EventInvalidService        = "InvalidService"
	EventUnknownAnnotation     = "UnknownAnnotation"
	EventCreatedLoadBalancer   = "CreatedLoadBalancer"
	EventUpdatedLoadBalancer   = "UpdatedLoadBalancer"
	EventDeletedLoadBalancer   = "DeletedLoadBalancer"
	EventLoadBalancerFailed    = "LoadBalancerFailed"
	EventLoadBalancerAdopted   = "AdoptedLoadBalancer"
	defaultLoadBalancerRetryIn = 5 * time.Second
)

// NewLoadBalancer builds the cloudprovider.LoadBalancer for a driver. env
// supplies the event recorder and the client used to write the ID annotation.
//
// When driver implements LoadBalancerLister and env.LoadBalancerCacheTTL is
// not negative, lookups are served from a shared list of the cloud's LBs.
func NewLoadBalancer[C, LB any](env *Env, driver LoadBalancerDriver[C, LB], opts LoadBalancerOptions[C]) cloudprovider.LoadBalancer {
	if opts.RetryDelay <= 0 {
		opts.RetryDelay = defaultLoadBalancerRetryIn
	}
	l := &loadBalancer[C, LB]{env: env, driver: driver, opts: opts}
	if lister, ok := any(driver).(LoadBalancerLister[C, LB]); ok && env.LoadBalancerCacheTTL >= 0 {
		l.cache = newLBCache(driver, lister, env.LoadBalancerCacheTTL)
	}
	return l
}

type loadBalancer[C, LB any] struct {
	env    *Env
	driver LoadBalancerDriver[C, LB]
	opts   LoadBalancerOptions[C]
	locks  sync.Map // Service UID -> *sync.Mutex
	// cache serves lookups from a shared list; nil: direct driver calls.
	cache *lbCache[C, LB]
}

var _ cloudprovider.LoadBalancer = (*loadBalancer[struct{}, struct{}])(nil)

// GetLoadBalancer reports the Service's LB, if it exists (from the shared
// list when the driver is a LoadBalancerLister).
func (l *loadBalancer[C, LB]) GetLoadBalancer(ctx context.Context, clusterName string, svc *corev1.Service) (*corev1.LoadBalancerStatus, bool, error) {
	req, _ := l.request(clusterName, svc, nil)
	lb, err := l.lookup(ctx, req)
	if IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return l.ingressStatus(req, l.driver.Inspect(lb)), true, nil
}

// GetLoadBalancerName returns the LB name the pipeline uses for svc.
func (l *loadBalancer[C, LB]) GetLoadBalancerName(_ context.Context, clusterName string, svc *corev1.Service) string {
	req, _ := l.request(clusterName, svc, nil)
	return req.Name
}

// EnsureLoadBalancer creates or updates svc's LB and returns its status.
func (l *loadBalancer[C, LB]) EnsureLoadBalancer(ctx context.Context, clusterName string, svc *corev1.Service, nodes []*corev1.Node) (*corev1.LoadBalancerStatus, error) {
	defer l.lock(svc)()
	return l.ensure(ctx, clusterName, svc, nodes, true)
}

// UpdateLoadBalancer brings an existing LB up to date with nodes. It never
// creates one: the service controller calls it from its node sync, which
// runs beside the Service's own sync, and a create from both would make two
// LBs. A missing LB is the Service sync's to create.
func (l *loadBalancer[C, LB]) UpdateLoadBalancer(ctx context.Context, clusterName string, svc *corev1.Service, nodes []*corev1.Node) error {
	defer l.lock(svc)()
	_, err := l.ensure(ctx, clusterName, svc, nodes, false)
	return err
}

// lock serializes the pipeline per Service within this process: the service
// controller's node sync and its Service workers can act on one Service at
// the same time. It returns the unlock function.
func (l *loadBalancer[C, LB]) lock(svc *corev1.Service) func() {
	mu, _ := l.locks.LoadOrStore(svc.UID, &sync.Mutex{})
	m := mu.(*sync.Mutex)
	m.Lock()
	return m.Unlock
}

// EnsureLoadBalancerDeleted deletes svc's LB; an LB that is already gone is
// success. Invalid annotations never block a delete.
func (l *loadBalancer[C, LB]) EnsureLoadBalancerDeleted(ctx context.Context, clusterName string, svc *corev1.Service) error {
	defer l.lock(svc)()
	req, _ := l.request(clusterName, svc, nil)
	lb, err := l.lookup(ctx, req)
	if IsNotFound(err) {
		return nil
	}
	if err != nil {
		return l.retryable(err)
	}
	state := l.driver.Inspect(lb)
	if err := l.driver.Delete(ctx, lb, req); err != nil {
		if IsNotFound(err) {
			l.cacheRemoved(state.ID)
			return nil
		}
		l.cacheWriteFailed(state.ID)
		return l.retryable(fmt.Errorf("deleting load balancer %s: %w", state.ID, err))
	}
	l.cacheRemoved(state.ID)
	l.locks.Delete(svc.UID)
	klog.FromContext(ctx).Info("Deleted load balancer", "service", klog.KObj(svc), "loadBalancerID", state.ID)
	l.event(svc, corev1.EventTypeNormal, EventDeletedLoadBalancer, "Deleted load balancer %s", state.ID)
	return nil
}

func (l *loadBalancer[C, LB]) ensure(ctx context.Context, clusterName string, svc *corev1.Service, nodes []*corev1.Node, create bool) (*corev1.LoadBalancerStatus, error) {
	logger := klog.FromContext(ctx).WithValues("service", klog.KObj(svc))
	req, err := l.request(clusterName, svc, nodes)
	if err != nil {
		// Bad input: say so on the Service and touch nothing in the cloud.
		l.event(svc, corev1.EventTypeWarning, EventInvalidAnnotation, "%v", err)
		return nil, err
	}
	if v, ok := any(l.driver).(LoadBalancerValidator[C]); ok {
		if err := v.Validate(req); err != nil {
			l.event(svc, corev1.EventTypeWarning, EventInvalidService, "%v", err)
			return nil, err
		}
	}

	lb, err := l.lookup(ctx, req)
	switch {
	case IsNotFound(err) && !create:
		return nil, fmt.Errorf("no load balancer for the Service yet; its own sync creates it: %w", err)
	case IsNotFound(err):
		if lb, err = l.driver.Create(ctx, req); err != nil {
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
		l.event(svc, corev1.EventTypeNormal, EventCreatedLoadBalancer, "Created load balancer %s", id)
	case err != nil:
		return nil, l.retryable(err)
	}

	state := l.driver.Inspect(lb)
	if err := l.recordID(ctx, svc, state.ID); err != nil {
		return nil, err
	}
	if state.Provisioning {
		return nil, api.NewRetryError(fmt.Sprintf("load balancer %s is provisioning", state.ID), l.opts.RetryDelay)
	}
	if state.Failed != "" {
		l.event(svc, corev1.EventTypeWarning, EventLoadBalancerFailed, "Load balancer %s is in an error state: %s", state.ID, state.Failed)
	}

	changed, err := l.driver.Update(ctx, lb, req)
	if err != nil {
		l.cacheWriteFailed(state.ID)
		return nil, l.retryable(fmt.Errorf("updating load balancer %s: %w", state.ID, err))
	}
	if changed {
		if l.cache != nil {
			l.cache.stored(lb)
		}
		logger.Info("Updated load balancer", "loadBalancerID", state.ID)
		l.event(svc, corev1.EventTypeNormal, EventUpdatedLoadBalancer, "Updated load balancer %s", state.ID)
	}
	// Update may have written, or read what the list lacked (a listener's
	// PROXY protocol, say): the status comes from lb as it left it.
	state = l.driver.Inspect(lb)
	switch {
	case state.Provisioning:
		return nil, api.NewRetryError(fmt.Sprintf("load balancer %s is applying changes", state.ID), l.opts.RetryDelay)
	case state.Failed != "":
		return nil, fmt.Errorf("load balancer %s is in an error state: %s", state.ID, state.Failed)
	case len(state.IPs) == 0 && state.Hostname == "":
		return nil, api.NewRetryError(fmt.Sprintf("load balancer %s has no address yet", state.ID), l.opts.RetryDelay)
	}
	return l.ingressStatus(req, state), nil
}

// request decodes svc's annotations into a LoadBalancerRequest. The request
// is usable (with defaults) even when decoding failed; the error lists every
// bad annotation. Unknown keys under the prefix only warn.
func (l *loadBalancer[C, LB]) request(clusterName string, svc *corev1.Service, nodes []*corev1.Node) (*LoadBalancerRequest[C], error) {
	cfg := new(C)
	if l.opts.NewConfig != nil {
		cfg = l.opts.NewConfig()
	}
	res, err := annotations.Decode(svc.Annotations, l.opts.AnnotationPrefix, cfg)
	if err == nil {
		if v, ok := any(cfg).(interface{ Validate() error }); ok {
			err = v.Validate()
		}
	}
	// The ID annotation lives under the prefix too, but is the pipeline's.
	unknown := slices.DeleteFunc(res.Unknown, func(k string) bool { return k == l.opts.IDAnnotation })
	if len(unknown) > 0 && nodes != nil {
		l.event(svc, corev1.EventTypeWarning, EventUnknownAnnotation, "Unknown annotations ignored: %v", unknown)
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

// lookup finds the Service's LB: by the ID annotation first (adopting LBs
// made by an earlier CCM), then by the driver's ownership rules; from the
// shared list when there is one.
func (l *loadBalancer[C, LB]) lookup(ctx context.Context, req *LoadBalancerRequest[C]) (*LB, error) {
	if req.ID != "" {
		var lb *LB
		var err error
		if l.cache != nil {
			lb, err = l.cache.get(ctx, req.ID)
		} else {
			lb, err = l.driver.Get(ctx, req.ID)
		}
		if err == nil || !IsNotFound(err) {
			return lb, err
		}
		klog.FromContext(ctx).Info("Load balancer in the ID annotation is gone; looking it up by owner", "service", klog.KObj(req.Service), "loadBalancerID", req.ID)
	}
	if l.cache != nil {
		return l.cache.find(ctx, req)
	}
	return l.driver.Find(ctx, req)
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

func (l *loadBalancer[C, LB]) event(svc *corev1.Service, eventType, reason, format string, args ...any) {
	if l.env.Recorder != nil {
		l.env.Recorder.Eventf(svc, eventType, reason, format, args...)
	}
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
		ingress := corev1.LoadBalancerIngress{IP: ip}
		if s.ProxyProtocol {
			proxy := corev1.LoadBalancerIPModeProxy
			ingress.IPMode = &proxy
		}
		status.Ingress = append(status.Ingress, ingress)
	}
	return status
}
