package brightbox

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"time"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"github.com/brightbox/gobrightbox/v2/enums/cloudipstatus"
	"github.com/brightbox/gobrightbox/v2/enums/loadbalancerstatus"
	"k8s.io/apimachinery/pkg/util/validation"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/providerid"
)

// loadBalancer is a Brightbox load balancer as the driver keeps it: as
// gobrightbox returns it, but with its nodes, which the API embeds as
// whole servers, reduced to their IDs: a sync holds its load balancer
// for as long as it runs.
type loadBalancer struct {
	brightbox.LoadBalancer // its Nodes are always nil
	// NodeIDs are the IDs of its nodes.
	NodeIDs []string
}

// compact returns lb as the driver keeps it.
func compact(lb *brightbox.LoadBalancer) *loadBalancer {
	out := &loadBalancer{LoadBalancer: *lb, NodeIDs: nodeIDs(lb.Nodes)}
	out.Nodes = nil
	return out
}

var _ framework.LoadBalancerProvider = (*Provider)(nil)

// LoadBalancer implements framework.LoadBalancerProvider.
func (p *Provider) LoadBalancer() cloudprovider.LoadBalancer { return p.lb }

// newLoadBalancer wraps the driver in the framework's pipeline: annotation
// decoding with Events, find-or-create, the ID annotation, following a load
// balancer while it is created, and the status. There is no shared
// load-balancer list: see Find.
func newLoadBalancer(env *framework.Env, c *brightbox.Client, p *Provider) cloudprovider.LoadBalancer {
	d := &lbDriver{client: c, codec: framework.Codec(p)}
	d.shared.ttl, d.shared.now = env.LoadBalancerCacheTTL, time.Now
	if d.shared.ttl == 0 {
		d.shared.ttl = framework.DefaultLoadBalancerCacheTTL
	}
	return framework.NewLoadBalancer(env, d, framework.LoadBalancerOptions[LoadBalancerConfig]{
		AnnotationPrefix: AnnotationPrefix,
		IDAnnotation:     AnnotationLoadBalancerID,
		Name:             loadBalancerName,
	})
}

// lbDriver is the Brightbox half of the load-balancer pipeline. Each load
// balancer comes with a cloud IP named as it (as the existing CCM names
// it, so that its load balancers are adopted) and a rule in the firewall
// policy of the server group the load balancers share (lb_shared.go);
// Update keeps them as the Service asks, Delete removes them.
type lbDriver struct {
	client *brightbox.Client
	codec  providerid.Codec
	// cloudIPs holds, by load balancer ID, the cloud IP chosen for it that
	// it does not show yet (a cloudIPChoice): allocated by Create, or asked
	// to be mapped by Update.
	cloudIPs sync.Map
	// seen holds, by Service UID, the seenCloudIPs of a Find that found no
	// load balancer, for the Create or DeleteLeftovers that follows it.
	seen sync.Map
	// shared is what the driver knows of the shared server group and
	// firewall policy: lb_shared.go.
	shared sharedFirewall
	// gone holds the servers left out of load balancers: lb_gone.go.
	gone goneServers
}

var (
	_ framework.LoadBalancerDriver[LoadBalancerConfig, loadBalancer]    = (*lbDriver)(nil)
	_ framework.LoadBalancerValidator[LoadBalancerConfig]               = (*lbDriver)(nil)
	_ framework.LoadBalancerOwnership[LoadBalancerConfig, loadBalancer] = (*lbDriver)(nil)
	_ framework.LoadBalancerLeftovers[LoadBalancerConfig]               = (*lbDriver)(nil)
)

// Validate implements framework.LoadBalancerValidator: a Service that no
// Brightbox load balancer can serve gets a Warning Event and no write.
func (d *lbDriver) Validate(req *lbRequest) error { return validateService(req) }

// alive reports whether lb exists for the CCM: a deleted load balancer
// stays in the API's lists for a while.
func alive(lb *loadBalancer) bool { return lb.Status != loadbalancerstatus.Deleted }

// checkLB rejects a load balancer the driver cannot act on: without ID or
// without its cloud_ips member (the API sends [] for none), or with a
// cloud IP (the Service's status is made of them) that checkCloudIP
// refuses or that is listed twice. No cloud IP at all is well-formed: one
// not mapped yet.
func checkLB(lb *loadBalancer) error {
	switch {
	case lb.ID == "":
		return errors.New("malformed response: a load balancer without ID")
	case lb.CloudIPs == nil:
		return fmt.Errorf("malformed response: load balancer %s without cloud_ips", lb.ID)
	}
	seen := map[string]bool{}
	for _, c := range lb.CloudIPs {
		if err := checkCloudIP(&c); err != nil {
			return fmt.Errorf("malformed response: load balancer %s: %w", lb.ID, err)
		}
		if seen[c.ID] {
			return fmt.Errorf("malformed response: load balancer %s lists cloud IP %s twice", lb.ID, c.ID)
		}
		seen[c.ID] = true
	}
	return nil
}

// checkCloudIP checks the members of a cloud IP a load balancer's status
// is made of. Every Brightbox cloud IP has an ID, an IPv4 and an IPv6
// address and an fqdn: one missing would drop an address from the
// Service's status.
func checkCloudIP(c *brightbox.CloudIP) error {
	if c.ID == "" {
		return errors.New("a cloud IP without ID")
	}
	if ip, err := netip.ParseAddr(c.PublicIPv4); err != nil || !ip.Is4() {
		return fmt.Errorf("cloud IP %s: public_ipv4 %q is no IPv4 address", c.ID, c.PublicIPv4)
	}
	if ip, err := netip.ParseAddr(c.PublicIPv6); err != nil || !ip.Is6() {
		return fmt.Errorf("cloud IP %s: public_ipv6 %q is no IPv6 address", c.ID, c.PublicIPv6)
	}
	if !strings.Contains(c.Fqdn, ".") || len(validation.IsDNS1123Subdomain(c.Fqdn)) > 0 {
		return fmt.Errorf("cloud IP %s: fqdn %q is no fully qualified domain name", c.ID, c.Fqdn)
	}
	return nil
}

// Get returns the load balancer with this ID; the API's 404, or a deleted
// load balancer, wraps ErrNotFound and the pipeline falls back to Find.
func (d *lbDriver) Get(ctx context.Context, id string) (*loadBalancer, error) {
	full, err := one(ctx, "load_balancers.get", func(ctx context.Context) (*brightbox.LoadBalancer, error) {
		return d.client.LoadBalancer(ctx, id)
	})
	switch {
	case isNotFound(err):
		return nil, fmt.Errorf("load balancer %s: %w (%w)", id, framework.ErrNotFound, err)
	case err != nil:
		return nil, fmt.Errorf("getting load balancer %s: %w", id, err)
	case full == nil || full.ID != id:
		return nil, fmt.Errorf("getting load balancer %s: malformed response: no such load balancer in the answer", id)
	}
	lb := compact(full)
	if err := checkLB(lb); err != nil {
		return nil, fmt.Errorf("getting load balancer %s: %w", id, err)
	}
	switch {
	case !alive(lb):
		return nil, framework.NotFound("load balancer %s is %s", id, lb.Status)
	}
	return lb, nil
}

// Owns implements framework.LoadBalancerOwnership: as the existing CCM, a
// Service owns the load balancer with its name (not a deleted one).
func (d *lbDriver) Owns(lb *loadBalancer, req *lbRequest) bool {
	return lb.Name == req.Name && alive(lb)
}

// Find returns the load balancer named as the Service's. A list of load
// balancers embeds each one's nodes as whole servers (1,000 load
// balancers over 5,000 nodes: 5 million servers in one answer), so the
// driver implements no framework.LoadBalancerLister and Find lists no
// load balancers but in one rare case. It finds the load balancer
// through its cloud IP instead: the list of cloud IPs is small and shows
// what each is mapped to, and a load balancer's cloud IP is named as it
// (or is the one cloudip-allocations names). Each load balancer such a
// cloud IP is mapped to is read by ID and kept if it has the name.
//
// The rare case: Create allocates (or picks) the cloud IP before it
// creates the load balancer, and the next Update maps it. A CCM stopped
// in between, or a create the API refused, leaves that cloud IP
// unmapped, and maybe a load balancer that shows it nowhere. Only then,
// to make no second load balancer, are the load balancers listed
// (findListed): a bounded case, once per such Service until it is
// mapped. A load balancer with no cloud IP at all (its cloud IP deleted
// by hand) is found by its ID annotation, not by Find.
func (d *lbDriver) Find(ctx context.Context, req *lbRequest) (*loadBalancer, error) {
	cips, err := d.client.CloudIPs(cloudapi.WithOperation(ctx, "cloud_ips.list"))
	if err != nil {
		return nil, fmt.Errorf("listing cloud IPs: %w", err)
	}
	want := req.Config.CloudIPAllocations
	unmapped := false
	read := map[string]bool{}
	for i := range cips {
		c := &cips[i]
		if c.Name != req.Name && (want == "" || c.ID != want) {
			continue
		}
		target := c.LoadBalancer
		switch {
		case c.Status == cloudipstatus.Unmapped:
			unmapped = true
			continue
		case target == nil || target.ID == "" || read[target.ID]:
			continue // mapped to something else
		case target.Name != "" && target.Name != req.Name, target.Status == loadbalancerstatus.Deleted:
			continue // the embedded load balancer says enough
		}
		read[target.ID] = true
		lb, err := d.Get(ctx, target.ID)
		switch {
		case framework.IsNotFound(err):
			continue
		case err != nil:
			return nil, err
		case d.Owns(lb, req):
			return lb, nil
		}
	}
	if !unmapped {
		d.rememberCloudIPs(cips, req)
		return nil, framework.NotFound("no load balancer named %q: no cloud IP of its is mapped to one", req.Name)
	}
	klog.FromContext(ctx).V(2).Info("The Service's cloud IP is not mapped: looking for its load balancer in the list of load balancers", "service", klog.KObj(req.Service), "name", req.Name)
	lb, err := d.findListed(ctx, req)
	if framework.IsNotFound(err) {
		d.rememberCloudIPs(cips, req)
	}
	return lb, err
}

// findListed returns the load balancer named as the Service's from a list
// of every load balancer: Find's rare case. Each is kept compact as it
// is decoded, the list's servers dropped at once.
func (d *lbDriver) findListed(ctx context.Context, req *lbRequest) (*loadBalancer, error) {
	lbs, err := d.client.LoadBalancers(cloudapi.WithOperation(ctx, "load_balancers.list"))
	if err != nil {
		return nil, fmt.Errorf("listing load balancers: %w", err)
	}
	var found *loadBalancer
	for i := range lbs {
		lb := compact(&lbs[i])
		lbs[i] = brightbox.LoadBalancer{} // the list's servers can go now
		if err := checkLB(lb); err != nil {
			return nil, fmt.Errorf("listing load balancers: %w", err)
		}
		if found == nil && d.Owns(lb, req) {
			found = lb
		}
	}
	if found == nil {
		return nil, framework.NotFound("no load balancer named %q", req.Name)
	}
	return found, nil
}

// Create provisions the load balancer with its whole spec in one POST,
// after finding or allocating its cloud IP (whose names its certificate
// needs); the API answers "creating", and the pipeline follows it until it
// is active. Update then maps the cloud IP and sets up the server group
// and the firewall. A lost answer is recovered by Find (by name) on the
// next sync.
func (d *lbDriver) Create(ctx context.Context, req *lbRequest) (*loadBalancer, error) {
	cip, err := d.cloudIPForCreate(ctx, req)
	if err != nil {
		return nil, err
	}
	want, err := d.desiredOptions(ctx, req, cip)
	if err != nil {
		return nil, err
	}
	create := func() (*brightbox.LoadBalancer, error) {
		return d.client.CreateLoadBalancer(cloudapi.WithOperation(ctx, "load_balancers.create"), *want)
	}
	created, err := create()
	if err != nil && refusedAsInvalid(err) && d.leaveOutGone(ctx, lbNodeIDs(want.Nodes)) {
		want.Nodes = lbNodes(d.gone.without(lbNodeIDs(want.Nodes)))
		created, err = create()
	}
	if err != nil {
		return nil, err
	}
	if created == nil {
		return nil, errors.New("malformed response: no load balancer")
	}
	lb := compact(created)
	if err := checkLB(lb); err != nil {
		return nil, err
	}
	// The first Update maps it, without listing the cloud IPs again.
	d.cloudIPs.Store(lb.ID, cloudIPChoice{id: cip.ID})
	return lb, nil
}

// desiredOptions is the full spec of req's load balancer, its nodes less
// the servers known to be gone (lb_gone.go).
func (d *lbDriver) desiredOptions(ctx context.Context, req *lbRequest, cip *brightbox.CloudIP) (*brightbox.LoadBalancerOptions, error) {
	want, err := desiredOptions(ctx, req, cip, d.codec)
	if err != nil {
		return nil, err
	}
	want.Nodes = lbNodes(d.gone.without(lbNodeIDs(want.Nodes)))
	return want, nil
}

// Update brings the cloud IP, the shared server group and firewall policy
// (lb_shared.go) and the load balancer itself up to date, writing only
// what differs: a sync with nothing changed writes nothing, and reads the
// shared group and policy at most once per --load-balancer-cache-ttl for
// all the load balancers. A cloud IP still being mapped and certificate
// domains not yet valid are for Inspect to report (Pending): the cloud is
// doing its job.
func (d *lbDriver) Update(ctx context.Context, lb *loadBalancer, req *lbRequest) (bool, error) {
	cip, cipWrote, err := d.ensureCloudIP(ctx, lb, req)
	if err != nil {
		return false, err
	}
	fwWrote, err := d.ensureFirewall(ctx, req)
	if err != nil {
		return cipWrote, err
	}
	want, err := d.desiredOptions(ctx, req, cip)
	if err != nil {
		return cipWrote || fwWrote, err
	}
	changed := cipWrote || fwWrote
	if changes := lbChanges(lb, want); len(changes) > 0 {
		klog.FromContext(ctx).V(2).Info("Updating load balancer", "service", klog.KObj(req.Service), "loadBalancerID", lb.ID, "changes", changes)
		want.ID = lb.ID
		update := func() (*brightbox.LoadBalancer, error) {
			return d.client.UpdateLoadBalancer(cloudapi.WithOperation(ctx, "load_balancers.update"), *want)
		}
		updated, err := update()
		if adding, _ := membership(lb.NodeIDs, lbNodeIDs(want.Nodes)); err != nil && refusedAsInvalid(err) && d.leaveOutGone(ctx, adding) {
			want.Nodes = lbNodes(d.gone.without(lbNodeIDs(want.Nodes)))
			if len(lbChanges(lb, want)) == 0 {
				return changed, nil
			}
			updated, err = update()
		}
		if err != nil {
			return changed, err
		}
		if updated == nil || updated.ID != lb.ID {
			return true, errors.New("malformed response: no load balancer")
		}
		fresh := compact(updated)
		if err := checkLB(fresh); err != nil {
			return true, err
		}
		*lb = *fresh
		changed, cipWrote = true, cipWrote && !hasCloudIP(lb, cip.ID)
	}
	if cipWrote {
		// The mapping changed the load balancer's cloud IPs: read them.
		fresh, err := d.Get(ctx, lb.ID)
		if err != nil {
			return true, err
		}
		*lb = *fresh
	}
	if hasCloudIP(lb, cip.ID) {
		d.cloudIPs.Delete(lb.ID)
	} else {
		d.cloudIPs.Store(lb.ID, cloudIPChoice{id: cip.ID, mapping: true})
	}
	return changed, nil
}

// Delete removes the load balancer and what the driver made for it: the
// cloud IPs named as it (one from cloudip-allocations is only unmapped),
// its rule in the shared firewall policy (the last load balancer's takes
// the shared group and policy with it), and a firewall policy and server
// group of its own (the existing CCM's). Everything else mapped to it
// is unmapped, never deleted. The API deletes a load balancer in the
// background: Delete answers "provisioning" until it is gone, and a
// load balancer already being deleted costs one read per call.
func (d *lbDriver) Delete(ctx context.Context, lb *loadBalancer, req *lbRequest) error {
	d.cloudIPs.Delete(lb.ID)
	d.seen.Delete(req.Service.UID)
	if lb.Status == loadbalancerstatus.Deleting {
		_, err := d.Get(ctx, lb.ID)
		switch {
		case framework.IsNotFound(err):
			// Gone. What a delete cut short left (a cloud IP not yet
			// released, unmapped or still mapped to it) goes with it.
			if lerr := d.DeleteLeftovers(ctx, req); lerr != nil {
				return lerr
			}
			return err
		case err != nil:
			return err
		}
		return framework.Provisioning("load balancer %s is being deleted", lb.ID)
	}
	if err := d.releaseCloudIPs(ctx, lb, req); err != nil {
		return err
	}
	if err := d.deleteFirewall(ctx, req); err != nil {
		return err
	}
	deleted, err := one(ctx, "load_balancers.delete", func(ctx context.Context) (*brightbox.LoadBalancer, error) {
		return d.client.DestroyLoadBalancer(ctx, lb.ID)
	})
	switch {
	case isNotFound(err):
		return fmt.Errorf("load balancer %s: %w", lb.ID, framework.ErrNotFound)
	case err != nil:
		return err
	case deleted != nil && deleted.Status == loadbalancerstatus.Deleted:
		return nil
	}
	return framework.Provisioning("load balancer %s is being deleted", lb.ID)
}

// DeleteLeftovers implements framework.LoadBalancerLeftovers: for a Service
// whose load balancer is not there, it releases the cloud IP the CCM
// allocated for it (leftoverCloudIP: a create that failed after it, a CCM
// killed in between, or a load balancer deleted with it still mapped),
// and takes it out of the firewall as Delete does.
func (d *lbDriver) DeleteLeftovers(ctx context.Context, req *lbRequest) error {
	all, err := d.cloudIPsOf(ctx, req)
	if err != nil {
		return err
	}
	for i := range all {
		c := &all[i]
		mapped, ok := leftoverCloudIP(c, req)
		if !ok {
			continue
		}
		if err := d.releaseCloudIP(ctx, c, req, mapped); err != nil {
			return err
		}
	}
	return d.deleteFirewall(ctx, req)
}

// Inspect tells the pipeline what state the load balancer is in: its cloud
// IPs' addresses, and ipMode Proxy when its listeners speak PROXY protocol.
func (d *lbDriver) Inspect(lb *loadBalancer) framework.LoadBalancerState {
	s := framework.LoadBalancerState{ID: lb.ID, Provisioning: lb.Status == loadbalancerstatus.Creating || lb.Status == loadbalancerstatus.Deleting}
	switch lb.Status {
	case loadbalancerstatus.Failing, loadbalancerstatus.Failed:
		s.Failed = "status " + lb.Status.String()
	}
	for _, l := range lb.Listeners {
		s.ProxyProtocol = s.ProxyProtocol || l.ProxyProtocol != 0
	}
	for _, c := range lb.CloudIPs {
		for _, ip := range []string{c.PublicIPv4, c.PublicIPv6} {
			if ip == "" {
				continue
			}
			s.IPs = append(s.IPs, ip)
			if c.Fqdn != "" {
				if s.DNSNames == nil {
					s.DNSNames = map[string]string{}
				}
				s.DNSNames[ip] = c.Fqdn
			}
		}
	}
	if c, ok := d.cloudIPs.Load(lb.ID); ok && c.(cloudIPChoice).mapping && !hasCloudIP(lb, c.(cloudIPChoice).id) {
		s.Pending = fmt.Sprintf("is waiting for cloud IP %s to be mapped", c.(cloudIPChoice).id)
	}
	pending, invalid := acmeStatus(lb)
	switch {
	case invalid != "" && s.Failed == "":
		s.Failed = fmt.Sprintf("certificate domains failed validation: %s; point them at %s", invalid, joinComma(s.IPs))
	case pending != "" && s.Pending == "":
		s.Pending = fmt.Sprintf("is waiting for its certificate: %s; the domains must point at %s", pending, joinComma(s.IPs))
	}
	return s
}

// acmeStatus describes the certificate domains Let's Encrypt has not
// validated: those still pending (the API retries them), and those that
// failed (the user must point them at the load balancer), each with its
// status and the API's last message.
func acmeStatus(lb *loadBalancer) (pending, invalid string) {
	if lb.Acme == nil {
		return "", ""
	}
	var p, bad []string
	for _, dom := range lb.Acme.Domains {
		if dom.Status == acmeValid {
			continue
		}
		msg := fmt.Sprintf("%s is %s", dom.Identifier, dom.Status)
		if dom.LastMessage != "" {
			msg += " (" + dom.LastMessage + ")"
		}
		if dom.Status == acmeInvalid {
			bad = append(bad, msg)
		} else {
			p = append(p, msg)
		}
	}
	return joinComma(p), joinComma(bad)
}

// Statuses of a certificate domain: Let's Encrypt validated it, or
// refused it (anything else is still in progress).
const (
	acmeValid   = "valid"
	acmeInvalid = "invalid"
)
