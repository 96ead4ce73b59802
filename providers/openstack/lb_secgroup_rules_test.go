package openstack

import (
	"context"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gophercloud/gophercloud/v2"
	gopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
)

func TestDesiredSGRules(t *testing.T) {
	subnet4, subnet6 := netip.MustParsePrefix("10.0.0.0/24"), netip.MustParsePrefix("fd00::/64")
	tcp := func(port int, from string) sgRule { return sgRule{"IPv4", "tcp", port, from} }
	tests := []struct {
		name   string
		svc    *corev1.Service
		subnet netip.Prefix
		ovn    bool
		want   []sgRule
	}{
		{
			name: "each node port from the member subnet", svc: testService(), subnet: subnet4,
			want: []sgRule{tcp(30080, "10.0.0.0/24"), {"IPv4", "udp", 30053, "10.0.0.0/24"}},
		},
		{
			name: "health check node port, SCTP, default protocol, no node port",
			svc: testService(func(s *corev1.Service) {
				s.Spec.Ports = []corev1.ServicePort{{Port: 80, NodePort: 30080}, {Protocol: corev1.ProtocolSCTP, Port: 9, NodePort: 30009}, {Port: 81}}
				s.Spec.HealthCheckNodePort = 32000
			}),
			subnet: subnet4,
			want:   []sgRule{{"IPv4", "sctp", 30009, "10.0.0.0/24"}, tcp(30080, "10.0.0.0/24"), tcp(32000, "10.0.0.0/24")},
		},
		{
			name: "IPv6 members", svc: testService(func(s *corev1.Service) { s.Spec.Ports = s.Spec.Ports[:1] }), subnet: subnet6,
			want: []sgRule{{"IPv6", "tcp", 30080, "fd00::/64"}},
		},
		{
			name: "ovn: source ranges, health check from the subnet",
			svc: testService(func(s *corev1.Service) {
				s.Spec.Ports = s.Spec.Ports[:1]
				s.Spec.LoadBalancerSourceRanges = []string{"198.51.100.0/24", "192.0.2.9/24", "2001:db8::/32"}
				s.Spec.HealthCheckNodePort = 32000
			}),
			subnet: subnet4, ovn: true,
			want: []sgRule{tcp(30080, "192.0.2.0/24"), tcp(30080, "198.51.100.0/24"), tcp(32000, "10.0.0.0/24")},
		},
		{
			name: "ovn: everyone by default", svc: testService(func(s *corev1.Service) { s.Spec.Ports = s.Spec.Ports[:1] }), subnet: subnet6, ovn: true,
			want: []sgRule{{"IPv6", "tcp", 30080, "::/0"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := desiredSGRules(tc.svc, tc.subnet, tc.ovn)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("rules (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanSGRules(t *testing.T) {
	rule := func(id, dir, eth, proto string, port int, prefix string) rules.SecGroupRule {
		return rules.SecGroupRule{ID: id, Direction: dir, EtherType: eth, Protocol: proto, PortRangeMin: port, PortRangeMax: port, RemoteIPPrefix: prefix}
	}
	want := []sgRule{{"IPv4", "tcp", 30080, "0.0.0.0/0"}, {"IPv4", "tcp", 30081, "10.0.0.0/24"}, {"IPv4", "udp", 30053, "10.0.0.0/24"}}
	have := []rules.SecGroupRule{
		rule("egress", "egress", "IPv4", "", 0, ""),
		rule("everyone", "ingress", "IPv4", "tcp", 30080, ""),
		rule("everyone-again", "ingress", "IPv4", "TCP", 30080, "0.0.0.0/0"),
		rule("by-number", "ingress", "IPv4", "17", 30053, "10.0.0.0/24"),
		rule("old-port", "ingress", "IPv4", "tcp", 30079, "10.0.0.0/24"),
		{ID: "range", Direction: "ingress", EtherType: "IPv4", Protocol: "tcp", PortRangeMin: 1, PortRangeMax: 65535},
		{ID: "remote-group", Direction: "ingress", EtherType: "IPv4", Protocol: "tcp", PortRangeMin: 30081, PortRangeMax: 30081, RemoteGroupID: "g"},
	}
	create, del := planSGRules(want, have)
	if diff := cmp.Diff([]sgRule{{"IPv4", "tcp", 30081, "10.0.0.0/24"}}, create); diff != "" {
		t.Errorf("create (-want +got):\n%s", diff)
	}
	var ids []string
	for _, r := range del {
		ids = append(ids, r.ID)
	}
	if diff := cmp.Diff([]string{"egress", "everyone-again", "old-port", "range", "remote-group"}, ids); diff != "" {
		t.Errorf("delete (-want +got):\n%s", diff)
	}
}

// TestSecGroupAPIConflicts: a rule another sync made meanwhile (409
// SecurityGroupRuleExists) and a rule or port already gone are success;
// a port changed since it was read is not overwritten.
func TestSecGroupAPIConflicts(t *testing.T) {
	sim := openstacksim.NewServer(t, openstacksim.Options{})
	ctx := context.Background()
	pc, err := gopenstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{
		IdentityEndpoint: sim.AuthURL(), Username: openstacksim.DefaultUsername, Password: openstacksim.DefaultPassword,
		DomainName: openstacksim.DefaultDomain, TenantName: openstacksim.DefaultProject,
	})
	if err != nil {
		t.Fatal(err)
	}
	network, err := gopenstack.NewNetworkV2(pc, gophercloud.EndpointOpts{Region: sim.Region()})
	if err != nil {
		t.Fatal(err)
	}
	g := &secGroupAPI{net: network}
	sg, err := groups.Create(ctx, network, groups.CreateOpts{Name: "lb-sg"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	r := sgRule{"IPv4", "tcp", 30080, "10.0.0.0/24"}
	for range 2 {
		if err := g.createRule(ctx, sg.ID, r); err != nil {
			t.Fatalf("createRule: %v", err)
		}
	}
	if err := g.deleteRule(ctx, rules.SecGroupRule{ID: "gone", SecGroupID: sg.ID}); err != nil {
		t.Errorf("deleteRule of a missing rule: %v", err)
	}
	if err := g.setGroups(ctx, &sgPort{ID: "gone"}, []string{sg.ID}); err != nil {
		t.Errorf("setGroups of a missing port: %v", err)
	}
	v := sim.AddServer(openstacksim.NovaServer{Name: "a"})
	list, err := g.listPorts(ctx, devicePorts{v.ID})
	if err != nil || len(list) != 1 {
		t.Fatalf("listPorts = %+v, %v", list, err)
	}
	stale := list[0]
	if err := g.setGroups(ctx, &list[0], []string{sg.ID}); err != nil {
		t.Fatal(err)
	}
	if err := g.setGroups(ctx, &stale, []string{}); err == nil {
		t.Error("setGroups with a stale revision succeeded")
	}
	if got := neutronErrorType(groups.Delete(ctx, network, sg.ID).ExtractErr()); got != "SecurityGroupInUse" {
		t.Errorf("deleting a group in use: error type %q", got)
	}
}
