package frameworktest

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cloud-provider/api"
)

// Service stores a Service of type LoadBalancer called name in the
// "default" namespace, with LBOptions.Ports and the target's Annotations
// under annotations, after mutate; it returns what the API server holds.
func (f *LBFixture) Service(t *testing.T, name string, annotations map[string]string, mutate ...func(*corev1.Service)) *corev1.Service {
	t.Helper()
	ports := f.opts.Ports
	if ports == nil {
		ports = []corev1.ServicePort{httpPort}
	}
	uid := types.UID("uid-" + name)
	if f.opts.UID != nil {
		uid = f.opts.UID(name)
	}
	svc := lbService(name, uid, withAnnotations(f.target.Annotations, annotations), ports)
	for _, m := range mutate {
		m(svc)
	}
	return create(t, f.Ctx, f.Kube, svc)
}

// Fresh returns svc as the API server holds it now, as the service
// controller passes it to each sync.
func (f *LBFixture) Fresh(t *testing.T, svc *corev1.Service) *corev1.Service {
	t.Helper()
	return stored(t, f.Ctx, f.Kube, svc)
}

// UpdateService changes the stored svc with mutate and returns what the
// API server holds.
func (f *LBFixture) UpdateService(t *testing.T, svc *corev1.Service, mutate func(*corev1.Service)) *corev1.Service {
	t.Helper()
	s := f.Fresh(t, svc)
	mutate(s)
	got, err := f.Kube.CoreV1().Services(s.Namespace).Update(f.Ctx, s, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// Ensure is one EnsureLoadBalancer of the stored svc for f.Nodes, as the
// service controller makes it.
func (f *LBFixture) Ensure(t *testing.T, svc *corev1.Service) (*corev1.LoadBalancerStatus, error) {
	t.Helper()
	return f.LB.EnsureLoadBalancer(f.Ctx, f.ClusterName, f.Fresh(t, svc), f.Nodes)
}

// EnsureReady syncs svc as the service controller does until its load
// balancer is ready: each RetryError is one more sync, after the cloud
// moves on (its Advance, unless LBOptions.NoAdvance). It fails t on any
// other error, or when the load balancer is not ready after
// LBOptions.MaxSyncs syncs.
func (f *LBFixture) EnsureReady(t *testing.T, svc *corev1.Service) *corev1.LoadBalancerStatus {
	t.Helper()
	status, _ := f.EnsureReadySyncs(t, svc)
	return status
}

// EnsureReadySyncs is EnsureReady that also returns how many syncs it took
// (1: the load balancer was ready at the first).
func (f *LBFixture) EnsureReadySyncs(t *testing.T, svc *corev1.Service) (*corev1.LoadBalancerStatus, int) {
	t.Helper()
	for i := 1; i <= f.opts.MaxSyncs; i++ {
		status, err := f.Ensure(t, svc)
		if !IsRetry(err) {
			if err != nil {
				t.Fatalf("EnsureLoadBalancer (sync %d): %v", i, err)
			}
			return status, i
		}
		t.Logf("sync %d: %v", i, err)
		f.advance()
	}
	t.Fatalf("EnsureLoadBalancer: not ready after %d syncs", f.opts.MaxSyncs)
	return nil, 0
}

// Update is one UpdateLoadBalancer of the stored svc for f.Nodes, as the
// service controller makes it when nodes change.
func (f *LBFixture) Update(t *testing.T, svc *corev1.Service) error {
	t.Helper()
	return f.LB.UpdateLoadBalancer(f.Ctx, f.ClusterName, f.Fresh(t, svc), f.Nodes)
}

// Delete is one EnsureLoadBalancerDeleted of the stored svc.
func (f *LBFixture) Delete(t *testing.T, svc *corev1.Service) error {
	t.Helper()
	return f.LB.EnsureLoadBalancerDeleted(f.Ctx, f.ClusterName, f.Fresh(t, svc))
}

// DeleteDone deletes svc's load balancer as the service controller does:
// each RetryError is one more call, after the cloud moves on. It fails t
// on any other error, or when the delete is not done after
// LBOptions.MaxSyncs calls.
func (f *LBFixture) DeleteDone(t *testing.T, svc *corev1.Service) {
	t.Helper()
	for range f.opts.MaxSyncs {
		err := f.Delete(t, svc)
		if !IsRetry(err) {
			if err != nil {
				t.Fatalf("EnsureLoadBalancerDeleted: %v", err)
			}
			return
		}
		f.advance()
	}
	t.Fatalf("EnsureLoadBalancerDeleted: not done after %d calls", f.opts.MaxSyncs)
}

func (f *LBFixture) advance() {
	if !f.opts.NoAdvance {
		f.target.Cloud.Advance()
	}
}

// IsRetry reports whether err asks the service controller to sync again
// (an api.RetryError: the cloud is still working).
func IsRetry(err error) bool {
	var r *api.RetryError
	return errors.As(err, &r)
}
