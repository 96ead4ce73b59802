package openstack

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	corev1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"

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
// members' digest, health monitors and floating IP. It is a
// framework.LoadBalancerLister (lb_list.go): lookups are served from one
// shared list of the project's load balancers, which what the driver
// knows of each (lb_known.go) completes.
type lbDriver struct {
	oct       *octaviaAPI
	net       *fipAPI
	env       *framework.Env
	cfg       *LoadBalancerSection
	classes   LoadBalancerClasses
	features  octaviaFeatures
	instances *instances
	// sg manages the Services' node security groups; nil unless
	// [LoadBalancer] manage-security-groups.
	sg *secGroupAPI
	// known is what the driver knows of each load balancer between syncs.
	known *lbKnowledge
}

var (
	_ framework.LoadBalancerDriver[LoadBalancerConfig, octaviaLB] = (*lbDriver)(nil)
	_ framework.LoadBalancerValidator[LoadBalancerConfig]         = (*lbDriver)(nil)
)

// Validate implements framework.LoadBalancerValidator: a Service Octavia
// cannot serve as asked gets a Warning Event and no write.
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
	if lb.LB.ProvisioningStatus == statusDeleted {
		return nil, framework.NotFound("load balancer %s is deleted", id)
	}
	if err := d.read(ctx, lb); err != nil {
		return nil, err
	}
	return lb, nil
}

// Find returns the load balancer with OCCM's name for the Service
// (kube_service_<cluster>_<namespace>_<name>), ignoring ones being deleted.
// The pipeline calls it when the shared list cannot answer.
func (d *lbDriver) Find(ctx context.Context, req *lbRequest) (*octaviaLB, error) {
	lbs, err := d.oct.listLBs(ctx, req.Name)
	if err != nil {
		return nil, err
	}
	var found []*octaviaLB
	for _, lb := range lbs {
		if d.Owns(lb, req) {
			found = append(found, lb)
		}
	}
	switch len(found) {
	case 0:
		return nil, framework.NotFound("no load balancer named %q", req.Name)
	case 1:
		if err := d.read(ctx, found[0]); err != nil {
			return nil, err
		}
		return found[0], nil
	}
	return nil, fmt.Errorf("load balancers %s and %s are both named %q; delete one, or name the one to use in the %s annotation",
		found[0].LB.ID, found[1].LB.ID, req.Name, AnnotationLoadBalancerID)
}

// read completes a load balancer read directly: children (known or read)
// and floating IP (read) when ACTIVE, the floating IP when in ERROR
// (recovery keeps it), nothing while PENDING_* (the pipeline only waits
// then).
func (d *lbDriver) read(ctx context.Context, lb *octaviaLB) error {
	switch lb.LB.ProvisioningStatus {
	case statusActive:
		if err := d.loadTree(ctx, lb); err != nil {
			return err
		}
		fallthrough
	case statusError:
		return d.loadFIP(ctx, lb)
	}
	return nil
}

// complete gives a listed load balancer what Update and Delete need that
// the list did not know: its children when ACTIVE, its floating IP.
func (d *lbDriver) complete(ctx context.Context, lb *octaviaLB) error {
	if !lb.loaded && lb.LB.ProvisioningStatus == statusActive {
		if err := d.loadTree(ctx, lb); err != nil {
			return err
		}
	}
	if !lb.fipLoaded && !d.known.attachFIP(lb) {
		return d.loadFIP(ctx, lb)
	}
	return nil
}

// loadTree gives lb its children: those known when still true of it,
// else read (and then known).
func (d *lbDriver) loadTree(ctx context.Context, lb *octaviaLB) error {
	if d.known.attachTree(lb) {
		return nil
	}
	since := d.known.mark()
	if err := d.oct.loadChildren(ctx, lb, d.cfg.ProviderRequiresSerialAPICalls); err != nil {
		return err
	}
	d.known.storeTree(lb, since)
	return nil
}

// loadFIP reads the floating IP on lb's VIP port.
func (d *lbDriver) loadFIP(ctx context.Context, lb *octaviaLB) error {
	if !hasFIPSlot(lb) {
		lb.FIP, lb.fipLoaded = nil, true
		return nil
	}
	fip, err := d.net.fipByPort(ctx, lb.LB.VipPortID)
	if err != nil {
		return err
	}
	lb.FIP, lb.fipLoaded = fip, true
	d.known.setFIP(lb.LB.ID, fip)
	return nil
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
	// lbForeign: created for another Service, which the Service shares
	// (lb_shared.go).
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
