package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
)

// What examples/services/openstack/ names in the cloud. Octavia picks a
// load balancer's ID: the seed's is the simulator's first, which the
// adopt-existing example names.
const (
	osExampleAdoptedLBID = "00000001-0009-4000-8000-000000000001"
	osExampleTLSRef      = "https://barbican.example.com:9311/v1/containers/6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
)

func init() { registerExamples("openstack", openStackExamples) }

// osClients are gophercloud's Octavia and Neutron clients for the
// simulator.
type osClients struct{ lb, net *gophercloud.ServiceClient }

// openStackExamples checks each OpenStack example through gophercloud
// against openstacksim.
func openStackExamples() examplesCloud {
	var api osClients
	// public: a listener per want entry, and a floating IP on the VIP port.
	public := func(ctx context.Context, run *examplesRun, ex exampleState, want ...string) error {
		if _, err := osTree(ctx, api, run, ex, want...); err != nil {
			return err
		}
		return osFloatingIP(ctx, api, ex, true)
	}
	return examplesCloud{
		StartCloud: func(o simkit.Common) simkit.Cloud { return openstacksim.StartCloud(o) },
		Seed: func(t *testing.T, run *examplesRun) {
			api = newOSClients(t, run.Cloud.(*openstacksim.Cloud))
			lb, err := run.Cloud.(*openstacksim.Cloud).AddLoadBalancer(openstacksim.ScenarioLoadBalancer{
				Name:      "existing-lb",
				Listeners: []openstacksim.ScenarioListener{{Protocol: "HTTP", Port: 8000, Pool: &openstacksim.ScenarioPool{MemberPort: 31999}}},
			})
			if err != nil {
				t.Fatal(err)
			}
			if lb.ID != osExampleAdoptedLBID {
				t.Fatalf("the load balancer to adopt got ID %s, but adopt-existing.yaml names %s", lb.ID, osExampleAdoptedLBID)
			}
		},
		Checks: map[string]exampleCheck{
			"tcp.yaml": func(ctx context.Context, run *examplesRun, ex exampleState) error {
				return public(ctx, run, ex, "TCP:80 pool TCP")
			},
			"udp.yaml": func(ctx context.Context, run *examplesRun, ex exampleState) error {
				return public(ctx, run, ex, "UDP:53 pool UDP")
			},
			"http.yaml": func(ctx context.Context, run *examplesRun, ex exampleState) error {
				return public(ctx, run, ex, "HTTP:80 pool HTTP X-Forwarded-For")
			},
			"https.yaml": func(ctx context.Context, run *examplesRun, ex exampleState) error {
				return public(ctx, run, ex, "TERMINATED_HTTPS:443 pool HTTP tls "+osExampleTLSRef)
			},
			"proxy-protocol.yaml": func(ctx context.Context, run *examplesRun, ex exampleState) error {
				if err := public(ctx, run, ex, "TCP:80 pool PROXY"); err != nil {
					return err
				}
				return ingressIPMode(ex.Service, corev1.LoadBalancerIPModeProxy)
			},
			"source-ranges.yaml": func(ctx context.Context, run *examplesRun, ex exampleState) error {
				return public(ctx, run, ex, "TCP:80 pool TCP allowed 198.51.100.7/32,203.0.113.0/24")
			},
			"etp-local.yaml": func(ctx context.Context, run *examplesRun, ex exampleState) error {
				want := fmt.Sprintf("TCP:80 pool TCP monitor HTTP /healthz on [%d]", ex.Service.Spec.HealthCheckNodePort)
				return public(ctx, run, ex, want)
			},
			"internal.yaml": func(ctx context.Context, run *examplesRun, ex exampleState) error {
				lb, err := osTree(ctx, api, run, ex, "TCP:80 pool TCP")
				if err != nil {
					return err
				}
				if err := osFloatingIP(ctx, api, ex, false); err != nil {
					return err
				}
				if !isPrivateIP(lb.VipAddress) || !slices.Equal(ex.LB.Addresses, []string{lb.VipAddress}) {
					return fmt.Errorf("addresses %v, want the private VIP %s only", ex.LB.Addresses, lb.VipAddress)
				}
				return nil
			},
			"adopt-existing.yaml": func(ctx context.Context, run *examplesRun, ex exampleState) error {
				if ex.LB.ID != osExampleAdoptedLBID || ex.LB.Name != "existing-lb" {
					return fmt.Errorf("load balancer %s called %s, want the adopted %s called existing-lb", ex.LB.ID, ex.LB.Name, osExampleAdoptedLBID)
				}
				return public(ctx, run, ex, "TCP:80 pool TCP")
			},
		},
	}
}

// newOSClients authenticates against the simulator's Keystone as the CCM
// does, with the simulator's first user.
func newOSClients(t *testing.T, sim *openstacksim.Cloud) osClients {
	t.Helper()
	env := sim.Server.Env(sim.URL())
	provider, err := openstack.AuthenticatedClient(t.Context(), gophercloud.AuthOptions{
		IdentityEndpoint: env["OS_AUTH_URL"], Username: env["OS_USERNAME"], Password: env["OS_PASSWORD"],
		DomainName: env["OS_USER_DOMAIN_NAME"],
		Scope:      &gophercloud.AuthScope{ProjectName: env["OS_PROJECT_NAME"], DomainName: env["OS_PROJECT_DOMAIN_NAME"]},
	})
	if err != nil {
		t.Fatal(err)
	}
	eo := gophercloud.EndpointOpts{Region: env["OS_REGION_NAME"]}
	lb, err := openstack.NewLoadBalancerV2(provider, eo)
	if err != nil {
		t.Fatal(err)
	}
	net, err := openstack.NewNetworkV2(provider, eo)
	if err != nil {
		t.Fatal(err)
	}
	return osClients{lb: lb, net: net}
}

// osTree checks that the example's load balancer is ACTIVE with exactly
// the listeners want describes, in port order, as "<protocol>:<port> pool
// <protocol>" followed, where set, by " X-Forwarded-For", " tls <ref>",
// " allowed <cidrs>" and " monitor <type> <path> on <monitor port>"; each
// pool must have the run's nodes as members on its port's NodePort. It
// returns the load balancer.
func osTree(ctx context.Context, api osClients, run *examplesRun, ex exampleState, want ...string) (*loadbalancers.LoadBalancer, error) {
	lb, err := loadbalancers.Get(ctx, api.lb, ex.LB.ID).Extract()
	if err != nil {
		return nil, err
	}
	if lb.ProvisioningStatus != "ACTIVE" {
		return nil, fmt.Errorf("load balancer %s is %s", lb.ID, lb.ProvisioningStatus)
	}
	if !slices.Equal(ex.LB.Members, run.NodeIDs()) {
		return nil, fmt.Errorf("members %v, want the nodes %v", ex.LB.Members, run.NodeIDs())
	}
	page, err := listeners.List(api.lb, listeners.ListOpts{LoadbalancerID: lb.ID}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	ls, err := listeners.ExtractListeners(page)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(ls, func(a, b listeners.Listener) int { return a.ProtocolPort - b.ProtocolPort })
	var got []string
	for _, l := range ls {
		s, err := osListener(ctx, api, ex.Service, l)
		if err != nil {
			return nil, err
		}
		got = append(got, s)
	}
	if !slices.Equal(got, want) {
		return nil, fmt.Errorf("listeners %q, want %q", got, want)
	}
	return lb, nil
}

// osListener describes a listener as osTree compares them, after checking
// its pool's members' ports.
func osListener(ctx context.Context, api osClients, svc *corev1.Service, l listeners.Listener) (string, error) {
	pool, err := pools.Get(ctx, api.lb, l.DefaultPoolID).Extract()
	if err != nil {
		return "", fmt.Errorf("listener %d's pool: %w", l.ProtocolPort, err)
	}
	s := fmt.Sprintf("%s:%d pool %s", l.Protocol, l.ProtocolPort, pool.Protocol)
	if l.InsertHeaders["X-Forwarded-For"] == "true" {
		s += " X-Forwarded-For"
	}
	if l.DefaultTlsContainerRef != "" {
		s += " tls " + l.DefaultTlsContainerRef
	}
	if len(l.AllowedCIDRs) > 0 {
		s += " allowed " + strings.Join(slices.Sorted(slices.Values(l.AllowedCIDRs)), ",")
	}
	i := slices.IndexFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return int(p.Port) == l.ProtocolPort })
	if i < 0 {
		return "", fmt.Errorf("listener on %d, a port the Service does not have", l.ProtocolPort)
	}
	page, err := pools.ListMembers(api.lb, pool.ID, pools.ListMembersOpts{}).AllPages(ctx)
	if err != nil {
		return "", err
	}
	members, err := pools.ExtractMembers(page)
	if err != nil {
		return "", err
	}
	monitorPorts := map[int]bool{}
	for _, m := range members {
		if m.ProtocolPort != int(svc.Spec.Ports[i].NodePort) {
			return "", fmt.Errorf("member %s on port %d, want the NodePort %d", m.Address, m.ProtocolPort, svc.Spec.Ports[i].NodePort)
		}
		monitorPorts[m.MonitorPort] = true
	}
	if pool.MonitorID != "" {
		mon, err := monitors.Get(ctx, api.lb, pool.MonitorID).Extract()
		if err != nil {
			return "", err
		}
		s += fmt.Sprintf(" monitor %s %s on %v", mon.Type, mon.URLPath, slices.Sorted(maps.Keys(monitorPorts)))
	}
	return s, nil
}

// osFloatingIP checks that the example's VIP port has a floating IP (want)
// or none.
func osFloatingIP(ctx context.Context, api osClients, ex exampleState, want bool) error {
	lb, err := loadbalancers.Get(ctx, api.lb, ex.LB.ID).Extract()
	if err != nil {
		return err
	}
	page, err := floatingips.List(api.net, floatingips.ListOpts{PortID: lb.VipPortID}).AllPages(ctx)
	if err != nil {
		return err
	}
	fips, err := floatingips.ExtractFloatingIPs(page)
	if err != nil {
		return err
	}
	switch {
	case want && len(fips) != 1:
		return fmt.Errorf("%d floating IPs on the VIP port, want 1", len(fips))
	case !want && len(fips) != 0:
		return fmt.Errorf("floating IP %s on the VIP port of an internal load balancer", fips[0].FloatingIP)
	}
	return nil
}
