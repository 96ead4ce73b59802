package brightbox

import (
	"context"
	"fmt"
	"slices"
	"strings"

	brightbox "github.com/brightbox/gobrightbox/v2"
	"github.com/brightbox/gobrightbox/v2/enums/cloudipstatus"
	"github.com/brightbox/gobrightbox/v2/enums/loadbalancerstatus"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework/cloudapi"
)

// A load balancer's address is a cloud IP mapped to it: the one
// cloudip-allocations names, else one the CCM allocates, named as the load
// balancer (as the existing CCM names it). A cloud IP mapped to the load
// balancer counts as its own, as in the existing CCM, whatever its name.

// ensureCloudIP makes the Service's cloud IP the one mapped to lb, and
// unmaps any other (deleting those named as the load balancer, which the
// CCM allocated). In the usual case, lb already holding just that cloud
// IP, it makes no call. It reports whether it wrote.
func (d *lbDriver) ensureCloudIP(ctx context.Context, lb *loadBalancer, req *lbRequest) (*brightbox.CloudIP, bool, error) {
	if cip := mappedCloudIP(lb, req); cip != nil && len(lb.CloudIPs) == 1 {
		return cip, false, nil
	}
	cip, wrote, err := d.chosenCloudIP(ctx, lb, req)
	if err != nil {
		return nil, false, err
	}
	if !mappedTo(cip, lb.ID) {
		if cip.Status == cloudipstatus.Mapped {
			return nil, wrote, fmt.Errorf("cloud IP %s is mapped to something else; unmap it, or name another in annotation %q", cip.ID, annotationKey("cloudip-allocations"))
		}
		mapped, err := one(ctx, "cloud_ips.map", func(ctx context.Context) (*brightbox.CloudIP, error) {
			return d.client.MapCloudIP(ctx, cip.ID, brightbox.CloudIPAttachment{Destination: lb.ID})
		})
		if err != nil {
			return nil, wrote, fmt.Errorf("mapping cloud IP %s to load balancer %s: %w", cip.ID, lb.ID, err)
		}
		if mapped != nil && mapped.ID == cip.ID {
			cip = mapped
		}
		wrote = true
	}
	for _, old := range lb.CloudIPs {
		if old.ID == cip.ID {
			continue
		}
		if err := d.releaseCloudIP(ctx, &old, req, true); err != nil {
			return nil, true, err
		}
		wrote = true
	}
	return cip, wrote, nil
}

// mappedCloudIP is the Service's cloud IP among those mapped to lb, nil if
// none is.
func mappedCloudIP(lb *loadBalancer, req *lbRequest) *brightbox.CloudIP {
	want := req.Config.CloudIPAllocations
	for i, c := range lb.CloudIPs {
		if want != "" && c.ID == want || want == "" && (c.Name == req.Name || len(lb.CloudIPs) == 1) {
			return &lb.CloudIPs[i]
		}
	}
	return nil
}

func mappedTo(cip *brightbox.CloudIP, lbID string) bool {
	return lbID != "" && cip.LoadBalancer != nil && cip.LoadBalancer.ID == lbID
}

func hasCloudIP(lb *loadBalancer, id string) bool {
	for _, c := range lb.CloudIPs {
		if c.ID == id {
			return true
		}
	}
	return false
}

// cloudIPChoice is the cloud IP chosen for a load balancer that does not
// show it yet; mapping: Update asked the API to map it.
type cloudIPChoice struct {
	id      string
	mapping bool
}

// chosenCloudIP returns the cloud IP Create or an earlier sync chose for
// lb, read by ID (one small call, where finding it again lists every
// cloud IP); else, or when that one is gone or no longer the one
// cloudip-allocations names, findOrAllocateCloudIP's.
func (d *lbDriver) chosenCloudIP(ctx context.Context, lb *loadBalancer, req *lbRequest) (*brightbox.CloudIP, bool, error) {
	if v, ok := d.cloudIPs.Load(lb.ID); ok {
		id := v.(cloudIPChoice).id
		want := req.Config.CloudIPAllocations
		cip, err := one(ctx, "cloud_ips.get", func(ctx context.Context) (*brightbox.CloudIP, error) {
			return d.client.CloudIP(ctx, id)
		})
		switch {
		case err != nil && !isNotFound(err):
			return nil, false, fmt.Errorf("getting cloud IP %s: %w", id, err)
		case err == nil && cip != nil && cip.ID == id && (want == "" || want == id):
			return cip, false, nil
		}
		d.cloudIPs.Delete(lb.ID)
	}
	return d.findOrAllocateCloudIP(ctx, req, lb.ID)
}

// findOrAllocateCloudIP returns the Service's cloud IP: the one
// cloudip-allocations names (an error if it does not exist), else the one
// mapped to the load balancer lbID or named as it, else a new one named as
// it. It reports whether it allocated one.
func (d *lbDriver) findOrAllocateCloudIP(ctx context.Context, req *lbRequest, lbID string) (*brightbox.CloudIP, bool, error) {
	all, err := d.client.CloudIPs(cloudapi.WithOperation(ctx, "cloud_ips.list"))
	if err != nil {
		return nil, false, fmt.Errorf("listing cloud IPs: %w", err)
	}
	cip, err := pickCloudIP(all, req, lbID)
	if cip != nil || err != nil {
		return cip, false, err
	}
	return d.allocateCloudIP(ctx, req)
}

// pickCloudIP is findOrAllocateCloudIP's choice among all the cloud IPs:
// nil when a new one must be allocated.
func pickCloudIP(all []brightbox.CloudIP, req *lbRequest, lbID string) (*brightbox.CloudIP, error) {
	if want := req.Config.CloudIPAllocations; want != "" {
		for i := range all {
			if all[i].ID == want {
				return &all[i], nil
			}
		}
		return nil, fmt.Errorf("annotation %q: cloud IP %s does not exist", annotationKey("cloudip-allocations"), want)
	}
	var named *brightbox.CloudIP
	for i := range all {
		c := &all[i]
		if mappedTo(c, lbID) {
			return c, nil
		}
		if c.Name == req.Name && c.Status != cloudipstatus.Mapped && named == nil {
			named = c
		}
	}
	return named, nil
}

// allocateCloudIP allocates a cloud IP named as req's load balancer.
func (d *lbDriver) allocateCloudIP(ctx context.Context, req *lbRequest) (*brightbox.CloudIP, bool, error) {
	name := req.Name
	cip, err := d.client.CreateCloudIP(cloudapi.WithOperation(ctx, "cloud_ips.create"), brightbox.CloudIPOptions{Name: &name})
	if err != nil {
		return nil, false, fmt.Errorf("allocating a cloud IP: %w", err)
	}
	if cip == nil || cip.ID == "" {
		return nil, true, fmt.Errorf("allocating a cloud IP: malformed response: no cloud IP")
	}
	klog.FromContext(ctx).Info("Allocated a cloud IP", "service", klog.KObj(req.Service), "cloudIP", cip.ID)
	return cip, true, nil
}

// seenCloudIPs is what Find, not finding req's load balancer, saw of the
// cloud IPs: those named as it, or that cloudip-allocations names, the
// only ones Create (pickCloudIP) and DeleteLeftovers (leftoverCloudIP)
// look at. Either follows Find in the same sync (with the same req), and
// takes them instead of listing the cloud IPs again.
type seenCloudIPs struct {
	req  *lbRequest
	cips []brightbox.CloudIP
}

// rememberCloudIPs keeps, for the Create or DeleteLeftovers that follows
// Find in this sync, req's cloud IPs among all.
func (d *lbDriver) rememberCloudIPs(all []brightbox.CloudIP, req *lbRequest) {
	var mine []brightbox.CloudIP
	for _, c := range all {
		if c.Name == req.Name || c.ID == req.Config.CloudIPAllocations && c.ID != "" {
			mine = append(mine, c)
		}
	}
	d.seen.Store(req.Service.UID, seenCloudIPs{req: req, cips: mine})
}

// cloudIPsOf returns req's cloud IPs as Find saw them in this sync, or all
// the cloud IPs, listed now.
func (d *lbDriver) cloudIPsOf(ctx context.Context, req *lbRequest) ([]brightbox.CloudIP, error) {
	if v, ok := d.seen.LoadAndDelete(req.Service.UID); ok && v.(seenCloudIPs).req == req {
		return v.(seenCloudIPs).cips, nil
	}
	all, err := d.client.CloudIPs(cloudapi.WithOperation(ctx, "cloud_ips.list"))
	if err != nil {
		return nil, fmt.Errorf("listing cloud IPs: %w", err)
	}
	return all, nil
}

// cloudIPForCreate returns the cloud IP Create uses: as
// findOrAllocateCloudIP, from what Find saw in this sync when it can.
func (d *lbDriver) cloudIPForCreate(ctx context.Context, req *lbRequest) (*brightbox.CloudIP, error) {
	all, err := d.cloudIPsOf(ctx, req)
	if err != nil {
		return nil, err
	}
	cip, err := pickCloudIP(all, req, "")
	if cip != nil || err != nil {
		return cip, err
	}
	cip, _, err = d.allocateCloudIP(ctx, req)
	return cip, err
}

// releaseCloudIPs unmaps every cloud IP of lb and deletes those the CCM
// allocated for it (named as it, and not from cloudip-allocations),
// mapped or left unmapped by an earlier sync.
func (d *lbDriver) releaseCloudIPs(ctx context.Context, lb *loadBalancer, req *lbRequest) error {
	all, err := d.client.CloudIPs(cloudapi.WithOperation(ctx, "cloud_ips.list"))
	if err != nil {
		return fmt.Errorf("listing cloud IPs: %w", err)
	}
	for _, c := range lb.CloudIPs {
		// A list without a cloud IP the load balancer shows mapped would
		// have it left behind, mapped to nothing, when the load balancer
		// goes: the answer is stale or cut short, so try again.
		if !slices.ContainsFunc(all, func(l brightbox.CloudIP) bool { return l.ID == c.ID }) {
			return fmt.Errorf("listing cloud IPs: malformed response: no cloud IP %s, which load balancer %s shows mapped", c.ID, lb.ID)
		}
	}
	for i := range all {
		c := &all[i]
		mine := mappedTo(c, lb.ID) || hasCloudIP(lb, c.ID)
		if mine || c.Name == req.Name && c.Status == cloudipstatus.Unmapped {
			if err := d.releaseCloudIP(ctx, c, req, mine); err != nil {
				return err
			}
		}
	}
	return nil
}

// releaseCloudIP unmaps cip (when mapped says it is) and deletes it when
// the CCM allocated it. A cloud IP already gone is released.
func (d *lbDriver) releaseCloudIP(ctx context.Context, cip *brightbox.CloudIP, req *lbRequest, mapped bool) error {
	if mapped {
		_, err := one(ctx, "cloud_ips.unmap", func(ctx context.Context) (*brightbox.CloudIP, error) {
			return d.client.UnMapCloudIP(ctx, cip.ID)
		})
		switch {
		case isNotFound(err):
			return nil
		case err != nil:
			return fmt.Errorf("unmapping cloud IP %s: %w", cip.ID, err)
		}
	}
	if cip.Name != req.Name || cip.ID == req.Config.CloudIPAllocations {
		return nil
	}
	_, err := one(ctx, "cloud_ips.delete", func(ctx context.Context) (*brightbox.CloudIP, error) {
		return d.client.DestroyCloudIP(ctx, cip.ID)
	})
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("deleting cloud IP %s: %w", cip.ID, err)
	}
	return nil
}

// leftoverCloudIP reports whether c is a cloud IP the CCM allocated for
// req's Service that no load balancer uses, for a Service whose load
// balancer is not there, and whether it must be unmapped first. It is the
// Service's own by the name the CCM gives it (the load balancer's), and
// never the one cloudip-allocations names (the user's). It is unmapped
// (Create allocated it before a load balancer that never came), or still
// mapped to a load balancer the answer shows deleted or being deleted
// (a deletion cut short, the API keeping the mapping a while, an earlier
// CCM). One mapped to anything else (a live load balancer, a server, a
// server group, or nothing the answer shows) is left alone: someone uses
// it, or the answer cannot tell.
func leftoverCloudIP(c *brightbox.CloudIP, req *lbRequest) (mapped, ok bool) {
	if c.Name != req.Name || c.ID == req.Config.CloudIPAllocations {
		return false, false
	}
	switch c.Status {
	case cloudipstatus.Unmapped:
		return false, true
	case cloudipstatus.Mapped:
		gone := c.LoadBalancer != nil && c.LoadBalancer.ID != "" &&
			(c.LoadBalancer.Status == loadbalancerstatus.Deleted || c.LoadBalancer.Status == loadbalancerstatus.Deleting)
		return gone, gone
	}
	return false, false
}

func joinComma(s []string) string { return strings.Join(s, ", ") }
