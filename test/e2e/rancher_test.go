package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	rancher "github.com/rancher/go-rancher/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/internal/cluster"
)

// rancherLBStack is the stack the existing CCM kept its load balancers in,
// and ccmkit keeps them in.
const rancherLBStack = "kubernetes-loadbalancers"

// testRancherAsShipped runs the real rancher-cloud-controller-manager, configured as
// the shipped Deployment configures it from the Secret that its own
// make-secret printed, at -v=10, against a real kube-apiserver and
// ranchersim, and reads the simulated Cattle API back through go-rancher as
// any client would. A UDP Service gets a loadBalancerService named as the
// existing CCM named it, in the kubernetes-loadbalancers stack, with a udp
// port rule to the NodePort on one externalService holding every node's
// agent IP, and the Service's status lists the load balancer's public
// endpoints. A port change updates that load balancer in place: the same
// ID, the same endpoint IPs, nothing removed. No Warning Event is raised,
// and neither the secret key nor the Basic credential built from it reaches
// the log.
func testRancherAsShipped(t *testing.T, p cluster.Provider) {
	c := startCluster(t, p, cluster.SimOptions{})
	secret := makeSecret(t, c)
	if _, err := c.Kube.CoreV1().Secrets(secret.Namespace).Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Read back, as the kubelet would mount it.
	secret, err := c.Kube.CoreV1().Secrets(secret.Namespace).Get(t.Context(), secret.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	root, err := cluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	env := frameworktest.MountedSettings(t, filepath.Join(root, "examples/manifests/rancher"), secret).Env
	ccm, err := c.StartCCMWithOnlyEnv("ccm", env, "-v=10")
	if err != nil {
		t.Fatal(err)
	}
	ids := addNodes(t, c, "node", 2)
	api := cattleClient(t, c)
	agentIPs := hostAgentIPs(t, api, ids)

	svc := createUDPService(t, c, "dns", 53)
	svc = waitForIngress(t, c, svc.Name)
	name := "lb-" + cloudprovider.DefaultLoadBalancerName(svc)
	first := waitForRancherLB(t, c, api, name, svc, agentIPs)

	// A port change: the same load balancer, updated in place.
	patch := fmt.Sprintf(`{"spec":{"ports":[{"name":"dns","protocol":"UDP","port":5353,"targetPort":5353,"nodePort":%d}]}}`,
		svc.Spec.Ports[0].NodePort)
	svc, err = c.Kube.CoreV1().Services(c.Namespace).Patch(t.Context(), svc.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	second := waitForRancherLB(t, c, api, name, svc, agentIPs)
	if second.Id != first.Id {
		t.Errorf("load balancer %s replaced by %s on a port change, want it updated in place", first.Id, second.Id)
	}
	if a, b := endpointIPs(first), endpointIPs(second); !slices.Equal(a, b) {
		t.Errorf("public endpoint IPs %v became %v on a port change", a, b)
	}
	noRemovedLBs(t, api)

	noWarnings(t, c)
	access, secretKey := c.Sim.Env()["CATTLE_ACCESS_KEY"], c.Sim.Env()["CATTLE_SECRET_KEY"]
	basic := base64.StdEncoding.EncodeToString([]byte(access + ":" + secretKey))
	if log := ccm.Log(); strings.Contains(log, secretKey) || strings.Contains(log, basic) {
		t.Error("the CCM log at -v=10 holds the Cattle secret key")
	}
}

// createUDPService creates a LoadBalancer Service with one UDP port.
func createUDPService(t *testing.T, c *cluster.Cluster, name string, port int32) *corev1.Service {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.Namespace},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeLoadBalancer,
			Selector: map[string]string{"app": name},
			Ports:    []corev1.ServicePort{{Name: name, Protocol: corev1.ProtocolUDP, Port: port, TargetPort: intstr.FromInt32(port)}},
		},
	}
	svc, err := c.Kube.CoreV1().Services(c.Namespace).Create(t.Context(), svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// cattleClient is a go-rancher client of the simulated Cattle API, with the
// credentials the CCM was given.
func cattleClient(t *testing.T, c *cluster.Cluster) *rancher.RancherClient {
	t.Helper()
	env := c.Sim.Env()
	api, err := rancher.NewRancherClient(&rancher.ClientOpts{
		Url: env["CATTLE_URL"], AccessKey: env["CATTLE_ACCESS_KEY"], SecretKey: env["CATTLE_SECRET_KEY"], Timeout: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	return api
}

// hostAgentIPs returns the agent IPs of the hosts whose UUIDs ids holds,
// sorted, as the cloud lists them.
func hostAgentIPs(t *testing.T, api *rancher.RancherClient, ids map[string]string) []string {
	t.Helper()
	hosts, err := api.Host.List(&rancher.ListOpts{Filters: map[string]any{"removed_null": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	var ips []string
	for _, h := range hosts.Data {
		if slices.Contains(sortedValues(ids), h.Uuid) {
			ips = append(ips, h.AgentIpAddress)
		}
	}
	if len(ips) != len(ids) {
		t.Fatalf("the cloud lists %d of the %d nodes' hosts", len(ips), len(ids))
	}
	slices.Sort(ips)
	return ips
}

// waitForRancherLB waits until the cloud holds exactly one load balancer,
// called name, in the kubernetes-loadbalancers stack, active, forwarding
// each of the Service's ports to its NodePort (its protocol in lower case)
// on one external service that holds exactly ips, and until the Service's
// status lists exactly the load balancer's public endpoint IPs. It returns
// the load balancer.
func waitForRancherLB(t *testing.T, c *cluster.Cluster, api *rancher.RancherClient, name string, svc *corev1.Service, ips []string) *rancher.LoadBalancerService {
	t.Helper()
	var lb *rancher.LoadBalancerService
	eventually(t, 90*time.Second, "load balancer "+name+" as the Service says", func(ctx context.Context) (bool, error) {
		var err error
		if lb, err = rancherLB(api, name); err != nil {
			return false, err
		}
		if err := rancherLBMatches(api, lb, svc, ips); err != nil {
			return false, err
		}
		s, err := getService(ctx, c, svc.Name)
		if err != nil {
			return false, err
		}
		var ingress []string
		for _, in := range s.Status.LoadBalancer.Ingress {
			ingress = append(ingress, in.IP)
		}
		slices.Sort(ingress)
		if want := endpointIPs(lb); len(want) == 0 || !slices.Equal(ingress, want) {
			return false, fmt.Errorf("Service ingress %v, load balancer public endpoints %v", ingress, want)
		}
		return true, nil
	})
	return lb
}

// rancherLB returns the one live load balancer of the cloud, which must be
// called name and be in the load-balancer stack.
func rancherLB(api *rancher.RancherClient, name string) (*rancher.LoadBalancerService, error) {
	lbs, err := api.LoadBalancerService.List(&rancher.ListOpts{Filters: map[string]any{"removed_null": "1"}})
	if err != nil {
		return nil, err
	}
	if len(lbs.Data) != 1 || lbs.Data[0].Name != name {
		var names []string
		for _, lb := range lbs.Data {
			names = append(names, lb.Name)
		}
		return nil, fmt.Errorf("load balancers %v, want just %s", names, name)
	}
	lb := &lbs.Data[0]
	stack, err := api.Stack.ById(lb.StackId)
	if err != nil {
		return nil, err
	}
	if stack == nil || stack.Name != rancherLBStack {
		return nil, fmt.Errorf("load balancer %s is in stack %s, not %s", lb.Id, lb.StackId, rancherLBStack)
	}
	return lb, nil
}

// rancherLBMatches reports how lb differs from what svc asks for with the
// nodes' agent IPs ips: active, each Service port published on the hosts
// with its protocol (<port>:<port>/<proto>, as the existing CCM published
// them) and one port rule per Service port to its NodePort with its
// protocol, all on one external service holding ips.
func rancherLBMatches(api *rancher.RancherClient, lb *rancher.LoadBalancerService, svc *corev1.Service, ips []string) error {
	if lb.State != "active" {
		return fmt.Errorf("load balancer %s is %s", lb.Id, lb.State)
	}
	if lb.LbConfig == nil || len(lb.LbConfig.PortRules) != len(svc.Spec.Ports) {
		return fmt.Errorf("load balancer %s port rules %+v, want one per Service port", lb.Id, lb.LbConfig)
	}
	backend := lb.LbConfig.PortRules[0].ServiceId
	for _, sp := range svc.Spec.Ports {
		proto := strings.ToLower(string(sp.Protocol))
		if published := fmt.Sprintf("%d:%d/%s", sp.Port, sp.Port, proto); lb.LaunchConfig == nil || !slices.Contains(lb.LaunchConfig.Ports, published) {
			return fmt.Errorf("load balancer %s does not publish %s: %+v", lb.Id, published, lb.LaunchConfig)
		}
		if !slices.ContainsFunc(lb.LbConfig.PortRules, func(r rancher.PortRule) bool {
			return r.SourcePort == int64(sp.Port) && r.TargetPort == int64(sp.NodePort) && r.Protocol == proto && r.ServiceId == backend
		}) {
			return fmt.Errorf("load balancer %s has no %s rule %d -> %d on %s: %+v", lb.Id, proto, sp.Port, sp.NodePort, backend, lb.LbConfig.PortRules)
		}
	}
	ext, err := api.ExternalService.ById(backend)
	if err != nil {
		return err
	}
	if ext == nil {
		return fmt.Errorf("the port rules' external service %s does not exist", backend)
	}
	got := slices.Sorted(slices.Values(ext.ExternalIpAddresses))
	if !slices.Equal(got, ips) {
		return fmt.Errorf("external service %s holds %v, want the nodes' %v", ext.Id, got, ips)
	}
	return nil
}

// endpointIPs are the distinct IPs of lb's public endpoints, sorted.
func endpointIPs(lb *rancher.LoadBalancerService) []string {
	var ips []string
	for _, ep := range lb.PublicEndpoints {
		ips = append(ips, ep.IpAddress)
	}
	slices.Sort(ips)
	return slices.Compact(ips)
}

// noRemovedLBs fails t if the cloud holds a removed (or removing) load
// balancer: one was deleted rather than updated.
func noRemovedLBs(t *testing.T, api *rancher.RancherClient) {
	t.Helper()
	lbs, err := api.LoadBalancerService.List(&rancher.ListOpts{Filters: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, lb := range lbs.Data {
		if lb.Removed != "" || lb.State == "removing" || lb.State == "removed" {
			t.Errorf("load balancer %s (%s) was removed: %s", lb.Id, lb.Name, lb.State)
		}
	}
}
