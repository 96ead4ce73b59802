package triton

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/joyent/triton-go/compute"
	"github.com/joyent/triton-go/network"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/framework/providerid"
)

// tritonLB is one Service's load balancer: a Moirai appliance (machine),
// or, in CNS mode, the CNS service its nodes join (cns, its name), which
// has no cloud object of its own.
type tritonLB struct {
	machine *compute.Instance
	cns     string
}

// cnsIDPrefix starts the ID (annotation) of a CNS load balancer:
// cns:<service name>.
const cnsIDPrefix = "cns:"

var _ framework.LoadBalancerProvider = (*Provider)(nil)

// LoadBalancer implements framework.LoadBalancerProvider.
func (p *Provider) LoadBalancer() cloudprovider.LoadBalancer { return p.lb }

// newLoadBalancer wraps the driver in the framework's pipeline for the
// configured mode: auto becomes moirai when the account can see the
// appliance's image, cns otherwise. Both modes name the nodes by CNS, so
// an account without triton_cns_enabled fails start-up, as does moirai
// asked for without its image. none makes no load balancers: it returns
// nil, and the framework then runs no service controller.
func newLoadBalancer(ctx context.Context, env *framework.Env, p *Provider) (cloudprovider.LoadBalancer, error) {
	if p.api == nil || p.machines == nil {
		return nil, errors.New("load balancers: the CloudAPI client is not built")
	}
	s := p.cfg.LoadBalancer
	if s.Mode == modeNone {
		klog.FromContext(ctx).Info("Load balancers off (TRITON_LB_MODE none): a Service of type LoadBalancer gets a Warning Event and no address")
		return nil, nil
	}
	if !p.api.CNSEnabled {
		return nil, fmt.Errorf("TRITON_LB_MODE: load balancers need Triton CNS, and triton_cns_enabled is off on account %s: turn it on (triton account update triton_cns_enabled=true), or set TRITON_LB_MODE=none to run without load balancers", p.api.Login)
	}
	d := &lbDriver{api: p.api, settings: s, cluster: env.ClusterName, codec: framework.Codec(p), recorder: env.Recorder, kube: env.Client, machines: p.machines}
	d.rules = d.newRules(machineListTTL(env.LoadBalancerCacheTTL))
	switch s.Mode {
	case "", modeAuto:
		img, err := d.image(ctx)
		switch {
		case err == nil:
			d.settings.Mode = modeMoirai
			klog.FromContext(ctx).Info("Load balancers: Moirai appliances", "image", img)
		case errors.Is(err, errNoImage):
			d.settings.Mode = modeCNS
			klog.FromContext(ctx).Info("Load balancers: CNS names on the nodes (no Moirai appliance image)", "image", s.Image)
		default:
			return nil, fmt.Errorf("TRITON_LB_MODE auto: %w", err)
		}
	case modeMoirai:
		if _, err := d.image(ctx); err != nil {
			return nil, fmt.Errorf("TRITON_LB_MODE moirai: %w", err)
		}
	}
	return &loadBalancers{
		LoadBalancer: framework.NewLoadBalancer(env, d, framework.LoadBalancerOptions[LoadBalancerConfig]{
			AnnotationPrefix: AnnotationPrefix,
			IDAnnotation:     AnnotationLoadBalancerID,
			NewConfig:        func() *LoadBalancerConfig { return &LoadBalancerConfig{Mode: d.settings.Mode} },
		}),
		machines: d.machines,
	}, nil
}

// loadBalancers is the pipeline, with the list of the cluster's machines
// its driver shares with the drain controller.
type loadBalancers struct {
	cloudprovider.LoadBalancer
	machines *clusterMachines
}

// machineListTTL is how long one list of the cluster's machines serves:
// as long as the pipeline's list of load balancers (--load-balancer-cache-ttl
// in effect), not at all when that is off.
func machineListTTL(lbCacheTTL time.Duration) time.Duration {
	switch {
	case lbCacheTTL == 0:
		return framework.DefaultLoadBalancerCacheTTL
	case lbCacheTTL < 0:
		return 0
	}
	return lbCacheTTL
}

// lbDriver is the Triton half of the load-balancer pipeline, for both
// modes: a Service's mode (its annotation, else the cluster's) picks what
// Create makes and what Update keeps; a Service whose mode changed has
// its old load balancer removed and the new one made (convert).
type lbDriver struct {
	api      *api
	settings LoadBalancerSettings
	cluster  string
	codec    providerid.Codec
	recorder record.EventRecorder
	// kube records the ID of a load balancer made by a change of mode.
	kube kubernetes.Interface
	// nodeLocks serializes the read-modify-writes of one machine's tags.
	nodeLocks keyedMutex
	// resolved caches the appliance's image and package.
	resolved resolvedCache
	// machines is the shared list of the cluster's machines, rules that of
	// their firewall rules.
	machines *clusterMachines
	rules    *sharedList[network.FirewallRule]
}

var (
	_ framework.LoadBalancerDriver[LoadBalancerConfig, tritonLB]    = (*lbDriver)(nil)
	_ framework.LoadBalancerValidator[LoadBalancerConfig]           = (*lbDriver)(nil)
	_ framework.LoadBalancerOwnership[LoadBalancerConfig, tritonLB] = (*lbDriver)(nil)
	_ framework.LoadBalancerLister[LoadBalancerConfig, tritonLB]    = (*lbDriver)(nil)
)

// Validate implements framework.LoadBalancerValidator.
func (d *lbDriver) Validate(req *lbRequest) error { return validateService(req) }

// Get returns the load balancer with this ID: a CNS one (cns:<name>) is
// known without a call; an appliance is read, and one deleted (410) or
// unknown (404) is not found.
func (d *lbDriver) Get(ctx context.Context, id string) (*tritonLB, error) {
	if label, ok := strings.CutPrefix(id, cnsIDPrefix); ok {
		if !cnsLabelPattern.MatchString(label) {
			return nil, framework.NotFound("%q is not a CNS load balancer", id)
		}
		return &tritonLB{cns: label}, nil
	}
	m, err := d.machine(ctx, id)
	if err != nil {
		return nil, err
	}
	if m.State == machineDeleted {
		return nil, framework.NotFound("load balancer machine %s is deleted", id)
	}
	return &tritonLB{machine: m}, nil
}

// List implements framework.LoadBalancerLister: the cluster's appliances,
// and the CNS services its nodes are in (but the node service), from a
// list of its machines that starts now (the nodes' share it). The pipeline
// serves its lookups from it, and the appliances it follows while they
// provision share one list per look instead of a GET each.
func (d *lbDriver) List(ctx context.Context) ([]*tritonLB, error) {
	ms, err := d.machines.all(ctx, true)
	if err != nil {
		return nil, err
	}
	var out []*tritonLB
	labels := map[string]bool{nodeServiceLabel(&d.settings, d.cluster): true}
	// The nodes of a cluster share their services list (api.services):
	// each distinct one is read once.
	read := map[*string]bool{}
	for _, m := range ms {
		if _, appliance := m.Tags[serviceUIDTag]; appliance {
			if m.State != machineDeleted {
				out = append(out, &tritonLB{machine: m})
			}
			continue
		}
		if len(m.CNS.Services) > 0 {
			if read[&m.CNS.Services[0]] {
				continue
			}
			read[&m.CNS.Services[0]] = true
		}
		for _, e := range parseCNSServices(m.CNS.Services) {
			if l := e.label(); !labels[l] && cnsLabelPattern.MatchString(l) {
				labels[l] = true
				out = append(out, &tritonLB{cns: l})
			}
		}
	}
	return out, nil
}

// Owns implements framework.LoadBalancerOwnership: an appliance belongs to
// the Service whose UID it is tagged with; a CNS load balancer to the
// Service whose name it is.
func (d *lbDriver) Owns(lb *tritonLB, req *lbRequest) bool {
	if lb.machine != nil {
		return lb.machine.Tags[serviceUIDTag] == string(req.Service.UID)
	}
	return lb.cns == cnsLabel(d.cluster, req.Service)
}

// Find returns the Service's load balancer in its mode: the appliance
// tagged with its UID (one filtered list: a CCM that died after creating
// it finds it so), or its CNS service, which always exists.
func (d *lbDriver) Find(ctx context.Context, req *lbRequest) (*tritonLB, error) {
	if req.Config.Mode == modeCNS {
		return &tritonLB{cns: cnsLabel(d.cluster, req.Service)}, nil
	}
	m, err := d.findAppliance(ctx, req)
	if err != nil {
		return nil, err
	}
	return &tritonLB{machine: m}, nil
}

// Create makes the Service's load balancer: an appliance, provisioning
// (the pipeline follows it), or nothing for CNS, whose nodes Update tags.
func (d *lbDriver) Create(ctx context.Context, req *lbRequest) (*tritonLB, error) {
	if req.Config.Mode == modeCNS {
		return &tritonLB{cns: cnsLabel(d.cluster, req.Service)}, nil
	}
	m, err := d.createAppliance(ctx, req)
	if err != nil {
		return nil, err
	}
	return &tritonLB{machine: m}, nil
}

// Update brings the load balancer in line with the Service, writing only
// what differs; a Service whose mode changed is converted first.
func (d *lbDriver) Update(ctx context.Context, lb *tritonLB, req *lbRequest) (bool, error) {
	converted, err := d.convert(ctx, lb, req)
	if err != nil || lb.machine != nil && lb.machine.State == machineProvisioning {
		return converted, err
	}
	var changed bool
	if lb.machine != nil {
		changed, err = d.updateAppliance(ctx, lb, req)
	} else {
		changed, err = d.updateCNS(ctx, lb, req)
	}
	return converted || changed, err
}

// convert replaces a load balancer of the other mode than the Service's
// by one of its mode: the appliance is deleted, or the CNS entries
// removed, then the new one found or made.
func (d *lbDriver) convert(ctx context.Context, lb *tritonLB, req *lbRequest) (bool, error) {
	isMoirai := lb.machine != nil
	if isMoirai == (req.Config.Mode == modeMoirai) {
		return false, nil
	}
	if err := d.Delete(ctx, lb, req); err != nil && !framework.IsNotFound(err) {
		return false, fmt.Errorf("removing the %s load balancer before making a %s one: %w", modeOf(lb), req.Config.Mode, err)
	}
	next, err := d.Find(ctx, req)
	if framework.IsNotFound(err) {
		next, err = d.Create(ctx, req)
	}
	if err != nil {
		return true, err
	}
	*lb = *next
	// The pipeline recorded the old one's ID: the next sync must find this.
	id := d.Inspect(lb).ID
	if err := framework.PatchServiceAnnotation(ctx, d.kube, req.Service, AnnotationLoadBalancerID, id); err != nil {
		return true, fmt.Errorf("recording load balancer %s on the Service: %w", id, err)
	}
	return true, nil
}

// modeOf names lb's mode.
func modeOf(lb *tritonLB) string {
	if lb.machine != nil {
		return modeMoirai
	}
	return modeCNS
}

// Delete removes the load balancer: the appliance and its firewall rules,
// or the Service's CNS entries from every node of the cluster.
func (d *lbDriver) Delete(ctx context.Context, lb *tritonLB, req *lbRequest) error {
	if lb.machine != nil {
		return d.deleteAppliance(ctx, lb.machine, req)
	}
	_, err := d.syncNodeEntries(ctx, lb.cns, nil)
	return err
}

// Inspect tells the pipeline what state the load balancer is in.
func (d *lbDriver) Inspect(lb *tritonLB) framework.LoadBalancerState {
	if lb.machine == nil {
		return framework.LoadBalancerState{ID: cnsIDPrefix + lb.cns, Hostname: cnsHostname(lb.cns, d.api.AccountID, d.publicZone())}
	}
	return d.inspectAppliance(lb.machine)
}

// publicZone and privateZone are the CNS zones of public and of private
// networks: configured, or as Triton's public cloud names them.
func (d *lbDriver) publicZone() string { return cnsPublicZone(&d.settings, d.api.Datacenter) }

func (d *lbDriver) privateZone() string {
	if d.settings.CNSPrivateZone != "" {
		return d.settings.CNSPrivateZone
	}
	return d.api.Datacenter + ".cns.joyent.com"
}

// machine reads one machine; CloudAPI's 404, or its 410 for a deleted
// machine, wraps ErrNotFound, and another machine or one checkMachine
// refuses is a malformed response.
func (d *lbDriver) machine(ctx context.Context, id string) (*compute.Instance, error) {
	m, err := one(ctx, "machines.get", func(ctx context.Context) (*compute.Instance, error) {
		return d.api.Compute().Instances().Get(ctx, &compute.GetInstanceInput{ID: id})
	})
	switch {
	case notFound(err):
		return nil, fmt.Errorf("machine %s: %w (%w)", id, framework.ErrNotFound, err)
	case err != nil:
		return nil, fmt.Errorf("reading machine %s: %w", id, err)
	case m == nil || m.ID != id:
		return nil, fmt.Errorf("reading machine %s: malformed response: no such machine in the answer", id)
	}
	if err := checkMachine(m); err != nil {
		return nil, fmt.Errorf("reading machine %s: %w", id, err)
	}
	return m, nil
}

// event records an Event on the Service, when there is a recorder.
func (d *lbDriver) event(svc *corev1.Service, typ, reason, format string, args ...any) {
	if d.recorder != nil {
		d.recorder.Eventf(svc, typ, reason, format, args...)
	}
}

// withOp names the operation of the calls made with ctx, for the metrics.
func withOp(ctx context.Context, op string) context.Context { return cloudapi.WithOperation(ctx, op) }
