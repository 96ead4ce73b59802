package rancher

import (
	"context"
	"slices"

	rancher "github.com/rancher/go-rancher/v2"
	"k8s.io/klog/v2"
)

// The existing CCM gave each load balancer one external service per node,
// named after the node's hostname, linked to the load balancer and each
// the target of its own port rules; an earlier ccmkit gave each its own,
// lb-<x>-nodes. The stack and load balancers are adopted as they are
// (same IDs, same public endpoints); their old external services are
// folded into the one this CCM keeps (the shared one, lb_shared.go, or
// for externalTrafficPolicy Local the load balancer's own), in steps that
// never leave the load balancer without a backend:
//
//  1. the new external service is created, or found, and is active;
//  2. the load balancer is linked to it besides the old ones;
//  3. its port rules move to it (a PUT of lbConfig);
//  4. the old ones no other service consumes are removed, and the load
//     balancer's links to those others are dropped.
//
// A Service's health check changing replaces its external service the same
// way (Cattle cannot change one in place), and so does a Service moving
// between externalTrafficPolicy Cluster and Local, from the shared one to
// its own and back. The same steps, run from the load balancer's links
// read once per process, finish a fold a restart interrupted.

// ensureLinks makes the load balancer consume its external service
// (step 2), reading its links unless this process already found them to
// be just that one. It returns the links it read (nil when it read none)
// and whether it wrote.
func (d *lbDriver) ensureLinks(ctx context.Context, lb *loadBalancer, backend *rancher.ExternalService) ([]rancher.Service, bool, error) {
	svc := lb.svc
	if _, ok := d.linked.Load(svc.Id); ok && slices.Equal(ruleServiceIDs(svc.LbConfig), []string{backend.Id}) && !replaces(lb, backend) {
		return nil, false, nil
	}
	consumed, err := d.consumed(ctx, svc.Resource)
	if err != nil {
		return nil, false, err
	}
	if slices.ContainsFunc(consumed, func(s rancher.Service) bool { return s.Id == backend.Id }) {
		return consumed, false, nil
	}
	d.linked.Delete(svc.Id)
	links := serviceLinks(consumed)
	links = append(links, rancher.ServiceLink{ServiceId: backend.Id, Name: backend.Name})
	return nil, true, d.action(ctx, lb, "setservicelinks", &rancher.SetServiceLinksInput{ServiceLinks: links})
}

// foldBackends runs step 4 once the port rules send everything to backend:
// the other external services the load balancer consumes, or named as its
// backends, are removed when nothing else consumes them and are in its
// stack, else unlinked. consumed are its links as ensureLinks read them
// (nil: known to be just backend). The shared external service, left by a
// load balancer that moves to its own (externalTrafficPolicy Local), is
// only unlinked, and removed when that leaves it unused.
func (d *lbDriver) foldBackends(ctx context.Context, lb *loadBalancer, backend *rancher.ExternalService, consumed []rancher.Service) (bool, error) {
	svc := lb.svc
	if consumed == nil {
		return false, nil
	}
	old := map[string]rancher.Resource{}
	var keep []rancher.Service
	var shared *rancher.Service
	for _, s := range consumed {
		switch {
		case s.Id == backend.Id:
		case s.Type == rancher.EXTERNAL_SERVICE_TYPE && s.StackId == svc.StackId && s.Name == d.sharedName:
			shared = &s
		case s.Type == rancher.EXTERNAL_SERVICE_TYPE && s.StackId == svc.StackId:
			old[s.Id] = s.Resource
		default:
			keep = append(keep, s)
		}
	}
	for _, b := range lb.backends {
		if b.Id != backend.Id {
			old[b.Id] = b.Resource
		}
	}
	wrote, unlink := false, shared != nil
	for id, res := range old {
		user, err := d.firstConsumer(ctx, res, svc.Id)
		if err != nil {
			return wrote, err
		}
		if user != "" {
			unlink = true
			continue
		}
		klog.FromContext(ctx).Info("Removing a replaced external service of the load balancer", "loadBalancerID", svc.Id, "externalService", id)
		if err := d.deleteExternal(ctx, res); err != nil {
			return wrote, err
		}
		wrote = true
	}
	lb.backends = nil
	if isBackendOf(backend.Name, svc.Name) {
		lb.backends = []*rancher.ExternalService{backend}
	}
	if unlink {
		links := append(serviceLinks(keep), rancher.ServiceLink{ServiceId: backend.Id, Name: backend.Name})
		if err := d.action(ctx, lb, "setservicelinks", &rancher.SetServiceLinksInput{ServiceLinks: links}); err != nil {
			return true, err
		}
		if shared != nil {
			// Unlinked first: deleteShared sees this load balancer gone.
			return true, d.deleteShared(ctx, &rancher.ExternalService{Resource: shared.Resource, Name: shared.Name}, svc.Id)
		}
		return true, nil
	}
	if !wrote {
		d.linked.Store(svc.Id, struct{}{})
	}
	return wrote, nil
}

// replaces reports whether the load balancer has own external services
// besides backend: ones backend replaces, for foldBackends to remove.
func replaces(lb *loadBalancer, backend *rancher.ExternalService) bool {
	return slices.ContainsFunc(lb.backends, func(b *rancher.ExternalService) bool { return b.Id != backend.Id })
}

// serviceLinks are links to svcs, named as them.
func serviceLinks(svcs []rancher.Service) []rancher.ServiceLink {
	out := make([]rancher.ServiceLink, 0, len(svcs)+1)
	for _, s := range svcs {
		out = append(out, rancher.ServiceLink{ServiceId: s.Id, Name: s.Name})
	}
	return out
}
