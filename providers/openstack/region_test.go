package openstack_test

import (
	"testing"

	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
)

// TestOtherRegionIsNotGone: a Node whose providerID names another region
// (OCCM with OS_CCM_REGIONAL=true in a multi-region cloud) is an error for
// this CCM, never "not found": looking it up in our region answers 404 and
// the Node would be deleted.
func TestOtherRegionIsNotGone(t *testing.T) {
	sim := openstacksim.NewServer(t, openstacksim.Options{})
	id := sim.AddServer(openstacksim.NovaServer{Name: "node-1"}).ID
	inst, ctx := mustCloud(t, sim.CloudConfig())

	if ok, err := inst.InstanceExists(ctx, node("node-1", "openstack://RegionOne/"+id)); err != nil || !ok {
		t.Fatalf("our region: InstanceExists = %v, %v; want true", ok, err)
	}
	ok, err := inst.InstanceExists(ctx, node("node-x", "openstack://RegionTwo/"+id))
	if err == nil {
		t.Fatalf("another region: InstanceExists = %v, nil; want an error", ok)
	}
}
