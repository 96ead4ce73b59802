package rancher

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"

	rancher "github.com/rancher/go-rancher/v2"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/providers/rancher/internal/cloud"
)

// Cattle service states the load-balancer driver acts on (and
// cloud.StateRemoving, with cloud.Removed for the gone ones).
const (
	stateInactive   = "inactive"
	stateUpgraded   = "upgraded"
	transitionYes   = "yes"
	transitionError = "error"
)

// loadBalancer is a Cattle load-balancer service with the external services
// of its stack named as its own backends (lb-<x>-nodes...): the one in use
// and any it replaces.
type loadBalancer struct {
	svc      *rancher.LoadBalancerService
	backends []*rancher.ExternalService
	// shared is the external service the load balancers share
	// (lb_shared.go) as the list the load balancer came from saw it; nil
	// when it had none.
	shared *rancher.ExternalService
	// pending is what Update waits for that the load-balancer service's
	// state does not show: its external service starting.
	pending string
}

var _ framework.LoadBalancerProvider = (*Provider)(nil)

// LoadBalancer implements framework.LoadBalancerProvider.
func (p *Provider) LoadBalancer() cloudprovider.LoadBalancer { return p.lb }

// newLoadBalancer wraps the driver in the framework's pipeline: annotation
// decoding with Events, find-or-create, the ID annotation, the shared list
// of the stack's load balancers, and the status.
func newLoadBalancer(_ context.Context, env *framework.Env, p *Provider) (cloudprovider.LoadBalancer, error) {
	if p.api == nil {
		return nil, errors.New("load balancers: no Cattle client")
	}
	d := &lbDriver{
		api: p.api, env: &lbEnv{api: p.api, settings: p.cfg.LoadBalancer}, agents: p.agents,
		shared: &sharedBackend{beforeLock: p.beforeSharedLock}, sharedName: sharedBackendName(env.ClusterName),
	}
	return framework.NewLoadBalancer(env, d, framework.LoadBalancerOptions[LoadBalancerConfig]{
		AnnotationPrefix: AnnotationPrefix,
		IDAnnotation:     AnnotationLoadBalancerID,
		Name:             loadBalancerName,
		NewConfig:        p.cfg.LoadBalancer.newConfig,
	}), nil
}

// lbDriver is the Cattle half of the load-balancer pipeline. Each Service
// gets a loadBalancerService (HAProxy) in the load-balancer stack, its port
// rules sending traffic to the externalService holding the nodes' IPs,
// which the load balancers share (lb_shared.go) but those of Services of
// externalTrafficPolicy Local, which have their own.
// Update changes both in place, one Cattle transition at a time: the
// external service's IPs by PUT, the port rules and scale by a PUT of the
// load balancer, the ports, image and global label (its launchConfig) by
// Cattle's in-service upgrade; the load balancer keeps its ID.
type lbDriver struct {
	api *cloud.API
	env *lbEnv
	// linked holds the IDs of the load balancers whose service links were
	// read in this process and found to be just their external service
	// (lb_backends.go); the others are read on their next sync.
	linked sync.Map
	// agents are the hosts' agent IPs for Nodes without an InternalIP yet.
	agents *agentIPs
	// shared is the memo of the external service the load balancers share
	// (lb_shared.go), sharedName its name.
	shared     *sharedBackend
	sharedName string
}

var (
	_ framework.LoadBalancerDriver[LoadBalancerConfig, loadBalancer] = (*lbDriver)(nil)
	_ framework.LoadBalancerValidator[LoadBalancerConfig]            = (*lbDriver)(nil)
	_ framework.LoadBalancerLister[LoadBalancerConfig, loadBalancer] = (*lbDriver)(nil)
)

// Validate implements framework.LoadBalancerValidator: a Service that no
// Cattle load balancer can serve gets a Warning Event and no write.
func (d *lbDriver) Validate(req *lbRequest) error { return validateService(req) }

// Get returns the load-balancer service with this ID and its backends; a
// 404, or a removed service, wraps ErrNotFound.
func (d *lbDriver) Get(ctx context.Context, id string) (*loadBalancer, error) {
	svc, err := d.getLB(ctx, id)
	if err != nil {
		return nil, err
	}
	exts, err := d.listExternal(ctx, svc.StackId)
	if err != nil {
		return nil, err
	}
	return d.withBackends(svc, exts), nil
}

// List implements framework.LoadBalancerLister: the stack's load-balancer
// services and external services, all pages of each. Before the first
// load balancer there is no stack, and no call makes one.
func (d *lbDriver) List(ctx context.Context) ([]*loadBalancer, error) {
	stackID, err := d.env.stack(ctx, false)
	if err != nil || stackID == "" {
		return nil, err
	}
	svcs, err := d.listLBs(ctx, map[string]any{"stackId": stackID})
	if err != nil {
		return nil, err
	}
	exts, err := d.listExternal(ctx, stackID)
	if err != nil {
		return nil, err
	}
	out := make([]*loadBalancer, 0, len(svcs))
	for _, s := range svcs {
		out = append(out, d.withBackends(s, exts))
	}
	return out, nil
}

// Owns implements framework.LoadBalancerLister: as the existing CCM, a
// Service owns the load balancer with its name.
func (d *lbDriver) Owns(lb *loadBalancer, req *lbRequest) bool { return lb.svc.Name == req.Name }

// Find returns the load balancer named as the Service's in the stack (used
// when the shared list is off or misses it).
func (d *lbDriver) Find(ctx context.Context, req *lbRequest) (*loadBalancer, error) {
	stackID, err := d.env.stack(ctx, false)
	if err != nil {
		return nil, err
	}
	if stackID == "" {
		return nil, framework.NotFound("no stack %s", d.env.settings.stackName())
	}
	svcs, err := d.listLBs(ctx, map[string]any{"stackId": stackID, "name": req.Name})
	if err != nil {
		return nil, err
	}
	for _, s := range svcs {
		if s.Name == req.Name {
			exts, err := d.listExternal(ctx, stackID)
			if err != nil {
				return nil, err
			}
			return d.withBackends(s, exts), nil
		}
	}
	return nil, framework.NotFound("no load balancer named %q in stack %s", req.Name, stackID)
}

// Create makes the external service holding the nodes, or finds it (the
// one the load balancers share, or one a create that lost its answer
// left), then the load-balancer service with its ports, image and port
// rules in one POST. Cattle registers it; Update links it to the external
// service and activates it. A lost answer is recovered by Find (by name)
// on the next sync.
//
// The stack's ID is remembered: when Cattle answers that it refers to no
// stack (removed by hand), Create looks the stack up, or makes it, again
// and tries once more.
func (d *lbDriver) Create(ctx context.Context, req *lbRequest) (*loadBalancer, error) {
	lb, err := d.create(ctx, req)
	if !isStackGone(err) {
		return lb, err
	}
	klog.FromContext(ctx).Info("The load-balancer stack is gone; looking it up again", "service", klog.KObj(req.Service), "stack", d.env.settings.stackName(), "err", err)
	return d.create(ctx, req)
}

// create is one try of Create; a 422 to a create in the stack forgets the
// stack's ID.
func (d *lbDriver) create(ctx context.Context, req *lbRequest) (*loadBalancer, error) {
	stackID, err := d.env.stack(ctx, true)
	if err != nil {
		return nil, err
	}
	want, err := d.desired(ctx, req)
	if err != nil {
		return nil, err
	}
	image := want.image
	if image == "" {
		if image, err = d.env.defaultImage(ctx); err != nil {
			return nil, err
		}
	}
	backend, _, err := d.ensureBackend(ctx, &loadBalancer{}, want, stackID)
	if err != nil {
		if isInvalidReference(err) {
			d.env.forgetStack(stackID) // read again on the next sync
		}
		return nil, err
	}
	svc, err := cloud.CreateResource[rancher.LoadBalancerService](ctx, d.api, "loadbalancerservices.create", rancher.LOAD_BALANCER_SERVICE_TYPE, &rancher.LoadBalancerService{
		Name:         req.Name,
		StackId:      stackID,
		Description:  fmt.Sprintf("Load balancer of Service %s/%s", req.Service.Namespace, req.Service.Name),
		LaunchConfig: launchConfig(nil, want, image),
		LbConfig:     lbConfig(want, backend.Id),
		Scale:        want.scale, // 0 is omitted: Cattle's 1
	})
	if err != nil {
		if isInvalidReference(err) {
			d.env.forgetStack(stackID)
		}
		return nil, fmt.Errorf("creating load-balancer service %s: %w", req.Name, err)
	}
	if err := checkLB(svc); err != nil {
		return nil, fmt.Errorf("creating load-balancer service %s: %w", req.Name, err)
	}
	lb := &loadBalancer{svc: svc}
	if want.backend.shared {
		lb.shared = backend
	} else {
		lb.backends = []*rancher.ExternalService{backend}
	}
	return lb, nil
}

// maxSteps bounds the steps one Update takes (step's writes, in the
// order they can follow each other: finishupgrade, the external service,
// its link, the port rules, activate, upgrade, the replaced external
// services); more is a Cattle that does not keep what it was told, left
// to a later sync.
const maxSteps = 8

// Update brings the external service and the load-balancer service up to
// date, one step at a time: it stops when a step wrote nothing (done), or
// left Cattle working on the load balancer (updating, upgrading,
// activating), which Inspect reports as the wait the pipeline retries
// after. A step whose change Cattle has already finished when it is read
// back (a Cattle quick to settle, or another sync's list that saw it
// settle) is followed by the next in the same sync: stopping there would
// report the Service ready with the rest of its change unmade, and
// nothing would sync it again. A sync with nothing changed makes no call.
func (d *lbDriver) Update(ctx context.Context, lb *loadBalancer, req *lbRequest) (bool, error) {
	lb.pending = ""
	changed := false
	for range maxSteps {
		wrote, err := d.step(ctx, lb, req)
		changed = changed || wrote
		if err != nil || !wrote {
			return changed, err
		}
		if s := d.Inspect(lb); s.Provisioning || s.Failed != "" || lb.pending != "" || lb.svc.Transitioning == transitionYes {
			return changed, nil
		}
	}
	lb.pending = fmt.Sprintf("has changes left after %d steps", maxSteps)
	return changed, nil
}

// step makes the load balancer's next change, if any, and reports whether
// it wrote: while Cattle works on the load balancer it writes nothing.
func (d *lbDriver) step(ctx context.Context, lb *loadBalancer, req *lbRequest) (_ bool, err error) {
	svc := lb.svc
	if svc.Transitioning == transitionYes {
		return false, nil
	}
	if svc.State == stateUpgraded {
		return true, d.action(ctx, lb, "finishupgrade", nil)
	}
	want, err := d.desired(ctx, req)
	if err != nil {
		return false, err
	}
	defer func() {
		if err != nil && want.backend.shared {
			// Cattle may have refused the shared external service as
			// the memo knows it (removed by hand): read it again.
			d.shared.forget()
		}
	}()
	backend, changed, err := d.ensureBackend(ctx, lb, want, svc.StackId)
	if err != nil {
		return changed, err
	}
	if !started(backend.State) {
		var wrote bool
		if backend, wrote, err = d.waitBackend(ctx, lb, backend); err != nil || lb.pending != "" {
			return changed || wrote, err
		}
	}
	links, wrote, err := d.ensureLinks(ctx, lb, backend)
	if wrote || err != nil {
		return changed || wrote, err
	}
	if updates, changes := serviceUpdates(svc, want, lbConfig(want, backend.Id)); len(changes) > 0 {
		klog.FromContext(ctx).V(2).Info("Updating load balancer", "service", klog.KObj(req.Service), "loadBalancerID", svc.Id, "changes", changes)
		updated, err := updateResource[rancher.LoadBalancerService](ctx, d.api, "loadbalancerservices.update", rancher.LOAD_BALANCER_SERVICE_TYPE, &svc.Resource, updates)
		if err != nil {
			return true, fmt.Errorf("updating the %s of load balancer %s: %w", strings.Join(changes, ", "), svc.Id, err)
		}
		return true, d.replaceLB(lb, updated)
	}
	if changes := launchChanges(svc.LaunchConfig, want); len(changes) > 0 {
		if svc.State == stateInactive {
			// Cattle upgrades only an active service: one whose ports
			// changed before its first activation is activated first
			// and upgraded on a later sync.
			return true, d.action(ctx, lb, "activate", nil)
		}
		klog.FromContext(ctx).V(2).Info("Upgrading load balancer", "service", klog.KObj(req.Service), "loadBalancerID", svc.Id, "changes", changes)
		return true, d.upgrade(ctx, lb, want)
	}
	if wrote, err := d.foldBackends(ctx, lb, backend, links); wrote || err != nil {
		return true, err
	}
	if svc.State == stateInactive {
		return true, d.action(ctx, lb, "activate", nil)
	}
	return changed, nil
}

// upgrade changes the load balancer's launchConfig (ports, image) with
// Cattle's in-service upgrade, one container at a time and each stopped
// before its replacement starts (they bind the same host ports). Cattle
// keeps the service, its ID and its public endpoints; Update finishes the
// upgrade once Cattle reports it upgraded.
func (d *lbDriver) upgrade(ctx context.Context, lb *loadBalancer, want *desiredLB) error {
	lc := launchConfig(lb.svc.LaunchConfig, want, "")
	return d.action(ctx, lb, "upgrade", &rancher.ServiceUpgrade{InServiceStrategy: &rancher.InServiceUpgradeStrategy{
		LaunchConfig: lc, BatchSize: 1, IntervalMillis: 2000, StartFirst: false,
	}})
}

// action runs a Cattle action on the load-balancer service and reads the
// service back (actions answer with a generic service).
func (d *lbDriver) action(ctx context.Context, lb *loadBalancer, name string, input any) error {
	svc := lb.svc
	if _, ok := svc.Actions[name]; !ok {
		return framework.Provisioning("load balancer %s is %s: Cattle offers no %s now", svc.Id, svc.State, name)
	}
	if err := runAction(ctx, d.api, "loadbalancerservices."+name, rancher.LOAD_BALANCER_SERVICE_TYPE, name, &svc.Resource, input); err != nil {
		return fmt.Errorf("%s of load balancer %s: %w", name, svc.Id, err)
	}
	fresh, err := d.getLB(ctx, svc.Id)
	if err != nil {
		return fmt.Errorf("reading load balancer %s after %s: %w", svc.Id, name, err)
	}
	return d.replaceLB(lb, fresh)
}

// getLB reads one load-balancer service; Cattle's 404, or a removed
// service, wraps ErrNotFound.
func (d *lbDriver) getLB(ctx context.Context, id string) (*rancher.LoadBalancerService, error) {
	svc, err := cloud.ByID[rancher.LoadBalancerService](ctx, d.api, "loadbalancerservices.get", rancher.LOAD_BALANCER_SERVICE_TYPE, id)
	switch {
	case err != nil && d.api.NotFound(err):
		return nil, framework.NotFound("load balancer %s", id)
	case err != nil:
		return nil, err
	}
	gone, err := cloud.Removed("load balancer", id, svc.State, svc.Removed)
	switch {
	case err != nil:
		return nil, fmt.Errorf("reading load balancer %s: %w", id, err)
	case gone:
		return nil, framework.NotFound("load balancer %s is %s", id, svc.State)
	}
	if err := checkLB(svc); err != nil {
		return nil, fmt.Errorf("reading load balancer %s: %w", id, err)
	}
	return svc, nil
}

// replaceLB makes fresh lb's service, checking Cattle's answer.
func (d *lbDriver) replaceLB(lb *loadBalancer, fresh *rancher.LoadBalancerService) error {
	if fresh == nil || fresh.Id != lb.svc.Id {
		return fmt.Errorf("load balancer %s: malformed response: no such load balancer in the answer", lb.svc.Id)
	}
	if err := checkLB(fresh); err != nil {
		return err
	}
	lb.svc = fresh
	return nil
}

// checkLB rejects a load-balancer service the driver cannot act on:
// without id, or with a public endpoint whose ipAddress is no IP (the
// Service's status is made of them). No endpoint at all is well-formed:
// Cattle lists them once the HAProxy containers run.
func checkLB(svc *rancher.LoadBalancerService) error {
	if svc.Id == "" {
		return errors.New("malformed response: a load balancer without id")
	}
	for _, e := range svc.PublicEndpoints {
		if _, err := netip.ParseAddr(e.IpAddress); err != nil {
			return fmt.Errorf("malformed response: load balancer %s: public endpoint %q is no IP", svc.Id, e.IpAddress)
		}
	}
	return nil
}

// Delete removes the external services only this load balancer consumes
// (its own, and the per-node ones the existing CCM made), then the
// load-balancer service. Cattle removes it in the background: Delete
// answers "provisioning" until it is removed, and then removes the
// external services named as its backends that nothing links (one a sync
// made as the load balancer was being deleted).
func (d *lbDriver) Delete(ctx context.Context, lb *loadBalancer, _ *lbRequest) error {
	svc := lb.svc
	d.linked.Delete(svc.Id)
	if svc.State == cloud.StateRemoving {
		if _, err := d.getLB(ctx, svc.Id); err != nil {
			return d.gone(ctx, svc, err)
		}
		return framework.Provisioning("load balancer %s is being removed", svc.Id)
	}
	// The backends as Cattle holds them now, not as a shared list did.
	exts, err := d.listExternal(ctx, svc.StackId)
	if err != nil {
		return err
	}
	lb.backends = backendsOf(svc.Name, exts)
	if err := d.deleteBackends(ctx, lb); err != nil {
		return err
	}
	err = deleteResource(ctx, d.api, "loadbalancerservices.delete", &svc.Resource)
	switch {
	case err != nil && d.api.NotFound(err):
		return d.gone(ctx, svc, framework.NotFound("load balancer %s", svc.Id))
	case err != nil:
		return fmt.Errorf("deleting load balancer %s: %w", svc.Id, err)
	}
	return framework.Provisioning("load balancer %s is being removed", svc.Id)
}

// gone handles Delete's finding the load balancer svc no longer there
// (err wraps ErrNotFound; another error is returned as is): the external
// services named as its backends that no service links are removed, and
// the ErrNotFound returned, which tells the pipeline the delete is done.
func (d *lbDriver) gone(ctx context.Context, svc *rancher.LoadBalancerService, err error) error {
	if !framework.IsNotFound(err) {
		return err
	}
	if lerr := d.deleteUnlinked(ctx, svc.StackId, svc.Name); lerr != nil {
		return lerr
	}
	return err
}

// Inspect tells the pipeline what state the load balancer is in. Its
// addresses are those of its public endpoints: the hosts its HAProxy
// containers publish the ports on.
func (d *lbDriver) Inspect(lb *loadBalancer) framework.LoadBalancerState {
	svc := lb.svc
	s := framework.LoadBalancerState{ID: svc.Id}
	for _, e := range svc.PublicEndpoints {
		if e.IpAddress != "" {
			s.IPs = append(s.IPs, e.IpAddress)
		}
	}
	slices.Sort(s.IPs)
	s.IPs = slices.Compact(s.IPs)
	switch {
	case svc.Transitioning == transitionError:
		s.Failed = fmt.Sprintf("%s: %s", svc.State, svc.TransitioningMessage)
	case svc.State == "requested" || svc.State == "registering" || svc.State == "activating" || svc.State == cloud.StateRemoving:
		s.Provisioning = true
	case svc.Transitioning == transitionYes || svc.State == stateUpgraded:
		s.Pending = fmt.Sprintf("is %s in Cattle", svc.State)
	case lb.pending != "":
		s.Pending = lb.pending
	case svc.State == stateInactive && len(s.IPs) == 0:
		// Update's next step activates it: waiting, not a failure.
		s.Pending = "is inactive in Cattle until activated"
	}
	return s
}

// listLBs lists the load-balancer services matching filters, not removed,
// all pages.
func (d *lbDriver) listLBs(ctx context.Context, filters map[string]any) ([]*rancher.LoadBalancerService, error) {
	filters["removed_null"] = "1"
	svcs, err := cloud.ListAll[rancher.LoadBalancerService](ctx, d.api, "loadbalancerservices.list", rancher.LOAD_BALANCER_SERVICE_TYPE, filters, listPageSize)
	if err != nil {
		return nil, err
	}
	var out []*rancher.LoadBalancerService
	for i := range svcs {
		s := &svcs[i]
		if err := checkLB(s); err != nil {
			return nil, fmt.Errorf("listing load balancers: %w", err)
		}
		gone, err := cloud.Removed("load balancer", s.Id, s.State, s.Removed)
		if err != nil {
			return nil, fmt.Errorf("listing load balancers: %w", err)
		}
		if !gone {
			out = append(out, s)
		}
	}
	return out, nil
}

// listExternal lists the stack's external services, not removed, all
// pages.
func (d *lbDriver) listExternal(ctx context.Context, stackID string) ([]*rancher.ExternalService, error) {
	svcs, err := cloud.ListAll[rancher.ExternalService](ctx, d.api, "externalservices.list", rancher.EXTERNAL_SERVICE_TYPE, map[string]any{"stackId": stackID, "removed_null": "1"}, listPageSize)
	if err != nil {
		return nil, err
	}
	var out []*rancher.ExternalService
	for i := range svcs {
		s := &svcs[i]
		if s.Id == "" {
			return nil, errors.New("listing external services: malformed response: an external service without id")
		}
		gone, err := cloud.Removed("external service", s.Id, s.State, s.Removed)
		if err != nil {
			return nil, fmt.Errorf("listing external services: %w", err)
		}
		if !gone && s.State != cloud.StateRemoving {
			out = append(out, s)
		}
	}
	return out, nil
}

// withBackends pairs a load-balancer service with its own backends and
// the shared one among the stack's external services.
func (d *lbDriver) withBackends(svc *rancher.LoadBalancerService, exts []*rancher.ExternalService) *loadBalancer {
	lb := &loadBalancer{svc: svc, backends: backendsOf(svc.Name, exts)}
	for _, e := range exts {
		if e.Name == d.sharedName {
			lb.shared = e
			break
		}
	}
	return lb
}

func backendsOf(lbName string, exts []*rancher.ExternalService) []*rancher.ExternalService {
	var out []*rancher.ExternalService
	for _, e := range exts {
		if isBackendOf(e.Name, lbName) {
			out = append(out, e)
		}
	}
	return out
}

// isInvalidReference reports Cattle's 422 to a create: a reference to
// something gone (the stack, removed behind the CCM's back) or garbled.
func isInvalidReference(err error) bool {
	var apiErr *rancher.ApiError
	return errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusUnprocessableEntity
}

// isStackGone reports Cattle's 422 InvalidReference for the stackId of a
// create: the stack it names does not exist or is being removed. go-rancher
// keeps the JSON body's members as "code=InvalidReference,
// fieldName=stackId, ..." in any order.
func isStackGone(err error) bool {
	var apiErr *rancher.ApiError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusUnprocessableEntity {
		return false
	}
	var code, field bool
	for part := range strings.SplitSeq(apiErr.Body, ", ") {
		code = code || part == "code=InvalidReference"
		field = field || part == "fieldName=stackId"
	}
	return code && field
}
