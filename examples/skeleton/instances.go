package skeleton

import (
	"context"
	"fmt"

	"k8s.io/klog/v2"

	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/nodeaddr"
)

// instances implements framework.Instances. The framework builds
// cloudprovider.InstancesV2 on it: providerID parsing, the lookup by name
// when a Node has no providerID yet, a shared cache served from
// ListInstances, and the rule that only ErrNotFound means "gone".
type instances struct {
	client        *client
	defaultRegion string
}

var _ framework.Instances = (*instances)(nil)

// InstanceByID returns the instance with the cloud ID id. The client maps
// the API's 404 to framework.ErrNotFound; every other failure stays an
// error, so the Node is kept.
func (i *instances) InstanceByID(ctx context.Context, id string) (*framework.Instance, error) {
	inst, err := i.client.getInstance(ctx, id)
	if err != nil {
		return nil, err
	}
	return i.convert(inst)
}

// InstanceByName returns the instance called name. The Skeleton API cannot
// filter by name, so this lists every instance and matches exactly. Only a
// complete list without the name is an authoritative not-found.
func (i *instances) InstanceByName(ctx context.Context, name string) (*framework.Instance, error) {
	all, err := i.client.listInstances(ctx)
	if err != nil {
		return nil, err
	}
	var found []*instance
	malformed := 0
	for k := range all {
		switch {
		case all[k].Name == "" || all[k].check() != nil:
			// This one may be the Node's, under a name the answer
			// lost: without it, no match is no proof.
			malformed++
		case all[k].Name == name:
			found = append(found, &all[k])
		}
	}
	// One match, none, none but malformed entries, two: the framework
	// decides what each proves, the same for every cloud.
	inst, err := framework.PickByName("instance", name, found, malformed, func(i *instance) string { return i.ID })
	if err != nil {
		return nil, err
	}
	return i.convert(inst)
}

// ListInstances returns every instance, all pages.
func (i *instances) ListInstances(ctx context.Context) ([]*framework.Instance, error) {
	all, err := i.client.listInstances(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*framework.Instance, 0, len(all))
	for k := range all {
		inst, err := i.convert(&all[k])
		if err != nil {
			// Left out of the list, the instance is looked up directly.
			klog.FromContext(ctx).Error(err, "Leaving a malformed instance out of the list", "instanceID", all[k].ID)
			continue
		}
		out = append(out, inst)
	}
	return out, nil
}

// convert maps an API instance to what a Node needs. An instance that
// lacks a key, whose ID has not the API's shape, or with an address that is no IP, is a malformed response: left
// out, the value would be taken from the Node, where an error keeps what
// the Node has.
func (i *instances) convert(inst *instance) (*framework.Instance, error) {
	if err := inst.check(); err != nil {
		return nil, err
	}
	addrs, err := nodeaddr.NewBuilder(nodeaddr.DualStack).
		AddInternal(inst.PrivateIPv4).
		AddExternal(inst.PublicIPv4, inst.PublicIPv6).
		AddHostname(inst.Name).
		Build()
	if err != nil {
		return nil, fmt.Errorf("malformed response: instance %s: %w", inst.ID, err)
	}
	region := inst.Region
	if region == "" {
		region = i.defaultRegion
	}
	return &framework.Instance{
		ID:        inst.ID,
		Name:      inst.Name,
		Type:      inst.Type,
		Region:    region,
		Zone:      inst.Zone,
		Shutdown:  inst.Status == instanceStopped,
		Addresses: addrs,
	}, nil
}
