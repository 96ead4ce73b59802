package openstacksim

import (
	"reflect"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
)

// nullMonitorPort is a batch member that sends "monitor_port": null.
type nullMonitorPort struct {
	address string
	port    int
}

func (m nullMonitorPort) ToBatchMemberUpdateMap() (map[string]any, error) {
	return map[string]any{"address": m.address, "protocol_port": m.port, "monitor_port": nil}, nil
}

// TestBatchMembersKeepOmittedAttributes: as Octavia, a batch update keeps
// the name, monitor port and tags of a matched member when the request
// leaves them out, clears them when it sends null, and resets weight to
// its default.
func TestBatchMembersKeepOmittedAttributes(t *testing.T) {
	s, c := setup(t, Options{ProvisioningReads: -1})
	created, err := loadbalancers.Create(ctx(), c.lb, fullLB(s, "10.0.0.9")).Extract()
	if err != nil {
		t.Fatal(err)
	}
	lb := getLB(t, c, created.ID)
	pool, err := pools.Get(ctx(), c.lb, lb.Pools[0].ID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	weight, port, name := 5, 32000, "node-a"
	first := []pools.BatchUpdateMemberOpts{{Address: "10.0.0.9", ProtocolPort: 30080, Name: &name, Weight: &weight, MonitorPort: &port, Tags: []string{"t"}}}
	if err := pools.BatchUpdateMembers(ctx(), c.lb, pool.ID, first).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	bare := []pools.BatchUpdateMemberOpts{{Address: "10.0.0.9", ProtocolPort: 30080}}
	if err := pools.BatchUpdateMembers(ctx(), c.lb, pool.ID, bare).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	m := s.State().Members[0]
	if m.Name != name || m.MonitorPort != port || len(m.Tags) != 1 || m.Weight != 1 {
		t.Errorf("after a batch without them: %+v, want name, monitor port and tags kept, weight 1", m)
	}
	if err := pools.BatchUpdateMembers(ctx(), c.lb, pool.ID, []nullMonitorPort{{"10.0.0.9", 30080}}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if m := s.State().Members[0]; m.MonitorPort != 0 || m.Name != name {
		t.Errorf("after monitor_port null: %+v, want no monitor port", m)
	}
}

// memberJSON, built field by field, is what the JSON round trip of a
// Member gives (the pool and its empty attributes as the API shows them).
func TestMemberJSONIsTheRoundTrip(t *testing.T) {
	for _, mem := range []Member{
		{ID: "m1", PoolID: "p1", Name: "node-1", ProjectID: "proj", Address: "10.0.0.5", ProtocolPort: 30080,
			SubnetID: "s1", Weight: 1, AdminStateUp: true, MonitorAddress: "10.0.0.6", MonitorPort: 31000,
			OctaviaAttributes: OctaviaAttributes{Tags: []string{"a", "b"}, ProvisioningStatus: "ACTIVE", OperatingStatus: "ONLINE", CreatedAt: "2024-01-01T00:00:00", UpdatedAt: "2024-01-02T00:00:00"}},
		{ID: "m2", PoolID: "p1", Backup: true, OctaviaAttributes: OctaviaAttributes{Tags: []string{}}},
		{ID: "m3"},
	} {
		want := nullIfEmpty(toMap(&mem), "updated_at", "subnet_id", "monitor_address", "monitor_port")
		delete(want, "pool_id")
		want["tenant_id"], want["vnic_type"] = mem.ProjectID, "normal"
		if got := memberJSON(&mem); !reflect.DeepEqual(got, want) {
			t.Errorf("member %s:\n got  %#v\n want %#v", mem.ID, got, want)
		}
	}
}
