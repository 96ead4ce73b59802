package cluster

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ccmkit/ccmkit/framework/frameworktest/kubetest"
)

// PlaneOptions configure a Plane.
type PlaneOptions struct {
	Provider Provider
	// Root is the module root (manifests, sources); "" finds it from the
	// working directory.
	Root string
	// BinDir holds kube-apiserver and etcd, and receives the CCM binary;
	// "" means <root>/bin.
	BinDir string
	// BuildTags are Go build tags for the CCM binary (go build -tags): a
	// deliberately broken build, to show that a check can fail.
	BuildTags []string
	// CCMBinary is a CCM binary built beforehand (e.g. from another
	// commit, to compare two on one harness); "" builds the provider's
	// from Root.
	CCMBinary string
}

// Plane is a real kube-apiserver and etcd with one provider's shipped RBAC,
// and that provider's CCM binary: what the end-to-end scenarios of a
// provider share, so that they do not pay for a control plane each.
//
// Scenarios take turns: Attach waits until no other Cluster is attached,
// and a Cluster's Stop leaves the plane as Attach found it (no Node, no
// Service but default/kubernetes, no Lease, Secret or Event a scenario
// made), so a scenario never sees another's objects.
type Plane struct {
	Provider     Provider
	ControlPlane *kubetest.ControlPlane
	Kube         kubernetes.Interface

	root      string
	ccmBinary string
	// turn holds a token while a Cluster is attached.
	turn chan struct{}

	mu       sync.Mutex
	attached int
	// broken is why the plane can take no more scenarios: a reset that
	// failed leaves objects the next scenario would trip over.
	broken error
	// baseline are the kube-system Secrets and Leases the plane had when
	// it started (ns/name); a reset deletes every other one.
	baseline map[string]bool
}

// StartPlane builds the provider's CCM binary and starts a control plane
// with the provider's RBAC.
func StartPlane(ctx context.Context, o PlaneOptions) (_ *Plane, err error) {
	if o.Root == "" {
		if o.Root, err = ModuleRoot(); err != nil {
			return nil, err
		}
	}
	if o.BinDir == "" {
		o.BinDir = filepath.Join(o.Root, "bin")
	}
	p := &Plane{Provider: o.Provider, root: o.Root, turn: make(chan struct{}, 1)}
	if p.ccmBinary = o.CCMBinary; p.ccmBinary == "" {
		if p.ccmBinary, err = BuildCCM(ctx, o.Root, o.BinDir, o.Provider, o.BuildTags...); err != nil {
			return nil, err
		}
	}
	var rbac []string
	for _, m := range o.Provider.RBAC {
		rbac = append(rbac, filepath.Join(o.Root, m))
	}
	// The API server's default Service range (10.0.0.0/24) holds 254
	// Services; the bench makes up to 1,000 LoadBalancer Services. The
	// /16 starts at the same address (the kubernetes Service stays
	// 10.0.0.1).
	apiServerArgs := []string{"--service-cluster-ip-range=10.0.0.0/16"}
	if p.ControlPlane, err = kubetest.NewControlPlane(kubetest.ControlPlaneOptions{BinDir: o.BinDir, RBACManifests: rbac, APIServerArgs: apiServerArgs}); err != nil {
		return nil, err
	}
	if err = p.ControlPlane.Start(ctx); err != nil {
		return nil, fmt.Errorf("starting the control plane: %w", err)
	}
	p.Kube = p.ControlPlane.AdminClient()
	if p.baseline, err = p.kubeSystemObjects(ctx); err != nil {
		_ = p.ControlPlane.Stop()
		return nil, err
	}
	return p, nil
}

// Stop stops the control plane. Clusters still attached stop their own
// CCMs, kubelets and simulators.
func (p *Plane) Stop() { _ = p.ControlPlane.Stop() }

// CCMBinary is the path of the provider's CCM binary.
func (p *Plane) CCMBinary() string { return p.ccmBinary }

// acquire waits for the plane's turn.
func (p *Plane) acquire(ctx context.Context) error {
	select {
	case p.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.broken != nil {
		<-p.turn
		return fmt.Errorf("the shared control plane cannot be used: %w", p.broken)
	}
	p.attached++
	return nil
}

// release resets the plane after a Cluster and gives the turn back.
func (p *Plane) release() {
	defer func() { <-p.turn }()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.reset(ctx); err != nil {
		p.mu.Lock()
		p.broken = fmt.Errorf("resetting it after a scenario: %w", err)
		p.mu.Unlock()
	}
}

// reset deletes what a scenario leaves in the cluster: every Service but
// default/kubernetes (finalizers dropped: no CCM runs any more to release
// them), every Node and node Lease, the kube-system Secrets and Leases the
// plane did not start with (a scenario's Secret, a leader-election lease)
// and every Event. Namespaces stay (no namespace controller runs to
// finish deleting one); nothing is left in them that a controller acts on.
func (p *Plane) reset(ctx context.Context) error {
	core := p.Kube.CoreV1()
	var errs []error
	svcs, err := core.Services(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, s := range svcs.Items {
		if s.Namespace == metav1.NamespaceDefault && s.Name == "kubernetes" {
			continue
		}
		if len(s.Finalizers) > 0 {
			patch := []byte(`{"metadata":{"finalizers":null}}`)
			if _, err := core.Services(s.Namespace).Patch(ctx, s.Name, "application/merge-patch+json", patch, metav1.PatchOptions{}); ignoreNotFound(err) != nil {
				errs = append(errs, err)
			}
		}
		errs = append(errs, ignoreNotFound(core.Services(s.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{})))
	}
	all := metav1.ListOptions{}
	errs = append(errs,
		core.Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, all),
		p.Kube.CoordinationV1().Leases(corev1.NamespaceNodeLease).DeleteCollection(ctx, metav1.DeleteOptions{}, all),
	)
	now, err := p.kubeSystemObjects(ctx)
	if err != nil {
		return err
	}
	for key := range now {
		if p.baseline[key] {
			continue
		}
		kind, name := splitKey(key)
		switch kind {
		case "secret":
			errs = append(errs, ignoreNotFound(core.Secrets(metav1.NamespaceSystem).Delete(ctx, name, metav1.DeleteOptions{})))
		case "lease":
			errs = append(errs, ignoreNotFound(p.Kube.CoordinationV1().Leases(metav1.NamespaceSystem).Delete(ctx, name, metav1.DeleteOptions{})))
		}
	}
	nss, err := core.Namespaces().List(ctx, all)
	if err != nil {
		return err
	}
	for _, ns := range nss.Items {
		errs = append(errs, core.Events(ns.Name).DeleteCollection(ctx, metav1.DeleteOptions{}, all))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return p.checkClean(ctx)
}

// checkClean fails when a Node or a Service other than default/kubernetes
// is left: the next scenario's CCM would act on it.
func (p *Plane) checkClean(ctx context.Context) error {
	nodes, err := p.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	svcs, err := p.Kube.CoreV1().Services(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	if len(nodes.Items) > 0 || len(svcs.Items) > 1 {
		return fmt.Errorf("%d Nodes and %d Services left after the reset", len(nodes.Items), len(svcs.Items)-1)
	}
	return nil
}

// kubeSystemObjects lists kube-system's Secrets and Leases as
// "secret/<name>" and "lease/<name>". kube-apiserver's own identity
// leases (apiserver-<id>, renewed by the server) are left out.
func (p *Plane) kubeSystemObjects(ctx context.Context) (map[string]bool, error) {
	out := map[string]bool{}
	secrets, err := p.Kube.CoreV1().Secrets(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, s := range secrets.Items {
		out["secret/"+s.Name] = true
	}
	leases, err := p.Kube.CoordinationV1().Leases(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, l := range leases.Items {
		if l.Labels["apiserver.kubernetes.io/identity"] == "" {
			out["lease/"+l.Name] = true
		}
	}
	return out, nil
}

func splitKey(key string) (kind, name string) {
	kind, name, _ = strings.Cut(key, "/")
	return kind, name
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
