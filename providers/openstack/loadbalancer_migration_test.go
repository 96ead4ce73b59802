package openstack_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"

	ccmopenstack "github.com/ccmkit/ccmkit/providers/openstack"
	"github.com/ccmkit/ccmkit/providers/openstack/openstacksim"
)

// TestLoadBalancerMigrationFromOCCM is a switch from OCCM: the cloud.conf
// OCCM ran with (its key names, and sections and keys ccmkit only
// accepts), and a Service as OCCM left it (its annotations, the ID of the
// Octavia load balancer OCCM made, with its floating IP). The CCM adopts
// the load balancer as it is: no create, no delete, no write at all, and
// the Service keeps its address.
func TestLoadBalancerMigrationFromOCCM(t *testing.T) {
	occmConf := func(_ *openstacksim.Server, conf string) string {
		conf = strings.NewReplacer("project-name", "tenant-name", "project-domain-name", "tenant-domain-name").Replace(conf)
		return conf + `
[Networking]
internal-network-name = private

[Metadata]
search-order = configDrive,metadataService

[BlockStorage]
bs-version = v3
ignore-volume-az = true
`
	}
	f := newLBFixture(t, "use-octavia = true\nlb-version = v2\nlb-method = ROUND_ROBIN\ncreate-monitor = false\nmanage-security-groups = false\n", occmConf)
	name := "kube_service_" + lbCluster + "_default_web"
	existing, err := f.sim.AddLoadBalancer(openstacksim.ScenarioLoadBalancer{
		Name: name, Tags: []string{name},
		Listeners: []openstacksim.ScenarioListener{{Protocol: "TCP", Port: 80, Pool: &openstacksim.ScenarioPool{MemberPort: 30080, Members: []string{"node-a", "node-b"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	fip := occmFloatingIP(t, f.sim, existing.VipPortID)

	svc := f.Service(t, "web", map[string]string{
		ccmopenstack.AnnotationLoadBalancerID:                         existing.ID,
		ccmopenstack.AnnotationPrefix + "keep-floatingip":             "true",
		ccmopenstack.AnnotationPrefix + "load-balancer-address":       fip,
		"service.beta.kubernetes.io/openstack-internal-load-balancer": "false",
	})
	mark := f.mark()
	status := f.EnsureReady(t, svc)
	if got := f.writes(mark); len(got) != 0 {
		t.Errorf("adopting OCCM's load balancer wrote %v, want nothing", got)
	}
	if got := ingressIP(t, status); got != fip {
		t.Errorf("ingress IP %s, want OCCM's floating IP %s", got, fip)
	}
	if got := f.OnlyLoadBalancer(t); got.ID != existing.ID {
		t.Errorf("load balancer %s, want OCCM's %s", got.ID, existing.ID)
	}
	for _, e := range f.Drain() {
		if strings.HasPrefix(e, "Warning") {
			t.Errorf("event %q, want no warning for OCCM's annotations", e)
		}
	}
}

// occmFloatingIP gives the VIP port a floating IP from the default
// floating network, as OCCM did, through the real client.
func occmFloatingIP(t *testing.T, sim *openstacksim.Server, portID string) string {
	t.Helper()
	env := sim.Env(sim.URL())
	ctx := context.Background()
	provider, err := openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{
		IdentityEndpoint: env["OS_AUTH_URL"], Username: env["OS_USERNAME"], Password: env["OS_PASSWORD"],
		DomainName: env["OS_USER_DOMAIN_NAME"],
		Scope:      &gophercloud.AuthScope{ProjectName: env["OS_PROJECT_NAME"], DomainName: env["OS_PROJECT_DOMAIN_NAME"]},
	})
	if err != nil {
		t.Fatal(err)
	}
	net, err := openstack.NewNetworkV2(provider, gophercloud.EndpointOpts{Region: env["OS_REGION_NAME"]})
	if err != nil {
		t.Fatal(err)
	}
	ip, err := floatingips.Create(ctx, net, floatingips.CreateOpts{
		FloatingNetworkID: sim.Defaults().FloatingNetworkID, PortID: portID,
	}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	return ip.FloatingIP
}
