package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/ccmkit/ccmkit/framework/frameworktest"
	"github.com/ccmkit/ccmkit/internal/cluster"
)

// testTritonAsShipped runs the real triton-cloud-controller-manager, configured as
// the shipped Deployment configures it from the Secret that its own
// make-secret printed, against a real kube-apiserver and tritonsim: a
// Service gets a Moirai load balancer (an IP and a CNS hostname), another
// (annotated for CNS) gets CNS service entries on its nodes' tags, which the
// simulated CNS resolves to exactly the Ready target nodes; a node leaving
// loses its entry, and deleting the Services leaves nothing behind. The
// firewall and metrics controllers run as shipped: see testTritonFirewall
// and testTritonCMON.
func testTritonAsShipped(t *testing.T, p cluster.Provider) {
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
	env := frameworktest.MountedSettings(t, filepath.Join(root, "examples/manifests/triton"), secret).Env
	// A setting, not a credential: the firewall controller's resync, short
	// enough to show an idle sync writes nothing.
	env["TRITON_FIREWALL_RESYNC"] = "2s"
	tritonControllersOff(t, c, env)
	if _, err := c.StartCCMWithOnlyEnv("ccm", env); err != nil {
		t.Fatal(err)
	}
	ids := addNodes(t, c, "node", 3)

	moirai := createLBService(t, c, "web", 80)
	svc := waitForIngress(t, c, moirai.Name)
	if ing := svc.Status.LoadBalancer.Ingress; len(ing) != 1 || ing[0].IP == "" || ing[0].Hostname == "" {
		t.Errorf("Moirai Service ingress = %+v, want an IP and a hostname", ing)
	}

	testTritonCMON(t, c, ids)
	userRule := testTritonFirewall(t, c, svc)
	testTritonCNS(t, c, ids)

	if err := c.Kube.CoreV1().Services(c.Namespace).Delete(t.Context(), moirai.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 90*time.Second, "no load-balancer machine left", func(ctx context.Context) (bool, error) {
		_, err := getService(ctx, c, moirai.Name)
		return apierrors.IsNotFound(err) && len(c.Sim.LoadBalancers()) == 0, nil
	})
	tritonRulesAfterDelete(t, c, userRule)
	noWarnings(t, c)
}

// testTritonCNS: a Service in CNS mode.
func testTritonCNS(t *testing.T, c *cluster.Cluster, ids map[string]string) {
	svc := createLBService(t, c, "dns", 8443)
	// A patch: the service controller is adding its finalizer meanwhile.
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"cns"}}}`, tritonModeAnnotation)
	if _, err := c.Kube.CoreV1().Services(c.Namespace).Patch(t.Context(), svc.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	svc = waitForIngress(t, c, svc.Name)
	host := svc.Status.LoadBalancer.Ingress[0].Hostname
	if host == "" || svc.Status.LoadBalancer.Ingress[0].IP != "" {
		t.Fatalf("CNS Service ingress = %+v, want a hostname only", svc.Status.LoadBalancer.Ingress)
	}
	label, _, _ := strings.Cut(host, ".")
	entry := fmt.Sprintf("%s:%d", label, svc.Spec.Ports[0].NodePort)
	ready := machinesExcept(ids)
	eventually(t, 60*time.Second, "every node tagged "+entry+" and "+host+" resolving to them", func(ctx context.Context) (bool, error) {
		return cnsState(ctx, c, machinesExcept(ids), entry, host, ready)
	})

	// A node that is not Ready is drained: out of the name, entry kept.
	if err := c.Kubelet("node-0").NotReady(t.Context()); err != nil {
		t.Fatal(err)
	}
	ready = machinesExcept(ids, "node-0")
	eventually(t, 60*time.Second, host+" resolving to the Ready nodes only", func(ctx context.Context) (bool, error) {
		return cnsState(ctx, c, machinesExcept(ids), entry, host, ready)
	})

	// A node that leaves the Service's nodes loses its entry.
	node, err := c.Kube.CoreV1().Nodes().Get(t.Context(), "node-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Labels["node.kubernetes.io/exclude-from-external-load-balancers"] = "true"
	if _, err := c.Kube.CoreV1().Nodes().Update(t.Context(), node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	targets := machinesExcept(ids, "node-1")
	ready = machinesExcept(ids, "node-0", "node-1")
	eventually(t, 60*time.Second, "node-1's entry removed", func(ctx context.Context) (bool, error) {
		return cnsState(ctx, c, targets, entry, host, ready)
	})

	if err := c.Kube.CoreV1().Services(c.Namespace).Delete(t.Context(), svc.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "no CNS entry left on any node", func(ctx context.Context) (bool, error) {
		_, err := getService(ctx, c, svc.Name)
		if !apierrors.IsNotFound(err) {
			return false, err
		}
		return cnsState(ctx, c, nil, entry, host, nil)
	})
}

// tritonModeAnnotation chooses a Service's load-balancer mode.
const tritonModeAnnotation = "triton.tritondatacenter.com/load-balancer-mode"

// machinesExcept returns the set of the machine IDs of ids, without the
// nodes named.
func machinesExcept(ids map[string]string, without ...string) map[string]bool {
	out := map[string]bool{}
	for name, id := range ids {
		if !slices.Contains(without, name) {
			out[id] = true
		}
	}
	return out
}

// cnsState reports whether exactly the machines tagged hold entry in their
// triton.cns.services tag, and host resolves to exactly the IPs of the
// machines resolving.
func cnsState(ctx context.Context, c *cluster.Cluster, tagged map[string]bool, entry, host string, resolving map[string]bool) (bool, error) {
	st, err := simState(ctx, c)
	if err != nil {
		return false, err
	}
	var wantIPs []string
	for _, m := range st.Machines {
		services, _ := m.Tags["triton.cns.services"].(string)
		has := slices.Contains(strings.Split(services, ","), entry)
		if has != tagged[m.ID] {
			return false, fmt.Errorf("machine %s (%s): triton.cns.services = %q", m.Name, m.ID, services)
		}
		if resolving[m.ID] {
			wantIPs = append(wantIPs, m.IPs...)
		}
	}
	got, err := resolve(ctx, c, host)
	if err != nil {
		return false, err
	}
	slices.Sort(got)
	slices.Sort(wantIPs)
	if !slices.Equal(got, wantIPs) {
		return false, fmt.Errorf("%s resolves to %v, want %v", host, got, wantIPs)
	}
	return true, nil
}

// tritonState is the part of tritonsim's /_sim/state this test reads.
type tritonState struct {
	Machines []struct {
		ID   string         `json:"id"`
		Name string         `json:"name"`
		IPs  []string       `json:"ips"`
		Tags map[string]any `json:"tags"`
	} `json:"machines"`
}

func simState(ctx context.Context, c *cluster.Cluster) (*tritonState, error) {
	var st tritonState
	return &st, simGet(ctx, c.Sim.URL()+"/_sim/state", &st)
}

// resolve asks tritonsim's CNS view which IPs host resolves to.
func resolve(ctx context.Context, c *cluster.Cluster, host string) ([]string, error) {
	var out struct {
		IPs []string `json:"ips"`
	}
	err := simGet(ctx, c.Sim.URL()+"/_sim/cns?name="+url.QueryEscape(host), &out)
	return out.IPs, err
}

func simGet(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// makeSecret runs the CCM binary's make-secret with the simulator's
// credentials as a user would give them, and returns the Secret it printed.
// Nothing secret may reach its stderr.
func makeSecret(t *testing.T, c *cluster.Cluster) *corev1.Secret {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), c.CCMBinary(), "make-secret", "-v=10")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
	for k, v := range c.Sim.Env() {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("make-secret: %v\n%s", err, stderr.String())
	}
	for k, v := range c.Sim.Env() {
		if strings.Contains(k, "KEY_MATERIAL") && strings.Contains(stderr.String(), strings.TrimSpace(v)[40:80]) {
			t.Fatalf("make-secret's stderr holds %s", k)
		}
	}
	var s corev1.Secret
	if err := yaml.UnmarshalStrict(stdout.Bytes(), &s); err != nil {
		t.Fatalf("make-secret printed no Secret: %v\n%s", err, stdout.String())
	}
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	for k, v := range s.StringData {
		s.Data[k] = []byte(v)
	}
	s.StringData = nil
	return &s
}
