package charts

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	cloudproviderapi "k8s.io/cloud-provider/api"

	"github.com/ccmkit/ccmkit/framework/frameworktest/kubetest"
	"github.com/ccmkit/ccmkit/internal/cluster"
)

// TestDigitalOceanChartInstall installs the DigitalOcean chart's objects
// for real (ServiceAccount, RBAC, the token Secret from values, the
// Deployment) and runs the real CCM binary as the Deployment's pod would:
// the container's args and env, the Secret's files at the paths its
// volumeMounts name (under a temp dir), authenticated as the chart's
// ServiceAccount with a TokenRequest token. Only --kubeconfig (with the
// delegated-auth kubeconfigs a pod gets in-cluster), --bind-address and
// --secure-port are changed for the host. A new Node gets initialized, a
// LoadBalancer Service gets a DigitalOcean load balancer (in dosim), and
// the CCM is never refused.
func TestDigitalOceanChartInstall(t *testing.T) {
	cp, api := controlPlane(t)
	ctx := t.Context()
	p, _ := cluster.Lookup("digitalocean")
	root, err := cluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := cluster.BuildCCM(ctx, root, t.TempDir(), p)
	if err != nil {
		t.Fatal(err)
	}
	sim, err := p.StartSim(cluster.SimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)

	simEnv := sim.Env()
	values := map[string]any{
		"secret": map[string]any{"create": true, "data": map[string]any{"accessToken": simEnv["DO_ACCESS_TOKEN"]}},
		"env":    map[string]any{"REGION": simEnv["REGION"], "DO_OVERRIDE_URL": simEnv["DO_OVERRIDE_URL"]},
	}
	objs, err := renderChart(filepath.Join(chartsDir, "digitalocean-cloud-controller-manager"),
		renderOptions{Name: "digitalocean-cloud-controller-manager", Namespace: "kube-system", Values: values})
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		if err := api.apply(ctx, obj, "kube-system", false); err != nil {
			t.Fatalf("%s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
	admin := cp.AdminClient()
	d, err := admin.AppsV1().Deployments("kube-system").Get(ctx, only(t, objs, "Deployment").GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ccm := runAsPod(t, cp, bin, d)

	id := sim.AddInstance("node-1")
	kubelet, err := kubetest.StartKubelet(ctx, admin, kubetest.NodeSpec{Name: "node-1", PodCIDR: "10.244.1.0/24"}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kubelet.Stop)
	eventually(t, 30*time.Second, "node-1 is initialized", func(ctx context.Context) (bool, error) {
		n, err := admin.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return n.Spec.ProviderID == "digitalocean://"+id && !hasTaint(n, cloudproviderapi.TaintExternalCloudProvider), nil
	})
	createLoadBalancerService(t, admin)
	eventually(t, 30*time.Second, "the Service has a load balancer", func(ctx context.Context) (bool, error) {
		s, err := admin.CoreV1().Services("default").Get(ctx, "web", metav1.GetOptions{})
		return err == nil && len(s.Status.LoadBalancer.Ingress) > 0 && s.Status.LoadBalancer.Ingress[0].IP != "" &&
			len(sim.LoadBalancers()) == 1, err
	})
	for line := range strings.Lines(ccm.Log()) {
		if strings.Contains(strings.ToLower(line), "forbidden") {
			t.Errorf("the CCM was refused with the chart's RBAC: %s", line)
		}
	}
}

// runAsPod starts bin as the only container of d's pod template would run
// (the image's ENTRYPOINT is the CCM, so the container's args are its
// arguments), as d's ServiceAccount, and stops it when t ends.
func runAsPod(t *testing.T, cp *kubetest.ControlPlane, bin string, d *appsv1.Deployment) *cluster.CCM {
	t.Helper()
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 || len(pod.Containers[0].Command) > 0 {
		t.Fatalf("Deployment %s: want one container running the image's ENTRYPOINT", d.Name)
	}
	c := pod.Containers[0]
	dir := t.TempDir()
	env := podEnv(t, cp.AdminClient(), d.Namespace, pod, dir)
	kubeconfig := serviceAccountKubeconfig(t, cp, d.Namespace, pod.ServiceAccountName, dir)
	port, err := cluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, a := range c.Args {
		if !strings.HasPrefix(a, "--secure-port=") && !strings.HasPrefix(a, "--bind-address=") {
			args = append(args, a)
		}
	}
	args = append(args, "--kubeconfig="+kubeconfig,
		// In a pod these default to the in-cluster (ServiceAccount) config.
		"--authentication-kubeconfig="+kubeconfig, "--authorization-kubeconfig="+kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(port))
	ccm, err := cluster.StartCCM(bin, filepath.Join(dir, "ccm.log"), env, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ccm.Stop()
		if t.Failed() {
			t.Logf("---- CCM log ----\n%s", ccm.Log())
		}
	})
	return ccm
}

// podEnv is the container's environment as the kubelet gives it: plain
// values and secretKeyRefs, with the pod's Secret volumes written under
// dir and values naming a file under a mount path rewritten to it.
func podEnv(t *testing.T, kube kubernetes.Interface, ns string, pod corev1.PodSpec, dir string) map[string]string {
	t.Helper()
	secret := func(name string) *corev1.Secret {
		s, err := kube.CoreV1().Secrets(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	mounts := map[string]string{}
	volumes := map[string]*corev1.SecretVolumeSource{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v.Secret
	}
	for _, m := range pod.Containers[0].VolumeMounts {
		src := volumes[m.Name]
		if src == nil {
			t.Fatalf("volume %s is not a Secret: not supported here", m.Name)
		}
		local := filepath.Join(dir, m.Name)
		if err := os.MkdirAll(local, 0o700); err != nil {
			t.Fatal(err)
		}
		s := secret(src.SecretName)
		for _, it := range src.Items {
			if err := os.WriteFile(filepath.Join(local, it.Path), s.Data[it.Key], 0o600); err != nil {
				t.Fatal(err)
			}
		}
		mounts[m.MountPath] = local
	}
	env := map[string]string{}
	for _, e := range pod.Containers[0].Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
			for mountPath, local := range mounts {
				if rest, ok := strings.CutPrefix(e.Value, mountPath+"/"); ok {
					env[e.Name] = filepath.Join(local, rest)
				}
			}
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			if v, ok := secret(ref.Name).Data[ref.Key]; ok {
				env[e.Name] = string(v)
			}
		default:
			t.Fatalf("env %s: only values and secretKeyRefs are supported here", e.Name)
		}
	}
	return env
}

// serviceAccountKubeconfig writes a kubeconfig under dir that
// authenticates as the ServiceAccount ns/name with a token from the
// TokenRequest API, as a pod's projected token does.
func serviceAccountKubeconfig(t *testing.T, cp *kubetest.ControlPlane, ns, name, dir string) string {
	t.Helper()
	expiry := int64(3600)
	tok, err := cp.AdminClient().CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a token for ServiceAccount %s/%s: %v", ns, name, err)
	}
	cfg := cp.RESTConfig()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["local"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	kc.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: name}
	kc.CurrentContext = "local"
	path := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func createLoadBalancerService(t *testing.T, kube kubernetes.Interface) {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeLoadBalancer,
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}},
		},
	}
	if _, err := kube.CoreV1().Services("default").Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func hasTaint(n *corev1.Node, key string) bool {
	for _, taint := range n.Spec.Taints {
		if taint.Key == key {
			return true
		}
	}
	return false
}

// eventually polls cond every 200ms until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var lastErr error
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		if err != nil {
			lastErr = err
			return false, nil
		}
		return ok, nil
	})
	if err != nil {
		t.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, lastErr)
	}
}
