package charts

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/ccmkit/ccmkit/framework/frameworktest/kubetest"
	"github.com/ccmkit/ccmkit/internal/cluster"
)

// fieldManager is the field manager of every object this package applies.
const fieldManager = "ccmkit-chart-test"

// serviceMonitorCRD is the ServiceMonitor CRD installed before anything is
// applied, so a chart's ServiceMonitor is validated too.
const serviceMonitorCRD = "testdata/crds/servicemonitor.yaml"

// plane is the package's one control plane, started by the first test
// that needs it and stopped by TestMain.
var plane struct {
	once sync.Once
	cp   *kubetest.ControlPlane
	api  *apiClient
	err  error
}

func TestMain(m *testing.M) {
	// Helm's chart loader logs each symlink it follows (the charts reach
	// ccmkit-common through one) with the standard logger.
	log.SetOutput(io.Discard)
	code := m.Run()
	if plane.cp != nil {
		if err := plane.cp.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the control plane:", err)
		}
	}
	os.Exit(code)
}

// controlPlane returns the package's control plane, with the
// ServiceMonitor CRD installed. Without bin/kube-apiserver and bin/etcd it
// skips t, unless CCMKIT_E2E=required (set by `make test`) makes that a
// failure.
func controlPlane(t *testing.T) (*kubetest.ControlPlane, *apiClient) {
	t.Helper()
	root, err := cluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := kubetest.ControlPlaneBinDir(filepath.Join(root, "bin"))
	if err != nil {
		if os.Getenv("CCMKIT_E2E") == "required" {
			t.Fatalf("%v: run `make controlplane`", err)
		}
		t.Skipf("%v: run `make controlplane` to apply the charts to a real API server", err)
	}
	plane.once.Do(func() { plane.cp, plane.api, plane.err = startControlPlane(bin) })
	if plane.err != nil {
		t.Fatal(plane.err)
	}
	return plane.cp, plane.api
}

func startControlPlane(bin string) (*kubetest.ControlPlane, *apiClient, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp, err := kubetest.NewControlPlane(kubetest.ControlPlaneOptions{BinDir: bin})
	if err != nil {
		return nil, nil, err
	}
	if err := cp.Start(ctx); err != nil {
		return nil, nil, fmt.Errorf("starting the control plane: %w", err)
	}
	api, err := newAPIClient(cp)
	if err == nil {
		err = api.installCRD(ctx, serviceMonitorCRD)
	}
	if err != nil {
		_ = cp.Stop()
		return nil, nil, err
	}
	return cp, api, nil
}

// apiClient applies objects of any kind through the dynamic client, with
// a RESTMapper from the API server's discovery.
type apiClient struct {
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func newAPIClient(cp *kubetest.ControlPlane) (*apiClient, error) {
	cfg := cp.RESTConfig()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disco := memory.NewMemCacheClient(cp.AdminClient().Discovery())
	return &apiClient{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(disco)}, nil
}

// apply applies obj with server-side apply and strict field validation,
// as a dry run (dryRun: All) when dryRun is set: the API server decodes,
// defaults, validates and admits it, and stores nothing. A namespaced
// object without a namespace goes to ns, as Helm puts it in the release's.
func (a *apiClient) apply(ctx context.Context, obj *unstructured.Unstructured, ns string, dryRun bool) error {
	gvk := obj.GroupVersionKind()
	mapping, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return err
	}
	obj = obj.DeepCopy()
	var client dynamic.ResourceInterface = a.dyn.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		if obj.GetNamespace() == "" {
			obj.SetNamespace(ns)
		}
		client = a.dyn.Resource(mapping.Resource).Namespace(obj.GetNamespace())
	}
	data, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	force := true
	opts := metav1.PatchOptions{FieldManager: fieldManager, Force: &force, FieldValidation: metav1.FieldValidationStrict}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	_, err = client.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, opts)
	return err
}

// installCRD applies the CRDs in path (one or more YAML documents) and
// waits until they are served.
func (a *apiClient) installCRD(ctx context.Context, path string) error {
	crds, err := readManifests(path)
	if err != nil {
		return err
	}
	if err := a.installCRDs(ctx, crds); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// installCRDs applies crds, for real, and waits until each is served.
func (a *apiClient) installCRDs(ctx context.Context, crds []*unstructured.Unstructured) error {
	for _, crd := range crds {
		if err := a.apply(ctx, crd, "", false); err != nil {
			return fmt.Errorf("CRD %s: %w", crd.GetName(), err)
		}
	}
	resource := a.dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	for _, crd := range crds {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			got, err := resource.Get(ctx, crd.GetName(), metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			for _, c := range conds {
				if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s not established: %w", crd.GetName(), err)
		}
	}
	a.mapper.Reset()
	return nil
}
