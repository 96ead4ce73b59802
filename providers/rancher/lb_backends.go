package rancher

import (
	"context"
	"errors"
	"fmt"
	"slices"

	rancher "github.com/rancher/go-rancher/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/providers/rancher/internal/cloud"
)

// A load balancer's nodes are one externalService in its stack holding
// the nodes' InternalIPs: the one the load balancers share
// (lb-nodes-<cluster>, lb_shared.go), or for a Service of
// externalTrafficPolicy Local its own, lb-<x>-nodes-<hash of its health
// check> (lb_desired.go). A node joining or leaving is one PUT of its
// externalIpAddresses, and the load-balancer service is not touched. The
// load balancer consumes it through a service link (setservicelinks) and
// its port rules' serviceId.

// ensureBackend returns the load balancer's external service as want names
// it, creating it when missing and setting its IPs when they differ. It
// reports whether it wrote; lb.backends (for one of its own) or the memo
// (for the shared one) then holds the new value.
func (d *lbDriver) ensureBackend(ctx context.Context, lb *loadBalancer, want *desiredLB, stackID string) (*rancher.ExternalService, bool, error) {
	if want.backend.shared {
		return d.ensureShared(ctx, lb, want, stackID)
	}
	i := slices.IndexFunc(lb.backends, func(b *rancher.ExternalService) bool { return b.Name == want.backend.name })
	if i < 0 {
		adopted, err := d.unlinkedBackend(ctx, stackID, want.backend.name)
		if err != nil {
			return nil, false, err
		}
		if adopted != nil {
			lb.backends = append(slices.Clone(lb.backends), adopted)
			i = len(lb.backends) - 1
		}
	}
	if i < 0 {
		created, err := cloud.CreateResource[rancher.ExternalService](ctx, d.api, "externalservices.create", rancher.EXTERNAL_SERVICE_TYPE, &rancher.ExternalService{
			Name:                want.backend.name,
			StackId:             stackID,
			Description:         "Nodes of a Kubernetes load balancer (rancher-cloud-controller-manager)",
			ExternalIpAddresses: want.backend.ips,
			HealthCheck:         want.backend.healthCheck,
			StartOnCreate:       true,
		})
		if err != nil {
			return nil, false, fmt.Errorf("creating external service %s: %w", want.backend.name, err)
		}
		lb.backends = append(slices.Clone(lb.backends), created)
		return created, true, nil
	}
	have := lb.backends[i]
	if sameSet(have.ExternalIpAddresses, want.backend.ips) {
		return have, false, nil
	}
	updated, err := updateResource[rancher.ExternalService](ctx, d.api, "externalservices.update", rancher.EXTERNAL_SERVICE_TYPE, &have.Resource, map[string]any{"externalIpAddresses": want.backend.ips})
	if err != nil {
		return nil, false, fmt.Errorf("setting the nodes of external service %s: %w", have.Id, err)
	}
	lb.backends = slices.Clone(lb.backends)
	lb.backends[i] = updated
	return updated, true, nil
}

// unlinkedBackend returns the stack's external service named name, read
// afresh, nil when there is none: one a sync made before it lost the
// answer, or before its CCM was killed, which the load balancer does not
// link yet (the list lb.backends came from may predate it). Adopting it
// keeps a second one of the same name from being made.
func (d *lbDriver) unlinkedBackend(ctx context.Context, stackID, name string) (*rancher.ExternalService, error) {
	exts, err := d.listExternal(ctx, stackID)
	if err != nil {
		return nil, err
	}
	if i := slices.IndexFunc(exts, func(e *rancher.ExternalService) bool { return e.Name == name }); i >= 0 {
		klog.FromContext(ctx).V(2).Info("Adopting an external service a previous sync made", "externalService", exts[i].Id, "name", name)
		return exts[i], nil
	}
	return nil, nil
}

// waitBackend handles an external service that does not serve yet: read
// afresh (the shared list may hold an older state), activated when
// inactive (Cattle did not start it on creation), and, until it serves,
// noted in lb.pending for Inspect: the load balancer's port rules move to
// it only once it serves. It returns the backend as read and whether it
// wrote.
func (d *lbDriver) waitBackend(ctx context.Context, lb *loadBalancer, b *rancher.ExternalService) (*rancher.ExternalService, bool, error) {
	fresh, err := cloud.ByID[rancher.ExternalService](ctx, d.api, "externalservices.get", rancher.EXTERNAL_SERVICE_TYPE, b.Id)
	if err != nil {
		return nil, false, fmt.Errorf("reading external service %s: %w", b.Id, err)
	}
	if i := slices.Index(lb.backends, b); i >= 0 {
		lb.backends = slices.Clone(lb.backends)
		lb.backends[i] = fresh
	}
	d.shared.note(fresh)
	if started(fresh.State) {
		return fresh, false, nil
	}
	wrote := false
	if _, ok := fresh.Actions["activate"]; fresh.State == stateInactive && ok {
		if err := runAction(ctx, d.api, "externalservices.activate", rancher.EXTERNAL_SERVICE_TYPE, "activate", &fresh.Resource, nil); err != nil {
			return nil, false, fmt.Errorf("activating external service %s: %w", b.Id, err)
		}
		wrote = true
	}
	lb.pending = fmt.Sprintf("is waiting for external service %s (%s, %s) to be active", fresh.Name, fresh.Id, fresh.State)
	return fresh, wrote, nil
}

// consumed lists the services svc consumes (its service links), not
// removed or being removed, all pages.
func (d *lbDriver) consumed(ctx context.Context, res rancher.Resource) ([]rancher.Service, error) {
	return d.serviceLink(ctx, res, "consumedservices")
}

// serviceLink reads a link to a service collection, following its pages.
func (d *lbDriver) serviceLink(ctx context.Context, res rancher.Resource, link string) ([]rancher.Service, error) {
	svcs, err := cloud.GetLink[rancher.Service](ctx, d.api, "services."+link, res, link)
	if err != nil {
		return nil, err
	}
	var out []rancher.Service
	for _, s := range svcs {
		if s.Id == "" {
			return nil, fmt.Errorf("reading the %s of service %s: malformed response: a service without id", link, res.Id)
		}
		gone, err := cloud.Removed("service", s.Id, s.State, s.Removed)
		if err != nil {
			return nil, fmt.Errorf("reading the %s of service %s: %w", link, res.Id, err)
		}
		if !gone && s.State != cloud.StateRemoving {
			out = append(out, s)
		}
	}
	return out, nil
}

// deleteExternal removes an external service; one already gone is fine.
// Removing the shared one makes the memo forget it.
func (d *lbDriver) deleteExternal(ctx context.Context, res rancher.Resource) error {
	d.shared.removing(res.Id)
	err := deleteResource(ctx, d.api, "externalservices.delete", &res)
	if err != nil && !d.api.NotFound(err) {
		return fmt.Errorf("removing external service %s: %w", res.Id, err)
	}
	return nil
}

// DeleteLeftovers implements framework.LoadBalancerLeftovers: when a
// Service's load balancer is not there, it removes the external services
// named as its backends (lb-<x>-nodes...) that no service links: those a
// create made before the load balancer itself, left by a CCM killed in
// between or a load-balancer create that failed, and those a load balancer
// removed since left behind; and the shared one when nothing consumes it.
func (d *lbDriver) DeleteLeftovers(ctx context.Context, req *lbRequest) error {
	stackID, err := d.env.stack(ctx, false)
	if err != nil || stackID == "" {
		return err
	}
	return d.deleteUnlinked(ctx, stackID, req.Name)
}

// deleteUnlinked removes the stack's external services named as the
// backends of load balancer lbName, and the shared one, that no live
// service consumes.
func (d *lbDriver) deleteUnlinked(ctx context.Context, stackID, lbName string) error {
	exts, err := d.listExternal(ctx, stackID)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range exts {
		if e.Name == d.sharedName {
			errs = append(errs, d.deleteShared(ctx, e, ""))
		}
	}
	for _, e := range backendsOf(lbName, exts) {
		user, err := d.firstConsumer(ctx, e.Resource, "")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if user != "" {
			klog.FromContext(ctx).V(2).Info("Keeping external service another service consumes", "externalService", e.Id, "consumer", user)
			continue
		}
		klog.FromContext(ctx).Info("Removing an external service left without its load balancer", "loadBalancer", lbName, "externalService", e.Id)
		errs = append(errs, d.deleteExternal(ctx, e.Resource))
	}
	return errors.Join(errs...)
}

// deleteBackends removes, before the load balancer itself, the external
// services of its stack it consumes or that are named as its backends,
// unless another service still consumes them. The shared one is left to
// the end of the delete (Delete's gone): two load balancers deleted at
// once would each see the other consume it.
func (d *lbDriver) deleteBackends(ctx context.Context, lb *loadBalancer) error {
	svc := lb.svc
	consumed, err := d.consumed(ctx, svc.Resource)
	if err != nil {
		return err
	}
	candidates := map[string]rancher.Resource{}
	for _, s := range consumed {
		if s.Type == rancher.EXTERNAL_SERVICE_TYPE && s.StackId == svc.StackId && s.Name != d.sharedName {
			candidates[s.Id] = s.Resource
		}
	}
	for _, b := range lb.backends {
		candidates[b.Id] = b.Resource
	}
	var errs []error
	for id, res := range candidates {
		user, err := d.firstConsumer(ctx, res, svc.Id)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if user != "" {
			klog.FromContext(ctx).V(2).Info("Keeping external service another service consumes", "loadBalancerID", svc.Id, "externalService", id, "consumer", user)
			continue
		}
		errs = append(errs, d.deleteExternal(ctx, res))
	}
	return errors.Join(errs...)
}

// started reports whether a service in this state serves: active, or
// being updated or upgraded while active.
func started(state string) bool {
	switch state {
	case "requested", "registering", stateInactive, "activating", "deactivating", "updating-inactive":
		return false
	}
	return true
}

// desired is req's load balancer as Cattle should hold it. The nodes' IPs
// are their InternalIPs; a Node without one yet (its node controller has
// written its providerID, not yet its addresses) takes its host's agent
// IP from the shared host list (lb_agents.go). The shared external
// service's IPs are read again under its lock (desiredBackend.current).
func (d *lbDriver) desired(ctx context.Context, req *lbRequest) (*desiredLB, error) {
	hostIPs, err := d.hostIPs(ctx, req.Nodes)
	if err != nil {
		return nil, err
	}
	want, err := desired(ctx, req, d.env.settings.Image, hostIPs)
	if err != nil {
		return nil, err
	}
	if want.backend.shared {
		want.backend.current = func(ctx context.Context) ([]string, error) {
			nodes := req.CurrentNodes()
			hostIPs, err := d.hostIPs(ctx, nodes)
			if err != nil {
				return nil, err
			}
			return nodeIPs(ctx, nodes, hostIPs), nil
		}
	}
	return want, nil
}

// hostIPs are the agent IPs of the hosts of those nodes that have a
// providerID and no InternalIP, by host uuid; nil when there are none.
func (d *lbDriver) hostIPs(ctx context.Context, nodes []*corev1.Node) (map[string]string, error) {
	var missing []string
	for _, n := range nodes {
		if internalIP(n) == "" && hostUUID(n) != "" {
			missing = append(missing, hostUUID(n))
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	return d.agents.lookup(ctx, missing)
}
