package e2e

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/ccmkit/ccmkit/framework/frameworktest/kubetest"
	"github.com/ccmkit/ccmkit/internal/cluster"
)

// The storage binaries `make csi-sidecars` builds into bin/ beside
// kube-apiserver (hack/go.mod pins them).
var csiBinaries = []string{
	"kube-controller-manager", "csi-provisioner", "csi-attacher", "csi-resizer", "csi-snapshotter", "snapshot-controller",
}

// requireCSIBinaries returns bin/, failing (CCMKIT_E2E=required) or
// skipping when a storage binary is missing.
func requireCSIBinaries(t testing.TB) string {
	t.Helper()
	bin := requireBinaries(t)
	for _, b := range csiBinaries {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			if os.Getenv("CCMKIT_E2E") == "required" {
				t.Fatalf("%v: run `make csi-sidecars`", err)
			}
			t.Skipf("%v: run `make csi-sidecars` (or `make test`) to run the CSI end-to-end tests", err)
		}
	}
	return bin
}

// manifestObjects decodes every object of the YAML files in dir, in file
// name order, as unstructured objects.
func manifestObjects(t testing.TB, dir string) []*unstructured.Unstructured {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s (%v)", dir, err)
	}
	var objs []*unstructured.Unstructured
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
		for {
			var u unstructured.Unstructured
			if err := dec.Decode(&u.Object); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				t.Fatalf("%s: %v", f, err)
			}
			if len(u.Object) > 0 {
				objs = append(objs, &u)
			}
		}
	}
	return objs
}

// applier creates unstructured objects through the dynamic client,
// finding each kind's resource by discovery (so CRDs served a moment
// ago are found once established).
type applier struct {
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func newApplier(t testing.TB, cfg *rest.Config) *applier {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &applier{dyn: dynamic.NewForConfigOrDie(cfg), mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}
}

// resource is gvk's resource client for namespace ns ("" for a
// cluster-scoped kind).
func (a *applier) resource(gvk schema.GroupVersionKind, ns string) (dynamic.ResourceInterface, error) {
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		a.mapper.Reset()
		m, err = a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameRoot {
		return a.dyn.Resource(m.Resource), nil
	}
	return a.dyn.Resource(m.Resource).Namespace(ns), nil
}

// create creates obj, waiting up to 30s for its kind to be served.
func (a *applier) create(t testing.TB, obj *unstructured.Unstructured) {
	t.Helper()
	eventually(t, 30*time.Second, "creating "+obj.GetKind()+" "+obj.GetName(), func(ctx context.Context) (bool, error) {
		r, err := a.resource(obj.GroupVersionKind(), obj.GetNamespace())
		if err != nil {
			return false, err
		}
		_, err = r.Create(ctx, obj, metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err), err
	})
}

// workload is a container of a shipped Deployment, StatefulSet or
// DaemonSet: what the test runs as a process.
type workload struct {
	serviceAccount string // namespace:name
	container      corev1.Container
}

// binary is the container's program: its image's last path element
// without the tag (registry.k8s.io/sig-storage/csi-attacher:v4.13.0 ->
// csi-attacher).
func (w workload) binary() string {
	image := w.container.Image[strings.LastIndex(w.container.Image, "/")+1:]
	name, _, _ := strings.Cut(image, ":")
	return name
}

// workloads returns the containers of the shipped workloads, by binary.
func workloads(t testing.TB, objs []*unstructured.Unstructured) map[string]workload {
	t.Helper()
	out := map[string]workload{}
	for _, u := range objs {
		var spec corev1.PodSpec
		var ns string
		switch u.GetKind() {
		case "Deployment", "StatefulSet", "DaemonSet":
			typed, err := scheme.Scheme.New(u.GroupVersionKind())
			if err != nil {
				t.Fatal(err)
			}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
				t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
			}
			switch o := typed.(type) {
			case *appsv1.Deployment:
				spec = o.Spec.Template.Spec
			case *appsv1.StatefulSet:
				spec = o.Spec.Template.Spec
			case *appsv1.DaemonSet:
				spec = o.Spec.Template.Spec
			}
			ns = u.GetNamespace()
		default:
			continue
		}
		for _, c := range spec.Containers {
			w := workload{serviceAccount: ns + ":" + spec.ServiceAccountName, container: c}
			key := w.binary()
			if u.GetKind() == "DaemonSet" && strings.HasSuffix(key, "-csi-driver") {
				key += "/node"
			}
			out[key] = w
		}
	}
	return out
}

// localArgs are a shipped container's arguments for a process of this
// machine: the CSI socket at endpoint, no metrics or health listener (a
// pod's own port, which processes beside each other here would share),
// the flags in files set to this machine's paths (e.g. --cloud-config, a
// mounted Secret's file in the pod), and extra appended.
func localArgs(c corev1.Container, endpoint string, files map[string]string, extra ...string) []string {
	var args []string
	for _, a := range c.Args {
		name, _, _ := strings.Cut(a, "=")
		if path, ok := files[name]; ok {
			args = append(args, name+"="+path)
			continue
		}
		switch name {
		case "--csi-address":
			args = append(args, "--csi-address="+endpoint)
		case "--endpoint":
			args = append(args, "--endpoint=unix://"+endpoint)
		case "--metrics-address", "--http-endpoint", "--debug-addr":
		default:
			args = append(args, a)
		}
	}
	return append(args, extra...)
}

// startProcess runs a binary for the test's lifetime, logging to dir.
func startProcess(t testing.TB, dir, binary, name string, env map[string]string, args ...string) *cluster.CCM {
	t.Helper()
	p, err := cluster.StartCCM(binary, filepath.Join(dir, name+".log"), env, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}

// serviceAccountKubeconfig writes a kubeconfig for namespace:name, a
// ServiceAccount of the shipped RBAC, and returns its path.
func serviceAccountKubeconfig(t testing.TB, cp *kubetest.ControlPlane, dir, sa string) string {
	t.Helper()
	ns, name, _ := strings.Cut(sa, ":")
	path := filepath.Join(dir, ns+"-"+name+".kubeconfig")
	if _, err := os.Stat(path); err == nil {
		return path
	}
	if _, err := cp.AddUser(path, "system:serviceaccount:"+ns+":"+name, "system:serviceaccounts", "system:serviceaccounts:"+ns); err != nil {
		t.Fatal(err)
	}
	return path
}

// dialCSI connects to a driver's socket, as the kubelet and the sidecars do.
func dialCSI(t testing.TB, socket string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// waitForSocket waits until the driver answers Probe on socket.
func waitForSocket(t testing.TB, conn *grpc.ClientConn, what string) {
	t.Helper()
	eventually(t, 30*time.Second, what+" answers Probe", func(ctx context.Context) (bool, error) {
		_, err := csipb.NewIdentityClient(conn).Probe(ctx, &csipb.ProbeRequest{})
		return err == nil, err
	})
}

// retryable says whether a CSI call's error asks to be retried: the
// cloud is still working (Aborted), or the driver is not there yet.
func retryable(err error) bool {
	switch status.Code(err) {
	case codes.Aborted, codes.Unavailable, codes.DeadlineExceeded:
		return true
	}
	return false
}

// mountsUnder lists this mount namespace's mount points under dir.
func mountsUnder(dir string) ([]string, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	var out []string
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) > 4 && (f[4] == dir || strings.HasPrefix(f[4], dir+"/")) {
			out = append(out, f[4])
		}
	}
	return out, nil
}

// forbiddenLines are the lines of logs that say the API server refused.
func forbiddenLines(logs ...string) []string {
	var out []string
	for _, l := range logs {
		for line := range strings.Lines(l) {
			if strings.Contains(strings.ToLower(line), "forbidden") {
				out = append(out, line)
			}
		}
	}
	return slices.Clip(out)
}
