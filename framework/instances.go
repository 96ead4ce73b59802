package framework

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"
	cloudproviderapi "k8s.io/cloud-provider/api"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework/providerid"
)

// Instances is what a provider implements for its cloud's virtual machines.
// Every method returns an error wrapping ErrNotFound when, and only when, the
// cloud answered authoritatively that the instance does not exist.
type Instances interface {
	// InstanceByID returns the instance with the cloud ID (the providerID
	// without its scheme).
	InstanceByID(ctx context.Context, id string) (*Instance, error)
	// InstanceByName returns the instance backing the Node with this name; it
	// is used when a Node has no providerID yet.
	InstanceByName(ctx context.Context, name string) (*Instance, error)
	// ListInstances returns every instance (all pages). Lookups within the
	// cache TTL are served from one list. Return ErrNotImplemented if the
	// cloud has no list call.
	ListInstances(ctx context.Context) ([]*Instance, error)
}

// Instance is a cloud VM as a Node needs to know it.
type Instance struct {
	ID   string // cloud ID; the providerID is the codec's Format(ID)
	Name string // the name a Node would carry (hostname)
	// Aliases are other names a Node of this instance may carry (its ID,
	// on clouds whose Nodes are often named after it): the instance cache
	// finds the instance by each, and a name two instances answer to is
	// an error, never a guess.
	Aliases  []string
	Type     string // instance type label (node.kubernetes.io/instance-type)
	Region   string // topology.kubernetes.io/region
	Zone     string // topology.kubernetes.io/zone
	Shutdown bool   // powered off but not deleted
	// Addresses, usually built with package nodeaddr.
	Addresses []corev1.NodeAddress
	// Labels are extra labels the node controller sets on the Node.
	Labels map[string]string
}

// instancesV2 implements cloudprovider.InstancesV2 once for every provider.
type instancesV2 struct {
	codec providerid.Codec
	cache *instanceCache
	// checkAge is how old an instance list InstanceExists and
	// InstanceShutdown may answer from: the node lifecycle controller's
	// period, at which it asks them about every NotReady Node (and only
	// those), so a deleted VM's Node goes within about one period, and
	// all of them share the period's one list. 0: the cache TTL.
	checkAge time.Duration
	deadline operationDeadline
	guard    *goneGuard // nil when off
}

var _ cloudprovider.InstancesV2 = (*instancesV2)(nil)

func newInstancesV2(provider string, codec providerid.Codec, src Instances, env *Env) *instancesV2 {
	i := &instancesV2{codec: codec, cache: newInstanceCache(src, env.InstanceCacheTTL), checkAge: env.NodeMonitorPeriod,
		deadline: operationDeadline{timeout: env.InstanceLookupTimeout, fallback: DefaultInstanceLookupTimeout, flag: "--instance-lookup-timeout"}}
	// Without a Kubernetes client there are no Nodes to check, nor a
	// node lifecycle controller to delete one (tests of a provider alone).
	if !env.NoNodeDeletionGuard && (env.Informers != nil || env.Client != nil) {
		i.guard = newGoneGuard(provider, codec, src, env)
	}
	return i
}

// InstanceExists is false only when the cloud said the instance is gone,
// and sees the cluster (see goneGuard); every other failure is an error,
// so the node lifecycle controller keeps the Node.
func (i *instancesV2) InstanceExists(ctx context.Context, node *corev1.Node) (bool, error) {
	ctx, cancel := i.deadline.start(ctx)
	defer cancel()
	_, err := i.lookup(ctx, node, i.checkAge, notReadySince(node, i.cache.now()))
	if IsNotFound(err) && i.guard != nil {
		err = i.guard.confirm(ctx, node, err)
	}
	switch {
	case err == nil:
		return true, nil
	case IsNotFound(err):
		klog.FromContext(ctx).V(2).Info("Instance not found in the cloud", "node", klog.KObj(node), "providerID", node.Spec.ProviderID)
		return false, nil
	default:
		return false, err
	}
}

// InstanceShutdown reports whether the instance is powered off. A missing
// instance is not shut down (InstanceExists handles it).
func (i *instancesV2) InstanceShutdown(ctx context.Context, node *corev1.Node) (bool, error) {
	ctx, cancel := i.deadline.start(ctx)
	defer cancel()
	inst, err := i.lookup(ctx, node, i.checkAge, notReadySince(node, i.cache.now()))
	if IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return inst.Shutdown, nil
}

// InstanceMetadata returns what the node controller writes on the Node.
func (i *instancesV2) InstanceMetadata(ctx context.Context, node *corev1.Node) (*cloudprovider.InstanceMetadata, error) {
	ctx, cancel := i.deadline.start(ctx)
	defer cancel()
	inst, err := i.lookup(ctx, node, 0, time.Time{})
	switch {
	case IsNotFound(err) && initialized(node):
		return goneMetadata(ctx, node), nil
	case IsNotFound(err):
		return nil, fmt.Errorf("node %q: %w", node.Name, cloudprovider.InstanceNotFound)
	case err != nil:
		return nil, err
	}
	return &cloudprovider.InstanceMetadata{
		ProviderID:       i.codec.Format(inst.ID),
		InstanceType:     inst.Type,
		NodeAddresses:    append([]corev1.NodeAddress(nil), inst.Addresses...),
		Zone:             inst.Zone,
		Region:           inst.Region,
		AdditionalLabels: copyLabels(inst.Labels),
	}, nil
}

// initialized reports whether the cloud node controller has initialized
// node: it has a providerID and no longer the uninitialized taint.
func initialized(node *corev1.Node) bool {
	if node.Spec.ProviderID == "" {
		return false
	}
	for _, t := range node.Spec.Taints {
		if t.Key == cloudproviderapi.TaintExternalCloudProvider {
			return false
		}
	}
	return true
}

// goneMetadata is InstanceMetadata's answer for an initialized Node whose
// instance the cloud says is gone: what the Node already holds. The node
// controller asks only to refresh the Node's addresses, and logs any
// error at error level, for every Node at every refresh; the node
// lifecycle controller, which asks InstanceExists, deletes the Node
// within a --node-monitor-period. Until then its addresses stay as they
// are: a VM being deleted is routine, not an error.
func goneMetadata(ctx context.Context, node *corev1.Node) *cloudprovider.InstanceMetadata {
	klog.FromContext(ctx).V(2).Info("The Node's instance is gone; its addresses are left as they are until the node lifecycle controller deletes it", "node", klog.KObj(node))
	l := node.Labels
	return &cloudprovider.InstanceMetadata{
		ProviderID:    node.Spec.ProviderID,
		InstanceType:  l[corev1.LabelInstanceTypeStable],
		NodeAddresses: append([]corev1.NodeAddress(nil), node.Status.Addresses...),
		Zone:          l[corev1.LabelTopologyZone],
		Region:        l[corev1.LabelTopologyRegion],
	}
}

// lookup finds node's instance, in a list no older than maxAge (0: the
// cache TTL) or directly.
func (i *instancesV2) lookup(ctx context.Context, node *corev1.Node, maxAge time.Duration, after time.Time) (*Instance, error) {
	if node.Spec.ProviderID == "" {
		return checked(i.cache.byName(ctx, node.Name, maxAge, after))
	}
	id, err := i.codec.Parse(node.Spec.ProviderID)
	if err != nil {
		return nil, fmt.Errorf("node %q: %w", node.Name, err)
	}
	inst, err := checked(i.cache.byID(ctx, id.Value, maxAge, after))
	if err == nil && inst.ID != id.Value {
		return nil, fmt.Errorf("node %q: malformed cloud answer: looking up instance %q found instance %q", node.Name, id.Value, inst.ID)
	}
	if err == nil && i.guard != nil {
		// The cloud found a Node's VM: it sees the cluster.
		i.guard.end(ctx)
	}
	return inst, err
}

// notReadySince is when node stopped being Ready, for the existence
// checks of a NotReady Node: they answer from a list that started after
// it. A list no older than the lifecycle controller's period alone could
// have started before the VM went, and the Node would wait a second
// period: at 5,000 nodes, whose list takes seconds, more than 10 s. The
// time is the Ready condition's lastTransitionTime plus a second (it is
// kept to the second), or now when that is later (the Node is NotReady
// already: a list that starts now starts after); zero for a Ready Node, a
// Node without the condition, or a transition later than now (another
// clock's).
func notReadySince(node *corev1.Node, now time.Time) time.Time {
	for _, c := range node.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		if c.Status == corev1.ConditionTrue || c.LastTransitionTime.IsZero() || c.LastTransitionTime.After(now) {
			return time.Time{}
		}
		if at := c.LastTransitionTime.Add(time.Second); at.Before(now) {
			return at
		}
		return now
	}
	return time.Time{}
}

// checked passes on a provider's lookup, an instance without an ID (a
// cloud answer missing it) made an error: its metadata would give the
// Node an empty providerID.
func checked(inst *Instance, err error) (*Instance, error) {
	switch {
	case err != nil:
		return nil, err
	case inst == nil || inst.ID == "":
		return nil, errors.New("malformed cloud answer: an instance without an ID")
	}
	return inst, nil
}

func copyLabels(in map[string]string) map[string]string {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}
