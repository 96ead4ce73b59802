package digitalocean

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/digitalocean/godo"
	corev1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/intern"
	"github.com/ccmkit/ccmkit/providers/digitalocean/internal/cloud"
)

// Load balancer statuses.
const (
	lbStatusNew     = "new"
	lbStatusActive  = "active"
	lbStatusErrored = "errored"
)

// loadBalancer is a DigitalOcean load balancer as godo returns it.
type loadBalancer = godo.LoadBalancer

// newLoadBalancer wraps the driver in the framework's pipeline: annotation
// decoding with Events, find-or-create, the ID annotation, requeueing while
// the load balancer is new, the shared load-balancer list, and the status.
// With s.nodeTag (DO_LB_DROPLET_TAG) set, load balancers target that tag
// unless their Service says droplet-ids.
func newLoadBalancer(env *framework.Env, c *godo.Client, s lbSettings, defaultType string) cloudprovider.LoadBalancer {
	d := &lbDriver{client: c, env: env, settings: s, nodeTag: newNodeTag(s.nodeTag, c)}
	targets := targetsDropletIDs
	if s.nodeTag != "" {
		targets = targetsTag
	}
	return framework.NewLoadBalancer(env, d, framework.LoadBalancerOptions[LoadBalancerConfig]{
		AnnotationPrefix: AnnotationPrefix,
		IDAnnotation:     AnnotationLoadBalancerID,
		Name:             loadBalancerName,
		NewConfig:        func() *LoadBalancerConfig { return &LoadBalancerConfig{Type: defaultType, DropletTargets: targets} },
		Hostname:         func(cfg *LoadBalancerConfig) string { return cfg.Hostname },
	})
}

// loadBalancerName is the name annotation, else upstream's default name
// ("a" and the Service UID), as the existing CCM names load balancers.
func loadBalancerName(_ string, svc *corev1.Service, cfg *LoadBalancerConfig) string {
	if cfg.Name != "" {
		return cfg.Name
	}
	return cloudprovider.DefaultLoadBalancerName(svc)
}

// lbDriver is the DigitalOcean half of the load-balancer pipeline.
type lbDriver struct {
	client   *godo.Client
	env      *framework.Env
	settings lbSettings
	// nodeTag keeps DO_LB_DROPLET_TAG on the nodes' droplets; nil when
	// it is unset.
	nodeTag *nodeTag
	// droplets holds each distinct droplet list of the load balancers
	// once: those of a cluster list the same nodes, and the pipeline's
	// shared list holds them all (framework/intern).
	droplets intern.Slices[int]
}

var (
	_ framework.LoadBalancerDriver[LoadBalancerConfig, loadBalancer] = (*lbDriver)(nil)
	_ framework.LoadBalancerValidator[LoadBalancerConfig]            = (*lbDriver)(nil)
	_ framework.LoadBalancerLister[LoadBalancerConfig, loadBalancer] = (*lbDriver)(nil)
)

// Validate implements framework.LoadBalancerValidator: a Service that no
// DigitalOcean load balancer can serve gets a Warning Event and no write,
// as does one that asks for tag mode on a CCM without the tag.
func (d *lbDriver) Validate(req *lbRequest) error {
	if req.Config.DropletTargets == targetsTag && d.nodeTag == nil {
		return fmt.Errorf("annotation %q: tag needs DO_LB_DROPLET_TAG, which this CCM does not set", annotationKey("droplet-targets"))
	}
	return validateService(req)
}

// Get returns the load balancer with this ID; the API's 404 wraps
// ErrNotFound and the pipeline falls back to Find.
func (d *lbDriver) Get(ctx context.Context, id string) (*loadBalancer, error) {
	lb, _, err := d.client.LoadBalancers.Get(cloudapi.WithOperation(ctx, "load_balancers.get"), id)
	switch {
	case cloud.IsNotFound(err):
		return nil, fmt.Errorf("load balancer %s: %w (%w)", id, framework.ErrNotFound, err)
	case err != nil:
		return nil, fmt.Errorf("getting load balancer %s: %w", id, err)
	}
	if err := d.keep(lb); err != nil {
		return nil, fmt.Errorf("getting load balancer %s: %w", id, err)
	}
	return lb, nil
}

// List implements framework.LoadBalancerLister: every load balancer of the
// account, 200 per page. The pipeline serves Get and Find from it.
func (d *lbDriver) List(ctx context.Context) ([]*loadBalancer, error) {
	lbs, err := cloud.ListAll(ctx, "load_balancers", func(ctx context.Context, o *godo.ListOptions) ([]loadBalancer, *godo.Response, error) {
		page, resp, err := d.client.LoadBalancers.List(ctx, o)
		if err != nil {
			return nil, resp, err
		}
		for i := range page { // before the next page is decoded
			if err := d.keep(&page[i]); err != nil {
				return nil, resp, err
			}
		}
		return page, resp, nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]*loadBalancer, len(lbs))
	for i := range lbs {
		out[i] = &lbs[i]
	}
	return out, nil
}

// Owns implements framework.LoadBalancerLister: as the existing CCM, a
// Service owns the load balancer with its name.
func (d *lbDriver) Owns(lb *loadBalancer, req *lbRequest) bool { return lb.Name == req.Name }

// Find returns the load balancer named as the Service's (used when the
// shared list is off).
func (d *lbDriver) Find(ctx context.Context, req *lbRequest) (*loadBalancer, error) {
	lbs, err := d.List(ctx)
	if err != nil {
		return nil, err
	}
	for _, lb := range lbs {
		if d.Owns(lb, req) {
			return lb, nil
		}
	}
	return nil, framework.NotFound("no load balancer named %q", req.Name)
}

// Create provisions the load balancer with its whole spec in one POST. It
// answers "new"; the pipeline requeues until it is active. A lost answer is
// recovered by Find (by name) on the next sync.
func (d *lbDriver) Create(ctx context.Context, req *lbRequest) (*loadBalancer, error) {
	if req.Config.Disown {
		return nil, fmt.Errorf("the Service is disowned (%s) and has no load balancer; the CCM creates none", AnnotationDisown)
	}
	want, err := d.desired(ctx, req, nil)
	if err != nil {
		return nil, err
	}
	if err := d.syncNodeTag(ctx, req, want); err != nil {
		return nil, err
	}
	lb, _, err := d.client.LoadBalancers.Create(cloudapi.WithOperation(ctx, "load_balancers.create"), want)
	if err != nil {
		return nil, err
	}
	if err := d.keep(lb); err != nil {
		return nil, err
	}
	return lb, nil
}

// Update makes one full PUT when anything differs and no call otherwise.
func (d *lbDriver) Update(ctx context.Context, lb *loadBalancer, req *lbRequest) (bool, error) {
	if req.Config.Disown {
		klog.FromContext(ctx).V(2).Info("Load balancer is disowned; leaving it as it is", "service", klog.KObj(req.Service), "loadBalancerID", lb.ID)
		return false, nil
	}
	want, err := d.desired(ctx, req, lb)
	if err != nil {
		return false, err
	}
	if err := d.syncNodeTag(ctx, req, want); err != nil {
		return false, err
	}
	changes := specChanges(lb, want)
	if len(changes) == 0 {
		return false, nil
	}
	klog.FromContext(ctx).V(2).Info("Updating load balancer", "service", klog.KObj(req.Service), "loadBalancerID", lb.ID, "changes", changes)
	updated, _, err := d.client.LoadBalancers.Update(cloudapi.WithOperation(ctx, "load_balancers.update"), lb.ID, want)
	if err != nil {
		return false, err
	}
	if err := d.keep(updated); err != nil {
		return true, err
	}
	*lb = *updated
	return true, nil
}

// syncNodeTag puts the droplet tag a load balancer in tag mode targets on
// exactly the droplets of req.Nodes, before the load balancer is created
// or moved to the tag, so it never targets fewer droplets than it should.
// After a node change the first sync does it; the others find it done
// (see nodeTag) and cost no call. A load balancer listing droplet IDs
// leaves the tag alone.
func (d *lbDriver) syncNodeTag(ctx context.Context, req *lbRequest, want *godo.LoadBalancerRequest) error {
	if want.Tag == "" || d.nodeTag == nil {
		return nil
	}
	return d.nodeTag.sync(ctx, func() []int { return dropletIDs(ctx, req.CurrentNodes(), d.settings.codec) })
}

// keep checks a load balancer the API answered with (checkLB) and makes
// its droplet list the one equal lists share. Nothing modifies a droplet
// list in place (lb_diff.go compares copies), which sharing needs.
func (d *lbDriver) keep(lb *loadBalancer) error {
	if err := checkLB(lb); err != nil {
		return err
	}
	lb.DropletIDs = d.droplets.Of(lb.DropletIDs)
	return nil
}

// checkLB rejects a load balancer answer the driver cannot act on: none,
// none without ID, or an active one without its IPv4 (DigitalOcean gives
// every active load balancer one; without it the Service's status would
// lose its address), or with an address that is no IP.
func checkLB(lb *loadBalancer) error {
	switch {
	case lb == nil || lb.ID == "":
		return errors.New("malformed response: no load balancer")
	case lb.Status == lbStatusActive && lb.IP == "":
		return fmt.Errorf("malformed response: active load balancer %s has no IP", lb.ID)
	}
	for _, ip := range []string{lb.IP, lb.IPv6} {
		if _, err := netip.ParseAddr(ip); ip != "" && err != nil {
			return fmt.Errorf("malformed response: load balancer %s: %q is no IP", lb.ID, ip)
		}
	}
	return nil
}

// Delete removes the load balancer, unless the Service disowned it: then
// the load balancer stays, and the pipeline reports it kept.
func (d *lbDriver) Delete(ctx context.Context, lb *loadBalancer, req *lbRequest) error {
	if req.Config.Disown {
		return fmt.Errorf("the Service disowns it (%s): %w", AnnotationDisown, framework.ErrLoadBalancerKept)
	}
	_, err := d.client.LoadBalancers.Delete(cloudapi.WithOperation(ctx, "load_balancers.delete"), lb.ID)
	if cloud.IsNotFound(err) {
		return fmt.Errorf("load balancer %s: %w", lb.ID, framework.ErrNotFound)
	}
	return err
}

// Inspect tells the pipeline what state the load balancer is in.
func (d *lbDriver) Inspect(lb *loadBalancer) framework.LoadBalancerState {
	s := framework.LoadBalancerState{
		ID:            lb.ID,
		Provisioning:  lb.Status == lbStatusNew,
		ProxyProtocol: lb.EnableProxyProtocol,
	}
	if lb.Status == lbStatusErrored {
		s.Failed = "status errored"
	}
	for _, ip := range []string{lb.IP, lb.IPv6} {
		if ip != "" {
			s.IPs = append(s.IPs, ip)
		}
	}
	return s
}

// desired is the full spec for req, with the certificate resolved.
func (d *lbDriver) desired(ctx context.Context, req *lbRequest, lb *loadBalancer) (*godo.LoadBalancerRequest, error) {
	s := d.settings
	cert, err := d.certificate(ctx, req, lb)
	if err != nil {
		return nil, err
	}
	s.certificateID = cert
	return desiredRequest(ctx, req, s, lb)
}

// certificate resolves the certificate for TLS-terminating ports: the one
// named by certificate-name, or certificate-id. When DigitalOcean renewed a
// Let's Encrypt certificate, the load balancer already uses the new one and
// the annotated ID no longer exists: the CCM keeps the new one and records
// it on the Service, rather than failing on the stale ID.
func (d *lbDriver) certificate(ctx context.Context, req *lbRequest, lb *godo.LoadBalancer) (string, error) {
	cfg := req.Config
	if cfg.CertificateName != "" {
		certs, _, err := d.client.Certificates.ListByName(cloudapi.WithOperation(ctx, "certificates.list"), cfg.CertificateName, &godo.ListOptions{PerPage: cloud.ListPageSize})
		if err != nil {
			return "", fmt.Errorf("looking up certificate %q: %w", cfg.CertificateName, err)
		}
		for _, c := range certs {
			if c.Name == cfg.CertificateName && c.ID != "" {
				return c.ID, nil
			}
		}
		return "", fmt.Errorf("annotation %q: no certificate named %q", annotationKey("certificate-name"), cfg.CertificateName)
	}
	inUse := certificateInUse(lb)
	if cfg.CertificateID == "" || inUse == "" || inUse == cfg.CertificateID {
		return cfg.CertificateID, nil
	}
	_, _, err := d.client.Certificates.Get(cloudapi.WithOperation(ctx, "certificates.get"), cfg.CertificateID)
	if !cloud.IsNotFound(err) {
		return cfg.CertificateID, nil // it exists (or the API failed: the PUT will say)
	}
	cur, _, err := d.client.Certificates.Get(cloudapi.WithOperation(ctx, "certificates.get"), inUse)
	if err != nil || cur == nil || cur.Type != "lets_encrypt" {
		return "", fmt.Errorf("annotation %q: certificate %s does not exist", annotationKey("certificate-id"), cfg.CertificateID)
	}
	klog.FromContext(ctx).Info("Following a renewed Let's Encrypt certificate", "service", klog.KObj(req.Service),
		"loadBalancerID", lb.ID, "oldCertificateID", cfg.CertificateID, "certificateID", inUse)
	if err := framework.PatchServiceAnnotation(ctx, d.env.Client, req.Service, annotationKey("certificate-id"), inUse); err != nil {
		klog.FromContext(ctx).Error(err, "Recording the renewed certificate on the Service", "service", klog.KObj(req.Service))
	}
	return inUse, nil
}

// certificateInUse is the certificate of lb's TLS-terminating rules.
func certificateInUse(lb *godo.LoadBalancer) string {
	if lb == nil {
		return ""
	}
	for _, r := range lb.ForwardingRules {
		if r.CertificateID != "" && !strings.EqualFold(r.EntryProtocol, protoUDP) {
			return r.CertificateID
		}
	}
	return ""
}
