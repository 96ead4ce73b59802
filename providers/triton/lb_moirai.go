package triton

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/joyent/triton-go/compute"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
)

// This file is Moirai mode: one appliance (a machine of the
// cloud-load-balancer image, HAProxy driven by its metadata) per Service.
// The appliance is tagged with the cluster and the Service's UID and joins
// the Service's CNS name; its portmap metadata sends each Service port to
// the nodes' NodePort by the nodes' private CNS name, which every node of
// the Service joins (nodeServiceLabel).

// Machine states (CloudAPI's translateState).
const (
	machineProvisioning = "provisioning"
	machineRunning      = "running"
	machineFailed       = "failed"
	machineDeleted      = "deleted"
)

// findAppliance returns the Service's appliance, by its UID tag; none
// wraps ErrNotFound. Of several (made by hand, or a lost answer retried),
// the oldest wins.
func (d *lbDriver) findAppliance(ctx context.Context, req *lbRequest) (*compute.Instance, error) {
	ms, err := d.api.listMachines(ctx, serviceUIDTag, string(req.Service.UID))
	if err != nil {
		return nil, err
	}
	ms = slices.DeleteFunc(ms, func(m *compute.Instance) bool { return m.State == machineDeleted })
	if len(ms) == 0 {
		return nil, framework.NotFound("no machine tagged %s=%s", serviceUIDTag, req.Service.UID)
	}
	return slices.MinFunc(ms, func(a, b *compute.Instance) int { return a.Created.Compare(b.Created) }), nil
}

// createAppliance creates the Service's appliance, with its metadata, tags
// and firewall on; CloudAPI answers "provisioning". Update adds the
// firewall rules once it runs. A create that fails forgets the image,
// package and networks it was to be made of.
func (d *lbDriver) createAppliance(ctx context.Context, req *lbRequest) (*compute.Instance, error) {
	m, err := d.createApplianceOf(ctx, req)
	if err != nil {
		d.forgetResolved()
	}
	return m, err
}

// createApplianceOf looks up what the appliance is made of and creates it.
func (d *lbDriver) createApplianceOf(ctx context.Context, req *lbRequest) (*compute.Instance, error) {
	image, err := d.image(ctx)
	if err != nil {
		return nil, err
	}
	pkg, err := d.pkg(ctx, req.Config.Package)
	if err != nil {
		return nil, err
	}
	targets := d.targetMachines(ctx, req.Nodes)
	nets, err := d.applianceNetworks(ctx, targets)
	if err != nil {
		return nil, err
	}
	label := cnsLabel(d.cluster, req.Service)
	in := &compute.CreateInstanceInput{
		Name:            cnsName(label + "-" + string(req.Service.UID)[:min(8, len(req.Service.UID))]),
		Package:         pkg,
		Image:           image,
		Networks:        nets,
		FirewallEnabled: true,
		Tags:            map[string]string{clusterTag: d.cluster, serviceUIDTag: string(req.Service.UID)},
		CNS:             compute.InstanceCNS{Services: []string{label}},
		Metadata:        desiredMetadata(req, d.target(len(targets))),
	}
	klog.FromContext(ctx).V(2).Info("Creating load balancer appliance", "service", klog.KObj(req.Service), "image", image, "package", pkg, "networks", nets)
	m, err := d.api.Compute().Instances().Create(withOp(ctx, "machines.create"), in)
	if err != nil {
		return nil, err
	}
	if err := checkMachine(m); err != nil {
		return nil, fmt.Errorf("creating load balancer machine: %w", err)
	}
	return m, nil
}

// target is where the appliances send traffic.
func (d *lbDriver) target(nodes int) moiraiTarget {
	return moiraiTarget{
		backend:     cnsHostname(nodeServiceLabel(&d.settings, d.cluster), d.api.AccountID, d.privateZone()),
		nodes:       nodes,
		proxyHealth: cmp.Or(d.settings.KubeProxyHealthPort, defaultKubeProxyHealthPort),
	}
}

// updateAppliance makes the nodes join the node service, the appliance's
// metadata the Service's, and its firewall rules the Service's; a sync
// with nothing changed writes nothing.
func (d *lbDriver) updateAppliance(ctx context.Context, lb *tritonLB, req *lbRequest) (bool, error) {
	targets := d.targetMachines(ctx, req.Nodes)
	label := nodeServiceLabel(&d.settings, d.cluster)
	want := make(map[string][]cnsEntry, len(targets))
	for _, id := range targets {
		want[id] = []cnsEntry{cnsEntry(label)}
	}
	nodesWrote, err := d.syncNodeEntries(ctx, label, want)
	if err != nil {
		return nodesWrote, err
	}
	mdWrote, err := d.ensureMetadata(ctx, lb, desiredMetadata(req, d.target(len(targets))))
	if err != nil {
		return nodesWrote || mdWrote, err
	}
	fwWrote, err := d.ensureRules(ctx, lb.machine.ID, desiredRules(req.Service, req.Config, lb.machine.ID))
	return nodesWrote || mdWrote || fwWrote, err
}

// ensureMetadata writes the Moirai keys that differ (one POST) and deletes
// those the Service no longer asks for; the appliance rereads them within
// a minute. lb then holds the metadata as written.
func (d *lbDriver) ensureMetadata(ctx context.Context, lb *tritonLB, want map[string]string) (bool, error) {
	m := lb.machine
	set, del := metadataChanges(m.Metadata, want)
	if len(set) == 0 && len(del) == 0 {
		return false, nil
	}
	klog.FromContext(ctx).V(2).Info("Updating load balancer metadata", "machine", m.ID, "set", slices.Sorted(maps.Keys(set)), "delete", del)
	md := maps.Clone(m.Metadata)
	if md == nil {
		md = map[string]string{}
	}
	if len(set) > 0 {
		if _, err := one(ctx, "machines.metadata.update", func(ctx context.Context) (map[string]string, error) {
			return d.api.Compute().Instances().UpdateMetadata(ctx, &compute.UpdateMetadataInput{ID: m.ID, Metadata: set})
		}); err != nil {
			return false, fmt.Errorf("updating the metadata of machine %s: %w", m.ID, err)
		}
		maps.Copy(md, set)
	}
	for _, k := range del {
		if _, err := one(ctx, "machines.metadata.delete", func(ctx context.Context) (struct{}, error) {
			return struct{}{}, d.api.Compute().Instances().DeleteMetadata(ctx, &compute.DeleteMetadataInput{ID: m.ID, Key: k})
		}); err != nil && !notFound(err) {
			return true, fmt.Errorf("deleting metadata %s of machine %s: %w", k, m.ID, err)
		}
		delete(md, k)
	}
	updated := *m
	updated.Metadata = md
	lb.machine = &updated
	return true, nil
}

// deleteAppliance deletes the appliance's firewall rules and the appliance;
// it is gone when CloudAPI answers 410 or 404 for it. Then the rules of
// appliances gone are swept, and, when it was the cluster's last
// appliance, the nodes leave the node service.
//
// Whether another appliance is left is read from the shared list of the
// cluster's machines, where this process's own deletes are at once, and
// confirmed by a GET of one (liveAppliance): a fresh list per delete was
// a list of every node per load balancer deleted (6,000 pages to delete
// 1,000 load balancers of 5,000 nodes). Only when none is left does a
// list that starts now decide (one created elsewhere keeps its nodes and
// its rules), and the rules are then swept from a list that starts now,
// since nothing sweeps after the last appliance. Otherwise they are swept
// from the shared lists: a rule whose machine the list does not show goes
// once a GET says the machine is gone, so an appliance created since
// keeps its rules; one deleted by hand within the TTL keeps its rules
// until a later delete.
func (d *lbDriver) deleteAppliance(ctx context.Context, m *compute.Instance, req *lbRequest) error {
	if _, err := d.ensureRules(ctx, m.ID, nil); err != nil {
		return err
	}
	if m.State != machineDeleted {
		if _, err := one(ctx, "machines.delete", func(ctx context.Context) (struct{}, error) {
			return struct{}{}, d.api.Compute().Instances().Delete(ctx, &compute.DeleteInstanceInput{ID: m.ID})
		}); err != nil && !notFound(err) {
			return fmt.Errorf("deleting machine %s: %w", m.ID, err)
		}
	}
	if _, err := d.machine(ctx, m.ID); !framework.IsNotFound(err) {
		if err != nil {
			return err
		}
		return framework.Provisioning("load balancer machine %s is being deleted", m.ID)
	}
	d.machines.forget(m.ID)
	ms, err := d.machines.all(ctx, false)
	if err != nil {
		return err
	}
	other, err := d.liveAppliance(ctx, ms, req)
	if err != nil {
		return err
	}
	if other {
		// Without the appliances liveAppliance found gone.
		if ms, err = d.machines.all(ctx, false); err != nil {
			return err
		}
		return d.sweepRules(ctx, ms, false)
	}
	if ms, err = d.machines.all(ctx, true); err != nil {
		return err
	}
	last := !slices.ContainsFunc(ms, func(m *compute.Instance) bool { return otherAppliance(m, req) })
	if err := d.sweepRules(ctx, ms, last); err != nil || !last {
		return err
	}
	_, err = d.syncNodeEntries(ctx, nodeServiceLabel(&d.settings, d.cluster), nil)
	return err
}

// liveAppliance reports whether an appliance of the cluster but req's
// Service's is live: the first of ms that a GET finds live. Those found
// gone leave the shared list.
func (d *lbDriver) liveAppliance(ctx context.Context, ms []*compute.Instance, req *lbRequest) (bool, error) {
	for _, m := range ms {
		if !otherAppliance(m, req) {
			continue
		}
		got, err := d.machine(ctx, m.ID)
		switch {
		case framework.IsNotFound(err):
			d.machines.forget(m.ID)
		case err != nil:
			return false, err
		case got.State != machineDeleted:
			return true, nil
		}
	}
	return false, nil
}

// otherAppliance reports whether m is a live appliance of the cluster but
// the one of req's Service.
func otherAppliance(m *compute.Instance, req *lbRequest) bool {
	uid, ok := m.Tags[serviceUIDTag]
	return ok && uid != string(req.Service.UID) && m.State != machineDeleted
}

// inspectAppliance reports the appliance's state: its primary IP (the
// public one, when it has a public NIC) named by the Service's CNS
// hostname, and ipMode Proxy with tcp-proxy-v2.
func (d *lbDriver) inspectAppliance(m *compute.Instance) framework.LoadBalancerState {
	s := framework.LoadBalancerState{ID: m.ID, Provisioning: m.State == machineProvisioning}
	switch m.State {
	case machineProvisioning, machineRunning:
	default:
		s.Failed = "machine is " + m.State
	}
	s.ProxyProtocol = strings.Contains(m.Metadata[mdPortmap], listenerTCPProxyV2+"://")
	if m.PrimaryIP != "" && !s.Provisioning {
		s.IPs = []string{m.PrimaryIP}
		if name := d.applianceHostname(m); name != "" {
			s.DNSNames = map[string]string{m.PrimaryIP: name}
		}
	}
	return s
}

// applianceHostname is the public CNS hostname of the service an
// appliance joins: from its triton.cns.services tag, or, for an answer
// that lost its tags, from the CNS names CloudAPI lists for it (dns_names),
// so that the Service's status keeps its hostname.
func (d *lbDriver) applianceHostname(m *compute.Instance) string {
	if label := applianceLabel(m); label != "" {
		return cnsHostname(label, d.api.AccountID, d.publicZone())
	}
	suffix := cnsHostname("", d.api.AccountID, d.publicZone()) // ".svc.<account>.<zone>"
	var names []string
	for _, n := range m.DomainNames {
		if label, ok := strings.CutSuffix(n, suffix); ok && label != "" && !strings.Contains(label, ".") {
			names = append(names, n)
		}
	}
	if len(names) != 1 {
		return "" // none, or a choice the tags would have made
	}
	return names[0]
}

// applianceLabel is the CNS service an appliance joins: the first of its
// triton.cns.services (triton-go splits the tag into CNS.Services on reads,
// not in a create's answer).
func applianceLabel(m *compute.Instance) string {
	services := m.CNS.Services
	if v, ok := m.Tags[cnsServicesTag].(string); ok && len(services) == 0 {
		services = []string{v}
	}
	entries := parseCNSServices(services)
	if len(entries) == 0 {
		return ""
	}
	return entries[0].label()
}
