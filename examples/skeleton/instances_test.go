package skeleton_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/ccmkit/ccmkit/examples/skeleton/skeletonsim"
	"github.com/ccmkit/ccmkit/framework"
)

func node(name, providerID string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: providerID}}
}

func TestInstanceMetadata(t *testing.T) {
	f := newFixture(t, skeletonsim.Options{})
	full := f.sim.AddInstance(skeletonsim.Instance{
		Name: "node-1", Type: "s-2", Region: "sk-1", Zone: "sk-1b",
		PrivateIPv4: "10.0.0.1", PublicIPv4: "203.0.113.1", PublicIPv6: "2001:db8::1",
	})
	bare := f.sim.AddInstance(skeletonsim.Instance{Name: "node-10", Type: "s-1", PrivateIPv4: "10.0.0.10"})
	inst, _ := f.cloud.InstancesV2()

	tests := []struct {
		name string
		node *corev1.Node
		want *cloudprovider.InstanceMetadata
	}{
		{
			name: "by providerID, every address",
			node: node("node-1", "skeleton://"+full.ID),
			want: &cloudprovider.InstanceMetadata{
				ProviderID:   "skeleton://" + full.ID,
				InstanceType: "s-2",
				Region:       "sk-1",
				Zone:         "sk-1b",
				NodeAddresses: []corev1.NodeAddress{
					{Type: corev1.NodeInternalIP, Address: "10.0.0.1"},
					{Type: corev1.NodeExternalIP, Address: "203.0.113.1"},
					{Type: corev1.NodeExternalIP, Address: "2001:db8::1"},
					{Type: corev1.NodeHostName, Address: "node-1"},
				},
			},
		},
		{
			name: "by exact name, SKELETON_REGION when the API has none",
			node: node("node-10", ""),
			want: &cloudprovider.InstanceMetadata{
				ProviderID:   "skeleton://" + bare.ID,
				InstanceType: "s-1",
				Region:       "sk-default",
				NodeAddresses: []corev1.NodeAddress{
					{Type: corev1.NodeInternalIP, Address: "10.0.0.10"},
					{Type: corev1.NodeHostName, Address: "node-10"},
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := inst.InstanceMetadata(f.ctx, tt.node)
			if err != nil {
				t.Fatalf("InstanceMetadata: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("InstanceMetadata (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNotFoundOnlyWhenGone checks the rule that keeps Nodes alive: only the
// API saying "this instance does not exist" is ErrNotFound.
func TestNotFoundOnlyWhenGone(t *testing.T) {
	f := newFixture(t, skeletonsim.Options{})
	id := f.sim.AddInstance(skeletonsim.Instance{Name: "node-1"}).ID
	f.sim.AddInstance(skeletonsim.Instance{Name: "twin"})
	f.sim.AddInstance(skeletonsim.Instance{Name: "twin"})
	instances := f.cloud.Provider().(framework.InstancesProvider).Instances()

	tests := []struct {
		name         string
		fault        int
		code         string
		lookup       func() error
		wantErr      bool
		wantNotFound bool
	}{
		{name: "existing", lookup: byID(f, instances, id)},
		{name: "deleted ID", lookup: byID(f, instances, "i-999999"), wantErr: true, wantNotFound: true},
		{name: "unknown name", lookup: byName(f, instances, "node-2"), wantErr: true, wantNotFound: true},
		{name: "prefix is not a match", lookup: byName(f, instances, "node"), wantErr: true, wantNotFound: true},
		{name: "ambiguous name", lookup: byName(f, instances, "twin"), wantErr: true},
		{name: "server error by ID", fault: 500, lookup: byID(f, instances, id), wantErr: true},
		{name: "unauthorized by ID", fault: 401, lookup: byID(f, instances, id), wantErr: true},
		{name: "rate limited by name", fault: 429, lookup: byName(f, instances, "node-1"), wantErr: true},
		{name: "404 from the list call", fault: 404, lookup: byName(f, instances, "node-1"), wantErr: true},
		{name: "404 without the API's not_found code", fault: 404, code: "unknown_endpoint", lookup: byID(f, instances, id), wantErr: true},
		{name: "the API's 404 for the ID", fault: 404, lookup: byID(f, instances, id), wantErr: true, wantNotFound: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.fault != 0 {
				defer f.sim.Inject(skeletonsim.Fault{Status: tt.fault, Code: tt.code})()
			}
			err := tt.lookup()
			if (err != nil) != tt.wantErr || framework.IsNotFound(err) != tt.wantNotFound {
				t.Errorf("err = %v; want error %v, not-found %v", err, tt.wantErr, tt.wantNotFound)
			}
		})
	}
}

func byID(f *fixture, i framework.Instances, id string) func() error {
	return func() error { _, err := i.InstanceByID(f.ctx, id); return err }
}

func byName(f *fixture, i framework.Instances, name string) func() error {
	return func() error { _, err := i.InstanceByName(f.ctx, name); return err }
}

// TestListInstancesReadsAllPages: 450 instances are three pages of 200.
func TestListInstancesReadsAllPages(t *testing.T) {
	f := newFixture(t, skeletonsim.Options{})
	for i := range 450 {
		f.sim.AddInstance(skeletonsim.Instance{Name: fmt.Sprintf("node-%03d", i)})
	}
	before := f.sim.Stats()["GET /v1/instances"]

	list, err := f.cloud.Provider().(framework.InstancesProvider).Instances().ListInstances(f.ctx)
	if err != nil {
		t.Fatalf("ListInstances: %v", err)
	}
	if len(list) != 450 || list[0].Name != "node-000" || list[449].Name != "node-449" {
		t.Errorf("ListInstances returned %d instances, want node-000 to node-449", len(list))
	}
	if calls := f.sim.Stats()["GET /v1/instances"] - before; calls != 3 {
		t.Errorf("ListInstances made %d list calls, want 3", calls)
	}
}
