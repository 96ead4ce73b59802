package rancher

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"
	"sync"

	rancher "github.com/rancher/go-rancher/v2"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/providers/rancher/internal/cloud"
)

// The load balancers of the Services of externalTrafficPolicy Cluster send
// their traffic to one external service of the load-balancer stack,
// lb-nodes-<cluster name>, holding the nodes' IPs.
//
// With one external service per load balancer, a node joining or leaving
// a cluster of 200 LoadBalancer Services was 200 PUTs of
// externalIpAddresses. The service controller still syncs every Service
// on a node change; what makes the other 199 syncs free is the memo
// below, the IPs the shared service was last made to hold: a sync whose
// nodes give the same IPs makes no call, the first one with other IPs
// makes one PUT.
//
// Which load balancers share it: the service controller gives every load
// balancer the same nodes (all Nodes but those excluded by label or being
// deleted by the cluster autoscaler), so every Service of
// externalTrafficPolicy Cluster has the same node set. The name is the
// cluster's (--cluster-name), not a hash of the IPs: the set is the
// cluster's, and the service stays the same one as nodes come and go
// (load balancers keep their links and port rules). A Service of
// externalTrafficPolicy Local has a set of its own in effect: Cattle
// health-checks the addresses of an external service, and the check is
// on the Service's own healthCheckNodePort, so it keeps its own external
// service (lb-<x>-nodes-<hash of its health check>, lb_desired.go), and a
// node change writes each of those.
//
// Two syncs given different nodes (the service controller syncs five
// Services at once, and a sync that read the Nodes just before one joined
// or left can write after one that read them just after): the last write
// wins, and it is the newest set. The service controller's node sync
// syncs every Service whose last nodes differ from the new ones, and the
// pipeline runs the syncs of one Service one at a time, so each Service's
// sync with the new set comes after its sync with the old one. Such an
// older sync would still put a node that left back for a moment (a PUT,
// and one more to take it out): a sync naming a Node that the informer
// the service controller reads no longer has writes nothing. A sync
// missing a Node that joined cannot be told from one that leaves it out
// on purpose (excluded by label), and is written.
//
// The memo is held under mu for a whole write (calls included), so two
// syncs with the same new node never both PUT, nor both create the
// service. It starts from the shared list's view of the service (the
// CCM's start) and follows every write; a failed write, or the CCM
// removing the service, forgets it, and the next sync reads it again.
// Nothing but this CCM is expected to change the service.
//
// Load balancers made by an earlier ccmkit consume their own
// lb-<x>-nodes; those of the existing CCM, one external service per node.
// Either moves to the shared one at its next sync, in lb_migrate.go's
// steps: linked to it, then its port rules moved to it, then its old
// external services removed (unlinked when another service consumes
// them), so it always has a backend. The shared service is removed when
// nothing consumes it, checked when a load balancer is gone or moves to
// its own: deleting the last load balancer removes it.

// sharedPrefix begins the name of the shared external service. No load
// balancer's own external service begins so: theirs are lb-a<UID>-nodes.
const sharedPrefix = "lb-nodes-"

// maxCattleName is the longest name this CCM gives a Cattle service.
const maxCattleName = 63

var notNameChars = regexp.MustCompile(`[^a-zA-Z0-9-]+`)

// sharedBackendName is the shared external service's name for the
// cluster: lb-nodes-<cluster name>, the name made of letters, digits and
// dashes, and with a hash of the cluster name when it had to be changed
// or shortened (two clusters' load balancers in one stack must not share).
func sharedBackendName(cluster string) string {
	name := strings.Trim(notNameChars.ReplaceAllString(cluster, "-"), "-")
	room := maxCattleName - len(sharedPrefix)
	if name == cluster && name != "" && len(name) <= room {
		return sharedPrefix + name
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(cluster))
	sum := fmt.Sprintf("%08x", h.Sum32())
	if keep := room - len(sum) - 1; len(name) > keep {
		name = strings.TrimRight(name[:keep], "-")
	}
	if name == "" {
		return sharedPrefix + sum
	}
	return sharedPrefix + name + "-" + sum
}

// sharedBackend is the shared external service as this CCM last read or
// wrote it: the memo.
type sharedBackend struct {
	mu sync.Mutex
	// svc is the service as last read or written; nil when unknown.
	svc *rancher.ExternalService
	// removed is the ID of the shared external service the CCM removed
	// last: a list made before does not make it the shared one again.
	removed string
	// beforeLock, when set, runs as a sync is about to take mu: tests let
	// another sync run in that window. Nil outside tests.
	beforeLock func()
}

// note records svc as the shared service's latest state (read afresh by
// a sync waiting for it to start).
func (s *sharedBackend) note(svc *rancher.ExternalService) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.svc != nil && s.svc.Id == svc.Id {
		s.svc = svc
	}
}

// forget drops the memo: the service is read again at the next sync.
func (s *sharedBackend) forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.svc = nil
}

// removing notes that the CCM removes the external service id: when the
// memo holds it, the memo forgets it, and a list that still shows it is
// not believed.
func (s *sharedBackend) removing(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.svc != nil && s.svc.Id == id {
		s.svc, s.removed = nil, id
	}
}

// ensureShared returns the shared external service holding want's IPs
// (as the request's Nodes are under the lock: want.backend.current),
// and whether it wrote: no call when the memo holds them already; else
// the service is found (the memo, the load balancer's list, a list by
// name), created when missing, and its IPs PUT when they differ.
func (d *lbDriver) ensureShared(ctx context.Context, lb *loadBalancer, want *desiredLB, stackID string) (*rancher.ExternalService, bool, error) {
	s := d.shared
	if s.beforeLock != nil {
		s.beforeLock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	name, ips := want.backend.name, want.backend.ips
	if want.backend.current != nil {
		// A sync that waited here behind one made after a node joined
		// (or left) would otherwise write the older set back.
		var err error
		if ips, err = want.backend.current(ctx); err != nil {
			return nil, false, err
		}
	}
	cur := s.svc
	if cur != nil && (cur.Name != name || cur.StackId != stackID) {
		cur = nil // another stack: the old one was removed by hand
	}
	if cur == nil && lb.shared != nil && lb.shared.Name == name && lb.shared.StackId == stackID && lb.shared.Id != s.removed {
		cur = lb.shared
	}
	if cur == nil {
		found, leaving, err := d.findExternal(ctx, stackID, name)
		switch {
		case err != nil:
			return nil, false, err
		case found == nil && leaving != "":
			// Cattle keeps the name until the removal is done.
			return nil, false, framework.Provisioning("external service %s (%s) is being removed: it is made again once it is gone", name, leaving)
		}
		cur = found
	}
	if cur == nil {
		klog.FromContext(ctx).Info("Creating the external service the load balancers share", "name", name, "nodes", len(ips))
		created, err := cloud.CreateResource[rancher.ExternalService](ctx, d.api, "externalservices.create", rancher.EXTERNAL_SERVICE_TYPE, &rancher.ExternalService{
			Name:                name,
			StackId:             stackID,
			Description:         "Nodes of the Kubernetes load balancers (rancher-cloud-controller-manager)",
			ExternalIpAddresses: ips,
			StartOnCreate:       true,
		})
		if err != nil {
			s.svc = nil
			return nil, false, fmt.Errorf("creating external service %s: %w", name, err)
		}
		s.svc, lb.shared = created, created
		return created, true, nil
	}
	if sameSet(cur.ExternalIpAddresses, ips) {
		s.svc, lb.shared = cur, cur
		return cur, false, nil
	}
	klog.FromContext(ctx).V(2).Info("Setting the nodes of the external service the load balancers share", "externalService", cur.Id, "nodes", len(ips))
	updated, err := updateResource[rancher.ExternalService](ctx, d.api, "externalservices.update", rancher.EXTERNAL_SERVICE_TYPE, &cur.Resource, map[string]any{"externalIpAddresses": ips})
	if err != nil {
		s.svc = nil
		return nil, false, fmt.Errorf("setting the nodes of external service %s: %w", cur.Id, err)
	}
	s.svc, lb.shared = updated, updated
	return updated, true, nil
}

// findExternal returns the stack's live external service named name, nil
// when there is none, and the ID of one of that name being removed.
func (d *lbDriver) findExternal(ctx context.Context, stackID, name string) (*rancher.ExternalService, string, error) {
	svcs, err := cloud.ListAll[rancher.ExternalService](ctx, d.api, "externalservices.list", rancher.EXTERNAL_SERVICE_TYPE, map[string]any{"stackId": stackID, "name": name, "removed_null": "1"}, 0)
	if err != nil {
		return nil, "", err
	}
	leaving := ""
	for i := range svcs {
		e := &svcs[i]
		if e.Name != name || e.StackId != stackID {
			continue
		}
		if e.Id == "" {
			return nil, "", errors.New("listing external services: malformed response: an external service without id")
		}
		gone, err := cloud.Removed("external service", e.Id, e.State, e.Removed)
		switch {
		case err != nil:
			return nil, "", fmt.Errorf("listing external services: %w", err)
		case !gone && e.State == cloud.StateRemoving:
			leaving = e.Id
		case !gone:
			return e, "", nil
		}
	}
	return nil, leaving, nil
}

// errFound stops a page-by-page read once it found what it looked for.
var errFound = errors.New("found")

// firstConsumer returns the ID of a live service other than except that
// consumes res, "" when none does, reading its consumedbyservices page by
// page and stopping at the first: the shared external service has as many
// consumers as there are load balancers.
func (d *lbDriver) firstConsumer(ctx context.Context, res rancher.Resource, except string) (string, error) {
	u := res.Links["consumedbyservices"]
	if u == "" {
		return "", fmt.Errorf("malformed response: %s %s has no consumedbyservices link", res.Type, res.Id)
	}
	found := ""
	err := d.api.Do(ctx, "services.consumedbyservices", func(c *cloud.Call) error {
		return cloudapi.Pager[rancher.Service]{
			Start: cloudapi.Link(u),
			Fetch: func(_ context.Context, at cloudapi.Cursor) ([]rancher.Service, cloudapi.Cursor, error) {
				page := &cloud.Collection[rancher.Service]{}
				if err := c.GetLink(rancher.Resource{Links: map[string]string{"at": at.Link()}}, "at", page); err != nil {
					return nil, cloudapi.Done, err
				}
				if page.Pagination == nil {
					return page.Data, cloudapi.Done, nil
				}
				return page.Data, cloudapi.Link(page.Pagination.Next), nil
			},
		}.Each(ctx, func(svcs []rancher.Service) error {
			for _, s := range svcs {
				if s.Id == "" {
					return fmt.Errorf("malformed response: a service without id")
				}
				gone, err := cloud.Removed("service", s.Id, s.State, s.Removed)
				if err != nil {
					return err
				}
				if !gone && s.State != cloud.StateRemoving && s.Id != except {
					found = s.Id
					return errFound
				}
			}
			return nil
		})
	})
	if err != nil && !errors.Is(err, errFound) {
		return "", fmt.Errorf("reading the consumedbyservices of service %s: %w", res.Id, err)
	}
	return found, nil
}

// deleteShared removes the shared external service when no service but
// except consumes it (a load balancer moving to its own, "" for none).
// The memo's lock is held from the check to the removal, so no sync of
// this CCM hands the service out meanwhile.
func (d *lbDriver) deleteShared(ctx context.Context, ext *rancher.ExternalService, except string) error {
	s := d.shared
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.removed == ext.Id {
		return nil // another delete removed it since its list
	}
	user, err := d.firstConsumer(ctx, ext.Resource, except)
	if err != nil || user != "" {
		return err
	}
	klog.FromContext(ctx).Info("Removing the external service the load balancers shared: nothing uses it now", "externalService", ext.Id, "name", ext.Name)
	s.svc, s.removed = nil, ext.Id
	err = deleteResource(ctx, d.api, "externalservices.delete", &ext.Resource)
	if err != nil && !d.api.NotFound(err) {
		return fmt.Errorf("removing external service %s: %w", ext.Id, err)
	}
	return nil
}
