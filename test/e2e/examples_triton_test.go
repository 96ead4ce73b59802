package e2e

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/joyent/triton-go/compute"
	"github.com/joyent/triton-go/network"
	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
	"github.com/ccmkit/ccmkit/providers/triton/tritonsim"
)

// tritonAdopted is the Moirai appliance
// examples/services/triton/adopt-existing.yaml names: made before the CCM
// starts, as by hand, with a portmap that is not the Service's.
const tritonAdopted = "5f1ad6f0-2c8e-4d36-9a51-7b3c2e8d9a10"

// tritonSeed is the cloud the adopt-existing example finds.
const tritonSeed = `
machines:
- name: legacy-lb
  id: ` + tritonAdopted + `
  image: cloud-load-balancer
  tags: {triton.cns.services: legacy-lb}
  metadata:
    cloud.tritoncompute:loadbalancer: "true"
    cloud.tritoncompute:portmap: "tcp://8080:legacy.example.com:8080"
  firewallEnabled: true
`

// kubeProxyHealthPort is the port of kube-proxy's /healthz, which the
// appliances check for Services of externalTrafficPolicy Cluster (the
// provider's default TRITON_LB_KUBE_PROXY_HEALTH_PORT).
const kubeProxyHealthPort = 10256

func init() { registerExamples("triton", tritonExamples) }

// tritonExamples checks examples/services/triton through triton-go
// pointed at tritonsim. Every example's appliance must be a running
// machine of the cloud-load-balancer image with its firewall on, Moirai's
// loadbalancer metadata and a portmap with one entry per Service port, of
// the example's listener type, to its NodePort on a CNS name that resolves
// to exactly the Nodes (simkit.LoadBalancer.Members), checking /healthz on
// kube-proxy's port (the healthCheckNodePort for externalTrafficPolicy
// Local); one firewall rule of the appliance opens the Service ports (to
// any source, or the loadBalancerSourceRanges); and the Service's ingress
// is the appliance's primary IP with a CNS hostname.
func tritonExamples() examplesCloud {
	var api *compute.ComputeClient
	var fw *network.NetworkClient
	check := func(listener string, specific func(*compute.Instance, exampleState) error) exampleCheck {
		return func(ctx context.Context, run *examplesRun, ex exampleState) error {
			m, err := api.Instances().Get(ctx, &compute.GetInstanceInput{ID: ex.LB.ID})
			if err != nil {
				return err
			}
			errs := []error{
				tritonAppliance(ctx, api, m, ex.Service),
				tritonPortmap(m.Metadata["cloud.tritoncompute:portmap"], listener, ex.Service),
				wantEqual("the nodes the backend resolves to", ex.LB.Members, run.NodeIDs()),
				tritonRule(ctx, fw, m.ID, tritonRuleSources(ex.Service), ex.Service),
			}
			if specific != nil {
				errs = append(errs, specific(m, ex))
			}
			return errors.Join(errs...)
		}
	}
	metadata := func(key, want string) func(*compute.Instance, exampleState) error {
		return func(m *compute.Instance, _ exampleState) error {
			return wantEqual("metadata "+key, m.Metadata[key], want)
		}
	}
	return examplesCloud{
		StartCloud: func(o simkit.Common) simkit.Cloud { return tritonsim.StartCloud(o) },
		Seed: func(t *testing.T, run *examplesRun) {
			sc, err := tritonsim.LoadScenario([]byte(tritonSeed))
			if err != nil {
				t.Fatal(err)
			}
			if err := sc.Apply(run.Cloud.(*tritonsim.Cloud).Server); err != nil {
				t.Fatal(err)
			}
			api, fw = tritonAPI(t, run.Cluster)
		},
		Checks: map[string]exampleCheck{
			"tcp.yaml":            check("tcp", metadata("cloud.tritoncompute:timeouts", "{connect:5000ms}")),
			"http.yaml":           check("http", metadata("cloud.tritoncompute:timeouts", "{server:30000ms}")),
			"https.yaml":          check("https-http", metadata("cloud.tritoncompute:certificate_name", "www.example.com")),
			"proxy-protocol.yaml": check("tcp-proxy-v2", func(_ *compute.Instance, ex exampleState) error { return ingressProxyMode(ex.Service) }),
			"source-ranges.yaml":  check("tcp", nil),
			"etp-local.yaml":      check("tcp", nil),
			"adopt-existing.yaml": check("tcp", func(m *compute.Instance, _ exampleState) error {
				return wantEqual("appliance", m.ID, tritonAdopted)
			}),
		},
	}
}

// tritonAppliance checks that m is a running Moirai appliance with its
// firewall on, and that svc's ingress is its primary IP with a hostname.
func tritonAppliance(ctx context.Context, api *compute.ComputeClient, m *compute.Instance, svc *corev1.Service) error {
	images, err := api.Images().List(ctx, &compute.ListImagesInput{Name: "cloud-load-balancer"})
	if err != nil {
		return err
	}
	var errs []error
	if !slices.ContainsFunc(images, func(i *compute.Image) bool { return i.ID == m.Image }) {
		errs = append(errs, fmt.Errorf("machine %s is of image %s, not cloud-load-balancer", m.ID, m.Image))
	}
	if m.State != "running" || !m.FirewallEnabled {
		errs = append(errs, fmt.Errorf("machine %s is %s with firewall_enabled %t, want running with its firewall on", m.ID, m.State, m.FirewallEnabled))
	}
	errs = append(errs, wantEqual("metadata cloud.tritoncompute:loadbalancer", m.Metadata["cloud.tritoncompute:loadbalancer"], "true"))
	if in := svc.Status.LoadBalancer.Ingress; len(in) != 1 || in[0].IP != m.PrimaryIP || in[0].Hostname == "" {
		errs = append(errs, fmt.Errorf("ingress %+v, want the appliance's IP %s with its CNS hostname", in, m.PrimaryIP))
	}
	return errors.Join(errs...)
}

// portmapEntry is one entry of a Moirai portmap, whose options (in braces)
// hold commas too.
var portmapEntry = regexp.MustCompile(`[a-z0-9+-]+://[^{,]+(\{[^}]*\})?`)

// tritonPortmap checks that portmap has one entry per Service port, in
// port order: listener://<port>:<backend>:<nodePort> with a check of
// /healthz on the health port.
func tritonPortmap(portmap, listener string, svc *corev1.Service) error {
	health := int32(kubeProxyHealthPort)
	if svc.Spec.HealthCheckNodePort != 0 {
		health = svc.Spec.HealthCheckNodePort
	}
	entries := portmapEntry.FindAllString(portmap, -1)
	if len(entries) != len(svc.Spec.Ports) {
		return fmt.Errorf("portmap %q, want one entry per Service port", portmap)
	}
	ports := slices.Clone(svc.Spec.Ports)
	slices.SortFunc(ports, func(a, b corev1.ServicePort) int { return int(a.Port - b.Port) })
	for i, p := range ports {
		re := regexp.MustCompile(fmt.Sprintf(`^%s://%d:[a-z0-9.-]+:%d\{check:/healthz,port:%d\}$`, regexp.QuoteMeta(listener), p.Port, p.NodePort, health))
		if !re.MatchString(entries[i]) {
			return fmt.Errorf("portmap entry %q does not match %s", entries[i], re)
		}
	}
	return nil
}

// tritonRuleSources is how the appliance's rule names its sources: any,
// or the Service's loadBalancerSourceRanges as subnets, sorted.
func tritonRuleSources(svc *corev1.Service) string {
	ranges := slices.Sorted(slices.Values(svc.Spec.LoadBalancerSourceRanges))
	switch len(ranges) {
	case 0:
		return "any"
	case 1:
		return "subnet " + ranges[0]
	}
	return "(subnet " + strings.Join(ranges, " OR subnet ") + ")"
}

// tritonRule checks that the appliance has exactly one rule of the CCM's,
// enabled, opening the Service's ports from sources.
func tritonRule(ctx context.Context, fw *network.NetworkClient, machineID, sources string, svc *corev1.Service) error {
	rules, err := fw.Firewall().ListRules(ctx, &network.ListRulesInput{})
	if err != nil {
		return err
	}
	var ports []string
	for _, p := range svc.Spec.Ports {
		ports = append(ports, "PORT "+strconv.Itoa(int(p.Port)))
	}
	want := "FROM " + sources + " TO vm " + machineID + " ALLOW tcp " + strings.Join(ports, " AND ")
	var got []string
	for _, r := range rules {
		if r.Description == "k8s-ccm:ccmkit:lb:"+machineID && r.Enabled {
			got = append(got, r.Rule)
		}
	}
	return wantEqual("firewall rules of appliance "+machineID, got, []string{want})
}
