package openstack

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	corev1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
)

// Event reasons of the OpenStack load-balancer driver (the pipeline has its
// own, see framework.EventLoadBalancerFailed).
const (
	eventRecreating    = "RecreatingLoadBalancer"
	eventNoFloatingNet = "NoFloatingNetwork"
)

type lbRequest = framework.LoadBalancerRequest[LoadBalancerConfig]

// lbDriver is the Octavia half of the load-balancer pipeline. Its LB
// object is octaviaLB: the load balancer with its listeners, pools,
// members, health monitors and floating IP. It does not implement
// framework.LoadBalancerLister: Octavia cannot list members project-wide,
// so a shared list could not answer what Update needs, and a sync of a
// load balancer still being provisioned already costs one GET.
type lbDriver struct {
	oct       *octaviaAPI
	net       *fipAPI
	env       *framework.Env
	cfg       *LoadBalancerSection
	classes   LoadBalancerClasses
	features  octaviaFeatures
	instances *instances
}

var (
	_ framework.LoadBalancerDriver[LoadBalancerConfig, octaviaLB] = (*lbDriver)(nil)
	_ framework.LoadBalancerValidator[LoadBalancerConfig]         = (*lbDriver)(nil)
)

// Validate implements framework.LoadBalancerValidator: a Service Octavia
// cannot serve as asked gets a Warning Event and no call.
func (d *lbDriver) Validate(req *lbRequest) error {
	cfg, err := d.settings(req)
	if err != nil {
		return err
	}
	svc := req.Service
	var errs []error
	if _, err := desiredListeners(svc, treeInput{cfg: cfg, features: d.features, ipv6: preferIPv6(svc)}); err != nil {
		errs = append(errs, err)
	}
	cidrs, err := allowedCIDRs(svc, preferIPv6(svc))
	switch {
	case err != nil:
		errs = append(errs, err)
	case cidrs != nil && !d.features.vipACL:
		errs = append(errs, errors.New("spec.loadBalancerSourceRanges: this Octavia (API older than 2.12) cannot restrict sources (allowed_cidrs)"))
	}
	if d.features.provider == "ovn" {
		for _, opt := range []struct {
			key string
			set bool
		}{{"x-forwarded-for", cfg.XForwardedFor}, {"proxy-protocol", cfg.ProxyProtocol != "false"}, {"default-tls-container-ref", cfg.DefaultTLSContainerRef != ""}} {
			if opt.set {
				errs = append(errs, fmt.Errorf("annotation %q: the ovn provider forwards TCP, UDP and SCTP only", annotationKey(opt.key)))
			}
		}
		if cfg.LBMethod != "SOURCE_IP_PORT" {
			errs = append(errs, fmt.Errorf("annotation %q: the ovn provider supports SOURCE_IP_PORT only", annotationKey("lb-method")))
		}
	}
	if isAmphora(d.features.provider) && cfg.LBMethod == "SOURCE_IP_PORT" {
		errs = append(errs, fmt.Errorf("annotation %q (or [LoadBalancer] lb-method): the amphora provider does not support SOURCE_IP_PORT", annotationKey("lb-method")))
	}
	if cfg.FlavorID != "" && !d.features.flavors {
		errs = append(errs, fmt.Errorf("annotation %q (or [LoadBalancer] flavor-id): this Octavia (API older than 2.6) has no flavors", annotationKey("flavor-id")))
	}
	if cfg.AvailabilityZone != "" && !d.features.availabilityZones {
		errs = append(errs, fmt.Errorf("annotation %q (or [LoadBalancer] availability-zone): this Octavia (API older than 2.14) has no availability zones", annotationKey("availability-zone")))
	}
	if ip := svc.Spec.LoadBalancerIP; ip != "" {
		if _, err := netip.ParseAddr(ip); err != nil {
			errs = append(errs, fmt.Errorf("spec.loadBalancerIP: %q is not an IP address", ip))
		}
	}
	return errors.Join(errs...)
}

func isAmphora(provider string) bool {
	return provider == "" || provider == "amphora" || provider == "amphorav2" || provider == "octavia"
}

// settings is the Service's config with its [LoadBalancerClass] applied,
// and SOURCE_IP_PORT for the ovn provider unless lb-method is annotated.
func (d *lbDriver) settings(req *lbRequest) (*LoadBalancerConfig, error) {
	cfg, err := withClass(req.Config, d.classes, req.Service.Annotations)
	if err != nil {
		return nil, err
	}
	if _, set := req.Service.Annotations[annotationKey("lb-method")]; !set && d.features.provider == "ovn" {
		cfg.LBMethod = "SOURCE_IP_PORT"
	}
	return cfg, nil
}

// Get returns the load balancer with this ID and, when it is ACTIVE, its
// children and floating IP. Octavia's 404 wraps ErrNotFound; the pipeline
// then looks the load balancer up by name.
func (d *lbDriver) Get(ctx context.Context, id string) (*octaviaLB, error) {
	lb, err := d.oct.getLB(ctx, id)
	if err != nil {
		return nil, err
	}
	if lb.ProvisioningStatus == statusDeleted {
		return nil, framework.NotFound("load balancer %s is deleted", id)
	}
	return d.read(ctx, lb)
}

// Find returns the load balancer with OCCM's name for the Service
// (kube_service_<cluster>_<namespace>_<name>), ignoring ones being deleted.
func (d *lbDriver) Find(ctx context.Context, req *lbRequest) (*octaviaLB, error) {
	lbs, err := d.oct.listLBs(ctx, req.Name)
	if err != nil {
		return nil, err
	}
	var found []*loadbalancers.LoadBalancer
	for i := range lbs {
		if lbs[i].Name == req.Name && lbs[i].ProvisioningStatus != statusPendingDelete && lbs[i].ProvisioningStatus != statusDeleted {
			found = append(found, &lbs[i])
		}
	}
	switch len(found) {
	case 0:
		return nil, framework.NotFound("no load balancer named %q", req.Name)
	case 1:
		return d.read(ctx, found[0])
	}
	return nil, fmt.Errorf("load balancers %s and %s are both named %q; delete one, or name the one to use in the %s annotation",
		found[0].ID, found[1].ID, req.Name, AnnotationLoadBalancerID)
}

// read completes a load balancer: children and floating IP when ACTIVE,
// the floating IP when in ERROR (recovery keeps it), nothing while
// PENDING_* (the pipeline only waits then).
func (d *lbDriver) read(ctx context.Context, lb *loadbalancers.LoadBalancer) (*octaviaLB, error) {
	out := &octaviaLB{LB: *lb}
	switch lb.ProvisioningStatus {
	case statusActive:
		if err := d.oct.loadChildren(ctx, out); err != nil {
			return nil, err
		}
		fallthrough
	case statusError:
		if err := d.loadFIP(ctx, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (d *lbDriver) loadFIP(ctx context.Context, lb *octaviaLB) error {
	if lb.LB.VipPortID == "" || isIPv6Addr(lb.LB.VipAddress) {
		lb.fipLoaded = true
		return nil
	}
	fip, err := d.net.fipByPort(ctx, lb.LB.VipPortID)
	if err != nil {
		return err
	}
	lb.FIP, lb.fipLoaded = fip, true
	return nil
}

// Create sends the whole tree in one POST (Octavia's fully populated
// create), or the load balancer alone with [LoadBalancer]
// provider-requires-serial-api-calls. It answers PENDING_CREATE; the
// pipeline requeues until ACTIVE, and Update then adds the floating IP. A
// lost answer is recovered by Find (by name) on the next sync.
func (d *lbDriver) Create(ctx context.Context, req *lbRequest) (*octaviaLB, error) {
	cfg, err := d.settings(req)
	if err != nil {
		return nil, err
	}
	svc := req.Service
	nodes, err := d.memberNodes(ctx, req, cfg)
	if err != nil {
		return nil, err
	}
	opts := loadbalancers.CreateOpts{
		Name: req.Name, Description: fmt.Sprintf("Kubernetes external service %s/%s from cluster %s", svc.Namespace, svc.Name, req.ClusterName),
		Provider: d.cfg.LBProvider, VipPortID: cfg.PortID,
	}
	if opts.VipPortID == "" {
		opts.VipSubnetID, opts.VipNetworkID = cfg.SubnetID, cfg.NetworkID
		if opts.VipSubnetID == "" && opts.VipNetworkID == "" {
			if opts.VipSubnetID, err = d.nodeSubnet(ctx, nodes, preferIPv6(svc)); err != nil {
				return nil, err
			}
		}
		if d.internal(cfg) || preferIPv6(svc) {
			opts.VipAddress = svc.Spec.LoadBalancerIP
		}
	}
	if d.features.tags {
		opts.Tags = []string{req.Name}
	}
	if d.features.flavors {
		opts.FlavorID = cfg.FlavorID
	}
	if d.features.availabilityZones {
		opts.AvailabilityZone = cfg.AvailabilityZone
	}
	if !d.cfg.ProviderRequiresSerialAPICalls {
		want, err := desiredListeners(svc, treeInput{
			cfg: cfg, lbName: req.Name, features: d.features, ipv6: preferIPv6(svc), nodes: nodes,
			memberSubnetID: firstOf(cfg.MemberSubnetID, opts.VipSubnetID), createMonitor: d.cfg.CreateMonitor,
		})
		if err != nil {
			return nil, err
		}
		for i := range want {
			opts.Listeners = append(opts.Listeners, listenerCreateOpts(&want[i], true))
		}
	}
	lb, err := d.oct.create(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &octaviaLB{LB: *lb}, nil
}

// Update brings an ACTIVE load balancer in line with the Service: its
// floating IP (Neutron, which leaves the load balancer ACTIVE), then at
// most one Octavia write, the first of planChanges. Octavia makes the load
// balancer PENDING_UPDATE after each write and refuses the next one (409)
// until it is ACTIVE again, so Update does not wait: it leaves lb
// PENDING_UPDATE, the pipeline requeues, and the next sync reads the
// result and makes the next write. A load balancer in ERROR is recreated.
func (d *lbDriver) Update(ctx context.Context, lb *octaviaLB, req *lbRequest) (bool, error) {
	cfg, err := d.settings(req)
	if err != nil {
		return false, err
	}
	own := d.ownership(lb, req)
	if own == lbForeign {
		return false, fmt.Errorf("load balancer %s (%s) belongs to another Service; sharing load balancers is not supported: remove the %s annotation",
			lb.LB.ID, lb.LB.Name, AnnotationLoadBalancerID)
	}
	switch {
	case lb.LB.ProvisioningStatus == statusError:
		return d.recover(ctx, lb, req, own)
	case isPending(lb.LB.ProvisioningStatus):
		return false, framework.Provisioning("load balancer %s is %s", lb.LB.ID, lb.LB.ProvisioningStatus)
	case !lb.loaded:
		if err := d.oct.loadChildren(ctx, lb); err != nil {
			return false, err
		}
		if err := d.loadFIP(ctx, lb); err != nil {
			return false, err
		}
	}
	changed, err := d.reconcileFIP(ctx, lb, cfg, req, own)
	if err != nil {
		return changed, err
	}
	nodes, err := d.memberNodes(ctx, req, cfg)
	if err != nil {
		return changed, err
	}
	want, err := desiredListeners(req.Service, treeInput{
		cfg: cfg, lbName: req.Name, features: d.features, ipv6: isIPv6Addr(lb.LB.VipAddress), nodes: nodes,
		memberSubnetID: firstOf(cfg.MemberSubnetID, lb.LB.VipSubnetID), createMonitor: d.cfg.CreateMonitor,
	})
	if err != nil {
		return changed, err
	}
	plan := planChanges(lb, want, d.features, d.cfg.ProviderRequiresSerialAPICalls)
	if len(plan) == 0 {
		return changed, nil
	}
	klog.FromContext(ctx).Info("Updating load balancer", "service", klog.KObj(req.Service), "loadBalancerID", lb.LB.ID,
		"change", plan[0].String(), "remaining", len(plan)-1)
	klog.FromContext(ctx).V(4).Info("Load balancer plan", "loadBalancerID", lb.LB.ID, "plan", describePlan(plan))
	if err := d.oct.apply(ctx, lb.LB.ID, plan[0]); err != nil {
		return changed, err
	}
	lb.LB.ProvisioningStatus = statusPendingUpdate
	return true, nil
}

// recover replaces a load balancer in ERROR, which Octavia only lets one
// delete: its floating IP is detached (kept), the load balancer deleted
// with its children, and the next syncs create it again and re-attach the
// floating IP (found by its description). Octavia's failover would keep
// the VIP, but it is admin-only under the default policy and not offered
// by every provider. A load balancer the CCM did not create is left alone.
func (d *lbDriver) recover(ctx context.Context, lb *octaviaLB, req *lbRequest, own lbOwnership) (bool, error) {
	if own != lbOwned {
		return false, fmt.Errorf("load balancer %s is in ERROR; it is not the CCM's (name %q), so it is not recreated: repair or delete it in Octavia", lb.LB.ID, lb.LB.Name)
	}
	klog.FromContext(ctx).Info("Recreating load balancer in ERROR", "service", klog.KObj(req.Service), "loadBalancerID", lb.LB.ID)
	d.event(req.Service, corev1.EventTypeWarning, eventRecreating, "Load balancer %s is in ERROR: deleting it to create it again (the floating IP is kept)", lb.LB.ID)
	if lb.FIP != nil {
		if err := d.net.disassociate(ctx, lb.FIP); err != nil {
			return false, err
		}
		lb.FIP = nil
	}
	if err := d.oct.deleteLB(ctx, lb.LB.ID, true); err != nil && !framework.IsNotFound(err) {
		return true, err
	}
	lb.LB.ProvisioningStatus = statusPendingDelete
	return true, nil
}

// reconcileFIP gives an external load balancer its floating IP, and takes
// it from one that became internal (released when releasable, else
// detached).
func (d *lbDriver) reconcileFIP(ctx context.Context, lb *octaviaLB, cfg *LoadBalancerConfig, req *lbRequest, own lbOwnership) (bool, error) {
	if !lb.fipLoaded || lb.LB.VipPortID == "" || isIPv6Addr(lb.LB.VipAddress) {
		return false, nil
	}
	svc := req.Service
	if d.internal(cfg) {
		if lb.FIP == nil || own != lbOwned {
			return false, nil
		}
		var err error
		if d.releasable(lb.FIP, req, cfg) {
			err = d.net.release(ctx, lb.FIP)
		} else {
			err = d.net.disassociate(ctx, lb.FIP)
		}
		if err != nil {
			return false, err
		}
		lb.FIP = nil
		return true, nil
	}
	if lb.FIP != nil {
		return false, nil
	}
	fip, err := d.net.ensure(ctx, fipRequest{
		portID: lb.LB.VipPortID, address: svc.Spec.LoadBalancerIP, networkID: cfg.FloatingNetworkID,
		subnetID: cfg.FloatingSubnetID, subnetName: cfg.FloatingSubnet, subnetTags: cfg.FloatingSubnetTags,
		description: fipDescription(req.ClusterName, svc),
	})
	if err != nil {
		return false, err
	}
	if fip == nil {
		d.event(svc, corev1.EventTypeWarning, eventNoFloatingNet, "No external network for a floating IP: the load balancer is internal (set [LoadBalancer] floating-network-id or the %s annotation)", annotationKey("floating-network-id"))
		return false, nil
	}
	lb.FIP = fip
	return true, nil
}

// Delete removes the load balancer the CCM created (with cascade unless
// [LoadBalancer] cascade-delete is false) after releasing the floating IP
// it made (see releasable). Of an adopted load balancer it removes only
// the listeners and pools. It does not wait:
// while Octavia works it returns ErrProvisioning and the pipeline asks
// again; a load balancer found gone is ErrNotFound, which is success.
func (d *lbDriver) Delete(ctx context.Context, lb *octaviaLB, req *lbRequest) error {
	id, status := lb.LB.ID, lb.LB.ProvisioningStatus
	switch {
	case status == statusPendingDelete:
		if _, err := d.oct.getLB(ctx, id); err != nil {
			return err // gone: ErrNotFound
		}
		return framework.Provisioning("load balancer %s is being deleted", id)
	case isPending(status):
		return framework.Provisioning("load balancer %s is %s", id, status)
	}
	log := klog.FromContext(ctx).WithValues("service", klog.KObj(req.Service), "loadBalancerID", id)
	own := d.ownership(lb, req)
	if own == lbForeign {
		log.Info("Not deleting another Service's load balancer", "name", lb.LB.Name)
		return nil
	}
	// A floating IP the CCM did not make stays; Neutron detaches it when
	// the VIP port goes.
	if lb.FIP != nil && d.releasable(lb.FIP, req, req.Config) {
		if err := d.net.release(ctx, lb.FIP); err != nil {
			return err
		}
		lb.FIP = nil
	}
	if own == lbAdopted {
		return d.deleteChildren(ctx, lb)
	}
	cascade := d.cfg.CascadeDelete || !lb.loaded
	if !cascade && (len(lb.Listeners) > 0 || len(lb.Pools) > 0) {
		return d.deleteChildren(ctx, lb)
	}
	if err := d.oct.deleteLB(ctx, id, cascade); err != nil {
		return err
	}
	log.Info("Deleting load balancer", "cascade", cascade)
	return framework.Provisioning("load balancer %s is being deleted", id)
}

// deleteChildren deletes one pool, else one listener, of lb per call;
// nil once none is left.
func (d *lbDriver) deleteChildren(ctx context.Context, lb *octaviaLB) error {
	if lb.LB.ProvisioningStatus != statusActive || !lb.loaded {
		return fmt.Errorf("load balancer %s is %s; its listeners cannot be removed", lb.LB.ID, lb.LB.ProvisioningStatus)
	}
	var a action
	switch {
	case len(lb.Pools) > 0:
		a = action{kind: actDeletePool, poolID: lb.Pools[0].ID}
	case len(lb.Listeners) > 0:
		a = action{kind: actDeleteListener, listenerID: lb.Listeners[0].ID}
	default:
		return nil
	}
	if err := d.oct.apply(ctx, lb.LB.ID, a); err != nil {
		return err
	}
	return framework.Provisioning("load balancer %s: %s", lb.LB.ID, a)
}

// Inspect tells the pipeline what state the load balancer is in: its
// address is the floating IP, else the VIP.
func (d *lbDriver) Inspect(lb *octaviaLB) framework.LoadBalancerState {
	s := framework.LoadBalancerState{ID: lb.LB.ID, Provisioning: isPending(lb.LB.ProvisioningStatus)}
	if lb.LB.ProvisioningStatus == statusError {
		s.Failed = "provisioning status ERROR, operating status " + lb.LB.OperatingStatus
	}
	ip := lb.LB.VipAddress
	if lb.FIP != nil && lb.FIP.FloatingIP != "" {
		ip = lb.FIP.FloatingIP
	}
	if ip != "" {
		s.IPs = []string{ip}
	}
	for _, p := range lb.Pools {
		if p.Protocol == "PROXY" || p.Protocol == "PROXYV2" {
			s.ProxyProtocol = true
		}
	}
	if s.ProxyProtocol && d.cfg.EnableIngressHostname && ip != "" {
		s.Hostname = ip + "." + d.cfg.IngressHostnameSuffix
	}
	return s
}

// releasable reports whether fip goes with its load balancer: the CCM (or
// OCCM) made it for this Service, as its description says, and neither
// keep-floatingip nor spec.loadBalancerIP keeps it.
func (d *lbDriver) releasable(fip *floatingips.FloatingIP, req *lbRequest, cfg *LoadBalancerConfig) bool {
	return fip.Description == fipDescription(req.ClusterName, req.Service) && !cfg.KeepFloatingIP && req.Service.Spec.LoadBalancerIP == ""
}

// lbOwnership is how a Service relates to a load balancer.
type lbOwnership int

const (
	// lbOwned: the CCM (or OCCM) created it for this Service.
	lbOwned lbOwnership = iota
	// lbAdopted: made outside, adopted through the ID annotation.
	lbAdopted
	// lbForeign: created for another Service.
	lbForeign
)

// ownership tells from the name: OCCM's name for the Service (also with an
// older cluster name, or OCCM's legacy name) is owned; OCCM's name of
// another Service is foreign; any other name was adopted.
func (d *lbDriver) ownership(lb *octaviaLB, req *lbRequest) lbOwnership {
	name, svc := lb.LB.Name, req.Service
	switch {
	case name == req.Name, name == cloudprovider.DefaultLoadBalancerName(svc),
		strings.HasPrefix(name, lbNamePrefix) && strings.HasSuffix(name, "_"+svc.Namespace+"_"+svc.Name):
		return lbOwned
	case strings.HasPrefix(name, lbNamePrefix):
		return lbForeign
	}
	return lbAdopted
}

// internal: no floating IP, by annotation or [LoadBalancer] internal-lb
// (which, as in OCCM, the annotation cannot turn off).
func (d *lbDriver) internal(cfg *LoadBalancerConfig) bool { return cfg.Internal || d.cfg.InternalLB }

func (d *lbDriver) event(svc *corev1.Service, eventType, reason, format string, args ...any) {
	if d.env.Recorder != nil {
		d.env.Recorder.Eventf(svc, eventType, reason, format, args...)
	}
}
