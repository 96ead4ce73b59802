package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	serializerjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	cloudproviderapi "k8s.io/cloud-provider/api"
	"k8s.io/klog/v2/ktesting"

	"github.com/ccmkit/ccmkit/examples/skeleton/skeletonsim"
	"github.com/ccmkit/ccmkit/framework/frameworktest/kubetest"
	"github.com/ccmkit/ccmkit/internal/cluster"
)

const shutdownTaint = "node.cloudprovider.kubernetes.io/shutdown"

// shippedRBAC is the RBAC the skeleton CCM ships, relative to this package.
const shippedRBAC = "../../examples/manifests/skeleton/rbac.yaml"

// TestSkeletonCCMWithShippedRBAC is the end-to-end smoke test of the
// shipped RBAC: the real skeleton-cloud-controller-manager binary, running
// as the kube-system/cloud-controller-manager ServiceAccount with exactly
// examples/manifests/skeleton/rbac.yaml, against a real kube-apiserver and
// the simulated cloud, drives every upstream controller once (node
// initialization, route, LoadBalancer Service and its deletion, shutdown
// taint and Node deletion), keeps its leader lease, serves /metrics to a
// delegated-authenticated token, and never logs "forbidden".
func TestSkeletonCCMWithShippedRBAC(t *testing.T) {
	t.Parallel() // on a control plane of its own, beside TestE2E's
	requireBinaries(t)
	log := runSkeletonCCMScenario(t, shippedRBAC)
	var forbidden []string
	for line := range strings.Lines(log) {
		if strings.Contains(strings.ToLower(line), "forbidden") {
			forbidden = append(forbidden, line)
		}
	}
	if len(forbidden) > 0 {
		t.Errorf("the CCM was refused with the shipped RBAC:\n%s", strings.Join(forbidden, ""))
	}
}

// runSkeletonCCMScenario runs the scenario with the given RBAC manifest and
// returns the CCM's log.
func runSkeletonCCMScenario(t *testing.T, rbac string) string {
	_, ctx := ktesting.NewTestContext(t)
	bin := buildSkeletonCCM(t)
	cp := kubetest.StartControlPlane(t, kubetest.ControlPlaneOptions{RBACManifests: []string{rbac}})
	admin := cp.AdminClient()
	sim := skeletonsim.NewServer(t, skeletonsim.Options{ProvisioningReads: -1})
	inst := sim.AddInstance(skeletonsim.Instance{
		Name: "node-1", Status: skeletonsim.StatusRunning, PrivateIPv4: "10.0.0.1", PublicIPv4: "203.0.113.1",
		Type: "sk-2", Region: "sk-1", Zone: "sk-1a",
	})
	kubelet, err := kubetest.StartKubelet(ctx, admin, kubetest.NodeSpec{Name: "node-1", PodCIDR: "10.244.1.0/24"}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kubelet.Stop)
	// node-2 stays Ready: when node-1's instance is deleted, the cloud
	// still finds a peer's, which the node-deletion guard asks for (with
	// the shipped RBAC too: it lists Nodes and raises Events).
	sim.AddInstance(skeletonsim.Instance{
		Name: "node-2", Status: skeletonsim.StatusRunning, PrivateIPv4: "10.0.0.2", PublicIPv4: "203.0.113.2",
		Type: "sk-2", Region: "sk-1", Zone: "sk-1a",
	})
	peer, err := kubetest.StartKubelet(ctx, admin, kubetest.NodeSpec{Name: "node-2", PodCIDR: "10.244.2.0/24"}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(peer.Stop)

	port := freePort(t)
	logPath := startCCM(t, bin, cp.CCMKubeconfig(), port, sim)

	t.Run("node initialized", func(t *testing.T) {
		eventually(t, 30*time.Second, "node-1 is initialized", func(ctx context.Context) (bool, error) {
			n, err := admin.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return n.Spec.ProviderID == "skeleton://"+inst.ID && !hasTaint(n, cloudproviderapi.TaintExternalCloudProvider) &&
				n.Labels[corev1.LabelTopologyZone] == "sk-1a" && n.Labels[corev1.LabelTopologyRegion] == "sk-1" &&
				n.Labels[corev1.LabelInstanceTypeStable] == "sk-2" && hasAddress(n, "10.0.0.1"), nil
		})
	})
	t.Run("route created", func(t *testing.T) {
		eventually(t, 30*time.Second, "a route to node-1's pod CIDR", func(ctx context.Context) (bool, error) {
			routed := slices.ContainsFunc(sim.Routes(), func(r skeletonsim.Route) bool {
				return r.DestinationCIDR == "10.244.1.0/24" && r.TargetInstanceID == inst.ID
			})
			n, err := admin.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{})
			return routed && condition(n, corev1.NodeNetworkUnavailable).Status == corev1.ConditionFalse, err
		})
	})
	t.Run("load balancer", func(t *testing.T) { testCCMLoadBalancer(t, admin, sim) })
	t.Run("metrics with a delegated token", func(t *testing.T) { _ = testCCMMetrics(t, admin, port) })
	t.Run("node of a stopped instance tainted", func(t *testing.T) {
		if err := kubelet.NotReady(ctx); err != nil {
			t.Fatal(err)
		}
		sim.SetInstanceStatus(inst.ID, skeletonsim.StatusStopped)
		eventually(t, 30*time.Second, "node-1 has the shutdown taint", func(ctx context.Context) (bool, error) {
			n, err := admin.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{})
			return err == nil && hasTaint(n, shutdownTaint), err
		})
	})
	t.Run("node of a deleted instance deleted", func(t *testing.T) {
		sim.DeleteInstance(inst.ID)
		eventually(t, 30*time.Second, "node-1 is deleted", func(ctx context.Context) (bool, error) {
			_, err := admin.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{})
			return gone(err)
		})
	})
	t.Run("leader lease renewed", func(t *testing.T) {
		eventually(t, 30*time.Second, "the leader renewed its lease", func(ctx context.Context) (bool, error) {
			l, err := admin.CoordinationV1().Leases("kube-system").Get(ctx, "cloud-controller-manager", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return l.Spec.HolderIdentity != nil && l.Spec.RenewTime != nil && l.Spec.AcquireTime != nil &&
				l.Spec.RenewTime.After(l.Spec.AcquireTime.Time), nil
		})
	})
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func testCCMLoadBalancer(t *testing.T, c kubernetes.Interface, sim *skeletonsim.Server) {
	ctx := t.Context()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeLoadBalancer,
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}},
		},
	}
	if _, err := c.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the Service has a load balancer", func(ctx context.Context) (bool, error) {
		s, err := c.CoreV1().Services("default").Get(ctx, "web", metav1.GetOptions{})
		return err == nil && len(s.Status.LoadBalancer.Ingress) > 0 && len(sim.LoadBalancers()) == 1, err
	})
	if err := c.CoreV1().Services("default").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the Service and its load balancer are gone", func(ctx context.Context) (bool, error) {
		_, err := c.CoreV1().Services("default").Get(ctx, "web", metav1.GetOptions{})
		if ok, err := gone(err); !ok || err != nil {
			return false, err
		}
		return len(sim.LoadBalancers()) == 0, nil
	})
}

// testCCMMetrics scrapes /metrics with a ServiceAccount token, as
// Prometheus would: the CCM reviews the token (TokenReview) and asks
// whether it may read /metrics (SubjectAccessReview). It returns the token.
func testCCMMetrics(t *testing.T, c kubernetes.Interface, port int) string {
	ctx := t.Context()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "prometheus", Namespace: "default"}}
	// Made once per control plane: the scenarios of a provider share one.
	if _, err := c.CoreV1().ServiceAccounts("default").Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "prometheus", Namespace: "default"}},
	}
	if _, err := c.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := c.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	expiry := int64(600)
	tok, err := c.CoreV1().ServiceAccounts("default").CreateToken(ctx, "prometheus",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the CCM's self-signed serving cert
	}}
	url := fmt.Sprintf("https://127.0.0.1:%d/metrics", port)
	var last string
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		req.Header.Set("Authorization", "Bearer "+tok.Status.Token)
		resp, err := client.Do(req)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		defer func() { _ = resp.Body.Close() }()
		last = resp.Status
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("GET %s with a ServiceAccount token: %v; last answer: %s", url, err, last)
	}
	return tok.Status.Token
}

func hasAddress(n *corev1.Node, ip string) bool {
	return slices.ContainsFunc(n.Status.Addresses, func(a corev1.NodeAddress) bool { return a.Address == ip })
}

// buildSkeletonCCM builds cmd/skeleton-cloud-controller-manager as the
// rest of the suite builds the CCMs (cluster.BuildCCM).
func buildSkeletonCCM(t *testing.T) string {
	t.Helper()
	p, ok := cluster.Lookup("skeleton")
	if !ok {
		t.Fatal("no skeleton provider in cluster.Providers")
	}
	root, err := cluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := cluster.BuildCCM(t.Context(), root, t.TempDir(), p)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// startCCM runs the CCM as its Deployment does, but against the test
// cluster and cloud, with short periods so the controllers act quickly. It
// is stopped (SIGTERM, then SIGKILL after 10s) by t.Cleanup; its log is
// printed when t fails.
func startCCM(t *testing.T, bin, kubeconfig string, port int, sim *skeletonsim.Server) string {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "ccm.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin,
		"--kubeconfig="+kubeconfig,
		// In a Pod these default to the in-cluster (ServiceAccount) config.
		"--authentication-kubeconfig="+kubeconfig,
		"--authorization-kubeconfig="+kubeconfig,
		"--cloud-provider=skeleton",
		"--cluster-name=e2e",
		"--cluster-cidr=10.244.0.0/16",
		"--configure-cloud-routes=true",
		"--leader-elect=true",
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(port),
		"--node-monitor-period=1s",
		"--route-reconciliation-period=2s",
		// ccmkit's instance cache (30s by default) would delay noticing the
		// deleted instance.
		"--instance-cache-ttl=1s",
		"-v=2",
	)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(),
		"SKELETON_API_URL=" + sim.URL(), "SKELETON_TOKEN=" + sim.Token(),
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		_ = logFile.Close()
		if t.Failed() {
			tail, _ := os.ReadFile(logPath)
			t.Logf("---- CCM log ----\n%s", lastLines(string(tail), 200))
		}
	})
	return logPath
}

func lastLines(s string, n int) string {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// TestManifestsValidate has the API server validate every shipped
// manifest of every cloud (strict field validation, server-side dry run), so a
// misspelt field fails here rather than in a user's cluster.
func TestManifestsValidate(t *testing.T) {
	t.Parallel() // on a control plane of its own (no RBAC), beside TestE2E's
	dirs, err := filepath.Glob("../../examples/manifests/*")
	if err != nil || len(dirs) < 2 {
		t.Fatalf("manifest directories: %v %v", dirs, err)
	}
	objs := map[string][]runtime.Object{}
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil || len(files) < 3 {
			t.Fatalf("%s: want rbac, deployment and secret manifests, got %v %v", dir, files, err)
		}
		for _, f := range files {
			objs[filepath.Join(filepath.Base(dir), filepath.Base(f))] = decodeYAMLFile(t, f)
		}
	}
	requireBinaries(t)
	cp := kubetest.StartControlPlane(t, kubetest.ControlPlaneOptions{})
	for file, list := range objs {
		for _, obj := range list {
			if err := dryRunCreate(t.Context(), cp.AdminClient(), obj); err != nil {
				t.Errorf("%s: %v", file, err)
			}
		}
	}
}

// dryRunCreate has the API server validate obj strictly without storing it.
func dryRunCreate(ctx context.Context, c kubernetes.Interface, obj runtime.Object) error {
	opts := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict}
	var err error
	switch o := obj.(type) {
	case *appsv1.Deployment:
		_, err = c.AppsV1().Deployments(o.Namespace).Create(ctx, o, opts)
	case *appsv1.DaemonSet:
		_, err = c.AppsV1().DaemonSets(o.Namespace).Create(ctx, o, opts)
	case *corev1.Secret:
		_, err = c.CoreV1().Secrets(o.Namespace).Create(ctx, o, opts)
	case *corev1.ServiceAccount:
		_, err = c.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, opts)
	case *rbacv1.ClusterRole:
		_, err = c.RbacV1().ClusterRoles().Create(ctx, o, opts)
	case *rbacv1.ClusterRoleBinding:
		_, err = c.RbacV1().ClusterRoleBindings().Create(ctx, o, opts)
	case *rbacv1.Role:
		_, err = c.RbacV1().Roles(o.Namespace).Create(ctx, o, opts)
	case *rbacv1.RoleBinding:
		_, err = c.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, opts)
	default:
		err = fmt.Errorf("unexpected %T", obj)
	}
	return err
}

// notAPIGroups are API groups of configuration files that ship next to the
// manifests but are never sent to kube-apiserver, so it cannot validate
// them: kubeadm's InitConfiguration, ClusterConfiguration and
// JoinConfiguration (examples/manifests/openstack/kubeadm-config.yaml).
var notAPIGroups = []string{"kubeadm.k8s.io"}

// decodeYAMLFile decodes a multi-document YAML file strictly: unknown or
// duplicate fields are errors. Documents of notAPIGroups are skipped; any
// other kind the client scheme does not know is an error.
func decodeYAMLFile(t *testing.T, path string) []runtime.Object {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	strict := serializerjson.NewSerializerWithOptions(serializerjson.DefaultMetaFactory, scheme.Scheme, scheme.Scheme,
		serializerjson.SerializerOptions{Yaml: true, Strict: true})
	var objs []runtime.Object
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		js, err := utilyaml.ToJSON(doc)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		gvk, err := serializerjson.DefaultMetaFactory.Interpret(js)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if slices.Contains(notAPIGroups, gvk.Group) {
			continue
		}
		obj, _, err := strict.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		objs = append(objs, obj)
	}
}

func condition(n *corev1.Node, typ corev1.NodeConditionType) corev1.NodeCondition {
	for _, c := range n.Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return corev1.NodeCondition{}
}

// gone turns a Get's error into "deleted yet?".
func gone(err error) (bool, error) {
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}
