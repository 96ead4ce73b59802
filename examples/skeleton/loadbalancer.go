package skeleton

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/providerid"
)

// newLoadBalancer wraps the driver in the framework's pipeline, which does
// everything that is the same for every cloud: annotation decoding with
// Events, find-or-create, the ID annotation, requeueing while the cloud is
// provisioning, and the Service status.
func newLoadBalancer(env *framework.Env, c *client, codec providerid.Codec) cloudprovider.LoadBalancer {
	return framework.NewLoadBalancer(env, &lbDriver{client: c, codec: codec}, framework.LoadBalancerOptions[LoadBalancerConfig]{
		AnnotationPrefix: AnnotationPrefix,
		IDAnnotation:     AnnotationLoadBalancerID,
		Name:             loadBalancerName,
	})
}

// maxNameLength is the longest name the Skeleton API accepts.
const maxNameLength = 255

// loadBalancerName is the name annotation, or "<cluster>-<namespace>-<name>":
// readable in the cloud console, unlike the upstream default of "a" and the
// Service UID. Find goes by the ownership tag, so a name may change.
func loadBalancerName(clusterName string, svc *corev1.Service, cfg *LoadBalancerConfig) string {
	name := cfg.Name
	if name == "" {
		name = clusterName + "-" + svc.Namespace + "-" + svc.Name
	}
	return name[:min(len(name), maxNameLength)] // the annotation is validated
}

// lbDriver is the cloud-specific half of the load-balancer pipeline. Each
// method is a few API calls; the pipeline decides when to call which.
type lbDriver struct {
	client *client
	codec  providerid.Codec
}

var (
	_ framework.LoadBalancerDriver[LoadBalancerConfig, loadBalancer] = (*lbDriver)(nil)
	_ framework.LoadBalancerLister[LoadBalancerConfig, loadBalancer] = (*lbDriver)(nil)
)

// Get returns the load balancer named by the Service's ID annotation; a 404
// wraps ErrNotFound and the pipeline falls back to Find.
func (d *lbDriver) Get(ctx context.Context, id string) (*loadBalancer, error) {
	return d.client.getLoadBalancer(ctx, id)
}

// Find returns the load balancer carrying the Service's ownership tag.
func (d *lbDriver) Find(ctx context.Context, req *lbRequest) (*loadBalancer, error) {
	tag := ownerTag(req.ClusterName, req.Service)
	lbs, err := d.client.listLoadBalancers(ctx, tag)
	if err != nil {
		return nil, err
	}
	switch len(lbs) {
	case 0:
		return nil, framework.NotFound("no load balancer tagged %q", tag)
	case 1:
	default:
		// Should never happen; keep using the oldest and leave the rest for
		// a human rather than delete anything on a guess.
		klog.FromContext(ctx).Info("Several load balancers carry one Service's ownership tag; using the first",
			"service", klog.KObj(req.Service), "tag", tag, "loadBalancerID", lbs[0].ID, "count", len(lbs))
	}
	return &lbs[0], nil
}

// List implements framework.LoadBalancerLister: the pipeline then answers
// Get and Find from one shared list (a page per 200 load balancers) and
// calls them only for what the list cannot answer.
func (d *lbDriver) List(ctx context.Context) ([]*loadBalancer, error) {
	lbs, err := d.client.listAllLoadBalancers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*loadBalancer, len(lbs))
	for i := range lbs {
		out[i] = &lbs[i]
	}
	return out, nil
}

// Owns tells which listed load balancer Find would return: the one with the
// Service's ownership tag.
func (d *lbDriver) Owns(lb *loadBalancer, req *lbRequest) bool {
	return slices.Contains(lb.Tags, ownerTag(req.ClusterName, req.Service))
}

// Validate implements framework.LoadBalancerValidator: a Service the
// Skeleton API cannot serve gets a Warning Event and no write.
func (d *lbDriver) Validate(req *lbRequest) error { return validateService(req.Service) }

// Create provisions the load balancer with its whole spec in one call. The
// answer is usually "provisioning"; the pipeline requeues until it is
// active. POST is not retried blindly by the transport: if the answer was
// lost, the next sync finds the load balancer by its ownership tag.
func (d *lbDriver) Create(ctx context.Context, req *lbRequest) (*loadBalancer, error) {
	spec, err := desiredSpec(ctx, req, d.codec, nil)
	if err != nil {
		return nil, err
	}
	return d.client.createLoadBalancer(ctx, spec)
}

// Update makes one full PUT when anything differs and no call at all
// otherwise: a Service with nothing to change costs zero writes.
func (d *lbDriver) Update(ctx context.Context, lb *loadBalancer, req *lbRequest) (bool, error) {
	want, err := desiredSpec(ctx, req, d.codec, lb.Tags)
	if err != nil {
		return false, err
	}
	changes := specChanges(&lb.lbSpec, want)
	if len(changes) == 0 {
		return false, nil
	}
	klog.FromContext(ctx).V(2).Info("Updating load balancer", "service", klog.KObj(req.Service), "loadBalancerID", lb.ID, "changes", changes)
	updated, err := d.client.updateLoadBalancer(ctx, lb.ID, want)
	if err != nil {
		return false, err
	}
	*lb = *updated // the PUT answers with the load balancer as it now is
	return true, nil
}

// Delete removes the load balancer; a 404 (already gone) wraps ErrNotFound,
// which the pipeline treats as success.
func (d *lbDriver) Delete(ctx context.Context, lb *loadBalancer, _ *lbRequest) error {
	return d.client.deleteLoadBalancer(ctx, lb.ID)
}

// Inspect tells the pipeline what state the load balancer is in.
func (d *lbDriver) Inspect(lb *loadBalancer) framework.LoadBalancerState {
	s := framework.LoadBalancerState{
		ID:            lb.ID,
		Provisioning:  lb.Status == lbProvisioning,
		ProxyProtocol: lb.ProxyProtocol,
	}
	if lb.Status == lbError {
		s.Failed = lb.ErrorMessage
		if s.Failed == "" {
			s.Failed = "status error"
		}
	}
	if lb.IPv4 != "" {
		s.IPs = []string{lb.IPv4}
	}
	return s
}
