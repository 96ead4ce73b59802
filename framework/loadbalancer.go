package framework

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"
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
	// Delete removes lb and everything the driver created for it. A driver
	// that leaves lb in place on purpose (the Service disowned it) returns
	// an error wrapping ErrLoadBalancerKept.
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
	// Owns (see LoadBalancerOwnership) runs for each listed LB on every
	// lookup.
	LoadBalancerOwnership[C, LB]
}

// LoadBalancerOwnership is implemented by drivers that can tell, from a load
// balancer alone, which Service it belongs to: by an ownership tag, or a
// name made from the Service. The pipeline then never lets a Service take
// over, through its ID annotation, a load balancer that belongs to another
// Service that still exists (an annotation copied with that Service's
// manifest, say): the Service gets a Warning Event and nothing is written,
// and deleting it leaves the other's load balancer alone. A load balancer
// that no existing Service owns (made by hand, or left behind) is adopted.
// Every driver should implement it; LoadBalancerLister includes it.
type LoadBalancerOwnership[C, LB any] interface {
	// Owns reports whether lb belongs to req's Service: it is the one Find
	// returns for req. It must be cheap and make no calls.
	Owns(lb *LB, req *LoadBalancerRequest[C]) bool
}

// LoadBalancerSharing is implemented by drivers of clouds where Services
// may share one load balancer, each with listeners of its own (OpenStack's
// max-shared-lb). Shares reports whether req's Service may use lb, which
// another Service owns, beside it; the driver then keeps each Service to
// its own part of lb and refuses, with a Warning, what would collide.
type LoadBalancerSharing[C, LB any] interface {
	Shares(lb *LB, req *LoadBalancerRequest[C]) bool
}

// LoadBalancerLeftovers is implemented by drivers whose Create makes other
// cloud resources before the load balancer itself (a cloud IP, a backend
// service...), or whose Update makes one and then links it: a CCM killed in
// between, or a create that fails after them, leaves them behind with no
// load balancer to find them by. When a Service's load balancer is not
// found on delete, the pipeline calls DeleteLeftovers, which deletes what
// the driver made for req's Service (found by the name or tag it gave it)
// that no load balancer uses. The service controller asks GetLoadBalancer
// first and deletes only a load balancer that exists, so for such a driver
// GetLoadBalancer reports one for a Service being cleaned up (deleted, or
// no longer of type LoadBalancer). Update should adopt a leftover rather
// than make a second one.
type LoadBalancerLeftovers[C any] interface {
	DeleteLeftovers(ctx context.Context, req *LoadBalancerRequest[C]) error
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
	// Pending, when non-empty, is what the cloud is still completing on a
	// load balancer that otherwise works, said as it reads after the LB's
	// ID ("is waiting for its certificate: www.example.com is pending"). It
	// is not a failure: Update runs as usual, the sync succeeds with the
	// addresses the LB has, a Normal Event shows the text, and the Service
	// is synced again once Pending is empty (see ProgressAnnotation).
	Pending string
	// IPs and Hostname become status.loadBalancer.ingress: one entry per IP,
	// or, when Hostname is set, the hostname alone.
	IPs      []string
	Hostname string
	// DNSNames maps IPs to a DNS name of theirs, published beside them
	// (ingress[].hostname next to ingress[].ip) for tools that read names;
	// unlike Hostname it replaces nothing.
	DNSNames map[string]string
	// ProxyProtocol: the LB speaks PROXY protocol to the nodes, so traffic to
	// the LB IP must not be short-circuited by kube-proxy (ipMode: Proxy).
	ProxyProtocol bool
}

// busy reports whether the cloud is still working on the LB: provisioning,
// or completing something (Pending).
func (s LoadBalancerState) busy() bool { return s.Provisioning || s.Pending != "" }

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

	// fresh brings Nodes up to date again (CurrentNodes); nil without
	// Env.Informers.
	fresh *lbNodes
}

// CurrentNodes returns Nodes brought up to date with the Node informer
// again, now: the pipeline did so when the request came in, but a driver
// that writes one thing for every load balancer (a droplet tag, a shared
// backend) waits for that thing's lock first, and a request that waited
// behind one made after a node joined would write the older set. Call it
// while holding the lock, and write what it returns (see lbnodes.go).
func (r *LoadBalancerRequest[C]) CurrentNodes() []*corev1.Node {
	nodes, _ := r.fresh.current(r.Nodes)
	return nodes
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
	// RetryDelay is the requeue delay while the cloud is provisioning, and
	// the longest pause between two looks at a load balancer the pipeline
	// waits for (Env.LoadBalancerWait); default 5s.
	RetryDelay time.Duration
	// Hostname, when set and not "", is published as the Service's ingress
	// instead of the LB's addresses (e.g. a hostname annotation), so that
	// in-cluster clients resolve it and go through the LB.
	Hostname func(cfg *C) string
}

// Event reasons the pipeline emits on Services. Warnings are for what the
// user must fix; each is emitted once per distinct problem per change of
// the Service.
const (
	EventInvalidAnnotation        = "InvalidAnnotation"
	EventInvalidService           = "InvalidService"
	EventUnknownAnnotation        = "UnknownAnnotation"
	EventCreatedLoadBalancer      = "CreatedLoadBalancer"
	EventUpdatedLoadBalancer      = "UpdatedLoadBalancer"
	EventDeletedLoadBalancer      = "DeletedLoadBalancer"
	EventKeptLoadBalancer         = "KeptLoadBalancer"
	EventProvisioningLoadBalancer = "ProvisioningLoadBalancer"
	EventLoadBalancerFailed       = "LoadBalancerFailed"
	EventLoadBalancerInUse        = "LoadBalancerInUse"
	EventLoadBalancerAdopted      = "AdoptedLoadBalancer"
	defaultLoadBalancerRetryIn    = 5 * time.Second
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
	l := &loadBalancer[C, LB]{env: env, driver: driver, opts: opts, problems: newProblemLog(env.Recorder), nodes: newLBNodes(env.Informers), now: time.Now}
	if lister, ok := any(driver).(LoadBalancerLister[C, LB]); ok && env.LoadBalancerCacheTTL >= 0 {
		l.cache = newLBCache(driver, lister, env.LoadBalancerCacheTTL)
	}
	return l
}

type loadBalancer[C, LB any] struct {
	env    *Env
	driver LoadBalancerDriver[C, LB]
	opts   LoadBalancerOptions[C]
	locks  serviceLocks
	// problems emits Events, each Warning once per problem per Service
	// change.
	problems *problemLog
	// nodes brings requests' Nodes up to date (lbnodes.go); nil without
	// env.Informers.
	nodes *lbNodes
	// cache serves lookups from a shared list; nil: direct driver calls.
	cache *lbCache[C, LB]
	// follower follows the load balancers the cloud is working on
	// (Env.LoadBalancerFollow).
	follower follower
	now      func() time.Time
}

var _ cloudprovider.LoadBalancer = (*loadBalancer[struct{}, struct{}])(nil)

// GetLoadBalancer reports the Service's LB, if it exists (from the shared
// list when the driver is a LoadBalancerLister).
func (l *loadBalancer[C, LB]) GetLoadBalancer(ctx context.Context, clusterName string, svc *corev1.Service) (*corev1.LoadBalancerStatus, bool, error) {
	req, _ := l.request(clusterName, svc, nil)
	lb, err := l.lookupOwn(ctx, req)
	if IsNotFound(err) {
		// The service controller asks before a cleanup and calls
		// EnsureLoadBalancerDeleted only for a load balancer that
		// exists: a driver's leftovers (LoadBalancerLeftovers) need that
		// call too.
		_, leftovers := any(l.driver).(LoadBalancerLeftovers[C])
		return nil, leftovers && cleaningUp(svc), nil
	}
	if err != nil {
		return nil, false, err
	}
	return l.ingressStatus(req, l.driver.Inspect(lb)), true, nil
}

// cleaningUp reports whether the service controller is removing svc's load
// balancer: svc is being deleted, or no longer of type LoadBalancer.
func cleaningUp(svc *corev1.Service) bool {
	return svc.DeletionTimestamp != nil || svc.Spec.Type != corev1.ServiceTypeLoadBalancer
}

// GetLoadBalancerName returns the LB name the pipeline uses for svc.
func (l *loadBalancer[C, LB]) GetLoadBalancerName(_ context.Context, clusterName string, svc *corev1.Service) string {
	req, _ := l.request(clusterName, svc, nil)
	return req.Name
}

// EnsureLoadBalancer creates or updates svc's LB and returns its status.
func (l *loadBalancer[C, LB]) EnsureLoadBalancer(ctx context.Context, clusterName string, svc *corev1.Service, nodes []*corev1.Node) (*corev1.LoadBalancerStatus, error) {
	defer l.locks.lock(svc.UID)()
	return l.ensure(ctx, clusterName, svc, nodes, true)
}

// UpdateLoadBalancer brings an existing LB up to date with nodes. It never
// creates one: the service controller calls it from its node sync, which
// runs beside the Service's own sync, and a create from both would make two
// LBs. A missing LB is the Service sync's to create.
func (l *loadBalancer[C, LB]) UpdateLoadBalancer(ctx context.Context, clusterName string, svc *corev1.Service, nodes []*corev1.Node) error {
	defer l.locks.lock(svc.UID)()
	_, err := l.ensure(ctx, clusterName, svc, nodes, false)
	return err
}

// EnsureLoadBalancerDeleted deletes svc's LB; an LB that is already gone is
// success. Invalid annotations never block a delete, and an LB that another
// Service owns (named by a copied ID annotation) is left alone.
func (l *loadBalancer[C, LB]) EnsureLoadBalancerDeleted(ctx context.Context, clusterName string, svc *corev1.Service) error {
	defer l.locks.lock(svc.UID)()
	req, _ := l.request(clusterName, svc, nil)
	lb, err := l.lookupOwn(ctx, req)
	return l.delete(ctx, req, lb, err)
}

// delete deletes lb, req's Service's load balancer as lookupOwn found it
// (err is lookupOwn's), and what the driver made beside it.
func (l *loadBalancer[C, LB]) delete(ctx context.Context, req *LoadBalancerRequest[C], lb *LB, err error) error {
	svc := req.Service
	if IsNotFound(err) {
		if err := l.deleteLeftovers(ctx, req); err != nil {
			return l.retryable(err)
		}
		l.forget(svc.UID)
		return nil
	}
	if err != nil {
		return l.retryable(err)
	}
	state := l.driver.Inspect(lb)
	err = l.deleteAndWait(ctx, lb, req)
	switch {
	case errors.Is(err, ErrLoadBalancerKept):
		klog.FromContext(ctx).Info("Left the load balancer in place", "service", klog.KObj(svc), "loadBalancerID", state.ID, "reason", err)
		l.problems.event(svc, corev1.EventTypeNormal, EventKeptLoadBalancer, false, "Left load balancer %s in place: %v", state.ID, err)
		l.forget(svc.UID)
		return nil
	case IsNotFound(err):
		l.cacheRemoved(state.ID)
		l.forget(svc.UID)
		return nil
	case err != nil:
		l.cacheWriteFailed(state.ID)
		return l.retryable(fmt.Errorf("deleting load balancer %s: %w", state.ID, err))
	}
	l.cacheRemoved(state.ID)
	l.forget(svc.UID)
	klog.FromContext(ctx).Info("Deleted load balancer", "service", klog.KObj(svc), "loadBalancerID", state.ID)
	l.problems.event(svc, corev1.EventTypeNormal, EventDeletedLoadBalancer, false, "Deleted load balancer %s", state.ID)
	return nil
}

// deleteLeftovers has a LoadBalancerLeftovers driver delete what it made
// for req's Service before (or beside) a load balancer that is not there.
func (l *loadBalancer[C, LB]) deleteLeftovers(ctx context.Context, req *LoadBalancerRequest[C]) error {
	lo, ok := any(l.driver).(LoadBalancerLeftovers[C])
	if !ok {
		return nil
	}
	if err := lo.DeleteLeftovers(ctx, req); err != nil {
		return fmt.Errorf("deleting what was made for the Service's load balancer: %w", err)
	}
	return nil
}

// forget drops what the pipeline keeps about a Service whose load
// balancer is gone.
func (l *loadBalancer[C, LB]) forget(uid types.UID) {
	l.problems.forget(uid)
	l.unfollow(uid)
}
