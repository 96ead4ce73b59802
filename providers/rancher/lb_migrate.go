package rancher

import (
	"context"
	"slices"

	rancher "github.com/rancher/go-rancher/v2"
	"k8s.io/klog/v2"
)

// The existing CCM gave each load balancer one external service per node,
// named after the node's hostname, linked to the load balancer and each
// the target of its own port rules. Its stack and load balancers are
// adopted as they are (same IDs, same public endpoints); its per-node
// external services are folded into the one this CCM keeps, in steps that
// never leave the load balancer without a backend:
//
//  1. the new external service is created and becomes active;
//  2. the load balancer is linked to it besides the old ones;
//  3. its port rules move to it (a PUT of lbConfig);
//  4. the old ones no other service consumes are removed, and the load
//     balancer's links to those others are dropped.
//
// A Service's health check changing replaces its external service the same
// way (Cattle cannot change one in place). The same steps, run from the
// load balancer's links read once per process, finish a fold a restart
// interrupted.

// ensureLinks makes the load balancer consume its external service
// (step 2), reading its links unless this process already found them to
// be just that one. It returns the links it read (nil when it read none)
// and whether it wrote.
func (d *lbDriver) ensureLinks(ctx context.Context, lb *loadBalancer, backend *rancher.ExternalService) ([]rancher.Service, bool, error) {
	svc := lb.svc
	if _, ok := d.linked.Load(svc.Id); ok && slices.Equal(ruleServiceIDs(svc.LbConfig), []string{backend.Id}) && len(lb.backends) == 1 {
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
// (nil: known to be just backend).
func (d *lbDriver) foldBackends(ctx context.Context, lb *loadBalancer, backend *rancher.ExternalService, consumed []rancher.Service) (bool, error) {
	svc := lb.svc
	if consumed == nil {
		return false, nil
	}
	old := map[string]rancher.Resource{}
	var keep []rancher.Service
	for _, s := range consumed {
		switch {
		case s.Id == backend.Id:
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
	wrote, unlink := false, false
	for id, res := range old {
		users, err := d.consumers(ctx, res, svc.Id)
		if err != nil {
			return wrote, err
		}
		if len(users) > 0 {
			unlink = true
			continue
		}
		klog.FromContext(ctx).Info("Removing a replaced external service of the load balancer", "loadBalancerID", svc.Id, "externalService", id)
		if err := d.deleteExternal(ctx, res); err != nil {
			return wrote, err
		}
		wrote = true
	}
	lb.backends = []*rancher.ExternalService{backend}
	if unlink {
		links := append(serviceLinks(keep), rancher.ServiceLink{ServiceId: backend.Id, Name: backend.Name})
		return true, d.action(ctx, lb, "setservicelinks", &rancher.SetServiceLinksInput{ServiceLinks: links})
	}
	if !wrote {
		d.linked.Store(svc.Id, struct{}{})
	}
	return wrote, nil
}

// serviceLinks are links to svcs, named as them.
func serviceLinks(svcs []rancher.Service) []rancher.ServiceLink {
	out := make([]rancher.ServiceLink, 0, len(svcs)+1)
	for _, s := range svcs {
		out = append(out, rancher.ServiceLink{ServiceId: s.Id, Name: s.Name})
	}
	return out
}
