package triton

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/joyent/triton-go/compute"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
	"github.com/ccmkit/ccmkit/providers/triton/internal/cloud"
)

// computeNodeLabel is the Node label holding the machine's compute node
// (the server's UUID): the failure domain inside a datacenter, which
// Triton has no zones for.
const computeNodeLabel = "triton.tritondatacenter.com/compute-node"

// pageSize is CloudAPI's largest ListMachines page.
const pageSize = 1000

// Machine states (CloudAPI's translateState).
const (
	stateDeleted  = "deleted"
	stateFailed   = "failed"
	stateStopped  = "stopped"
	stateStopping = "stopping"
)

// instances implements framework.Instances over CloudAPI machines. The
// framework builds cloudprovider.InstancesV2 on it: providerID parsing
// (triton://<uuid>, triton:///<uuid>), the lookup by name when a Node has
// no providerID yet, a shared cache served from ListInstances (one
// machine list per 1000 machines per TTL however many Nodes), and the rule
// that only ErrNotFound means "gone".
type instances struct {
	api       *api
	region    string
	addresses *addressBook
}

var _ framework.Instances = (*instances)(nil)

// newInstances returns the instances of a; region is the Nodes' region,
// ttl the instance cache's (it also bounds how long a machine's NICs serve).
func newInstances(a *api, cfg *Config, ttl time.Duration) *instances {
	if ttl <= 0 {
		ttl = framework.DefaultInstanceCacheTTL
	}
	return &instances{api: a, region: cfg.regionOf(a.Datacenter), addresses: newAddressBook(a, cfg, ttl)}
}

// InstanceByID returns the machine with the UUID id. Only CloudAPI's own
// 404 or 410 for it, or a machine in state deleted or failed, wraps
// framework.ErrNotFound; every other failure stays an error, so the Node
// is kept.
func (i *instances) InstanceByID(ctx context.Context, id string) (*framework.Instance, error) {
	if !isMachineID(id) {
		return nil, fmt.Errorf("%q is not a Triton machine UUID", id)
	}
	m, err := one(ctx, "machines.get", func(ctx context.Context) (*compute.Instance, error) {
		return i.api.Compute().Instances().Get(ctx, &compute.GetInstanceInput{ID: id})
	})
	switch {
	case notFound(err):
		return nil, fmt.Errorf("machine %s: %w (%w)", id, framework.ErrNotFound, err)
	case err != nil:
		return nil, fmt.Errorf("getting machine %s: %w", id, err)
	case m == nil:
		return nil, fmt.Errorf("getting machine %s: malformed response: no machine", id)
	case m.ID != id:
		return nil, fmt.Errorf("getting machine %s: malformed response: CloudAPI answered with machine %q", id, m.ID)
	case isGone(m):
		return nil, framework.NotFound("machine %s is %s", id, m.State)
	}
	return i.convert(ctx, m)
}

// InstanceByName returns the machine backing the Node called name: the
// machine with that name (CloudAPI's name filter, one request), or, for a
// Node named after its machine's UUID, that machine. Only an authoritative
// answer is a not-found: a complete list without that name. Two live
// machines with the name are an error, not a guess.
func (i *instances) InstanceByName(ctx context.Context, name string) (*framework.Instance, error) {
	if isMachineID(name) {
		return i.InstanceByID(ctx, name)
	}
	all, err := i.list(ctx, name)
	if err != nil {
		return nil, err
	}
	var found []*compute.Instance
	malformed := 0
	for _, m := range all {
		switch {
		case m == nil || !isMachineID(m.ID) || m.Name == "":
			// This one may be the Node's, under a name the answer
			// lost: without it, no match is no proof.
			malformed++
		case m.Name == name && !isGone(m):
			found = append(found, m)
		}
	}
	m, err := framework.PickByName("machine", name, found, malformed, func(m *compute.Instance) string { return m.ID })
	if err != nil {
		return nil, err
	}
	return i.convert(ctx, m)
}

// ListInstances returns every live machine of the account, under both
// names a Node may carry: the machine's name and, as an alias, its UUID
// (some images name the host after it). A deleted or failed machine is
// left out (it backs no Node), and so is a malformed one, logged: the
// other machines still serve their Nodes, and a Node whose machine is
// missing from the list is looked up directly.
func (i *instances) ListInstances(ctx context.Context) ([]*framework.Instance, error) {
	all, err := i.list(ctx, "")
	if err != nil {
		return nil, err
	}
	out := make([]*framework.Instance, 0, len(all))
	for _, m := range all {
		if m == nil || isGone(m) {
			continue
		}
		inst, err := i.convert(ctx, m)
		if err != nil {
			klog.FromContext(ctx).Error(err, "Ignoring malformed machine", "machineID", m.ID)
			continue
		}
		out = append(out, inst)
	}
	return out, nil
}

// list reads every machine (named name, when not empty), a page of 1000
// at a time: CloudAPI's lists have no links, so a page shorter than the
// limit is the last.
func (i *instances) list(ctx context.Context, name string) ([]*compute.Instance, error) {
	ctx = cloudapi.WithOperation(ctx, "machines.list")
	var all []*compute.Instance
	for offset := 0; ; offset += pageSize {
		if offset > math.MaxUint16 {
			return nil, fmt.Errorf("listing machines: more than %d: triton-go cannot page further", offset)
		}
		page, err := cloud.Guarded("machines.list", func() ([]*compute.Instance, error) {
			return i.api.Compute().Instances().List(ctx, &compute.ListInstancesInput{
				Name: name, Limit: pageSize, Offset: uint16(offset),
			})
		})
		if err != nil {
			return nil, fmt.Errorf("listing machines: %w", err)
		}
		all = append(all, page...)
		if len(page) < pageSize {
			return all, nil
		}
	}
}

// convert maps a machine to what a Node needs. A machine checkMachine
// refuses, or one without a package (CloudAPI names every machine's
// package), is malformed. Addresses that cannot be known are logged and
// left out, so the Node keeps the others.
func (i *instances) convert(ctx context.Context, m *compute.Instance) (*framework.Instance, error) {
	if err := checkMachine(m); err != nil {
		return nil, err
	}
	if m.Package == "" {
		// Taken as it is, the Node would lose its instance-type label.
		return nil, fmt.Errorf("malformed response: machine %s without its package", m.ID)
	}
	addrs, err := i.addresses.of(ctx, m)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Ignoring machine addresses that cannot be known", "machineID", m.ID)
	}
	name := m.Name
	if name == "" {
		name = m.ID
	}
	var labels map[string]string
	if m.ComputeNode != "" {
		labels = map[string]string{computeNodeLabel: m.ComputeNode}
	}
	return &framework.Instance{
		ID:        m.ID,
		Name:      name,
		Aliases:   []string{m.ID},
		Type:      m.Package,
		Region:    i.region,
		Zone:      i.api.Datacenter,
		Shutdown:  m.State == stateStopped || m.State == stateStopping,
		Addresses: addrs,
		Labels:    labels,
	}, nil
}

// checkMachine returns an error for a machine CloudAPI does not send: none,
// one whose ID is no machine UUID, or one whose primaryIp is not one of its
// ips. CloudAPI names one of a machine's NICs' IPs as its primaryIp whenever
// it has NICs, and sends none when it has none: taken as it is, an
// appliance's status would lose its address or take a garbled one.
func checkMachine(m *compute.Instance) error {
	switch {
	case m == nil:
		return errors.New("malformed response: no machine")
	case !isMachineID(m.ID):
		return fmt.Errorf("malformed response: machine ID %q", m.ID)
	case m.PrimaryIP == "" && len(m.IPs) > 0:
		return fmt.Errorf("malformed response: machine %s without its primaryIp", m.ID)
	case m.PrimaryIP != "" && !slices.Contains(m.IPs, m.PrimaryIP):
		return fmt.Errorf("malformed response: machine %s has primaryIp %q, not one of its ips", m.ID, m.PrimaryIP)
	}
	return nil
}

// isGone reports whether CloudAPI reports m as no longer existing: deleted
// or failed. Provisioning, running, stopping, stopped, offline (its
// compute node unreachable) and unknown machines exist.
func isGone(m *compute.Instance) bool {
	return m.State == stateDeleted || m.State == stateFailed
}

// isMachineID reports whether id is a machine UUID (8-4-4-4-12 hex).
func isMachineID(id string) bool {
	if len(id) != 36 {
		return false
	}
	for k, c := range id {
		switch k {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !isHexDigit(c) {
				return false
			}
		}
	}
	return true
}

func isHexDigit(c rune) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
