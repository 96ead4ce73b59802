package framework

import (
	"os"
	"runtime/debug"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// DefaultGOGC is the garbage collector's target percentage a CCM runs with
// when the GOGC environment variable is not set (Go's own default is 100).
//
// Between two collections the heap grows to (1 + GOGC/100) times what the
// last one found live, and a CCM's live heap is small: about 20 MiB with
// 1,000 Nodes and 200 LoadBalancer Services. In `make bench` at that size,
// 25 instead of 100 cuts the anonymous part of the peak RSS (mostly heap)
// by 20-25 MiB, to 47-50 MiB, for about 4% of a core more CPU time (the
// bench's node monitor period of one second makes five times the garbage
// of the default). GOGC=50 saves about 60% as much for a fifth of the CPU.
// GOGC=100 restores Go's default; GOMEMLIMIT works as usual.
const DefaultGOGC = 25

// ApplyMemoryDefaults sets the garbage collector's target to DefaultGOGC
// unless the GOGC environment variable is set. Main calls it first thing;
// a binary that builds its own command with NewCommand can call it at the
// start of main.
func ApplyMemoryDefaults() { applyMemoryDefaults(os.Getenv, debug.SetGCPercent) } //nolint:forbidigo // GOGC is the Go runtime's variable, not CCM configuration

func applyMemoryDefaults(getenv func(string) string, setGCPercent func(int) int) {
	if getenv("GOGC") == "" {
		setGCPercent(DefaultGOGC)
	}
}

// trimCachedObject is the transform of the CCM's Node and Service
// informers: before an object enters the cache it drops the fields no
// cloud controller reads and that make up much of the objects' size:
//
//   - metadata.managedFields, of every object: the field managers'
//     bookkeeping, often larger than the rest of the metadata. An update
//     sent from a cached copy leaves them as they are: the API server keeps
//     the live managedFields when a request carries none.
//   - status.images of a Node: up to 50 container images with every name
//     and digest kubelet reports, over 5 kB per Node.
//   - status.volumesAttached and status.volumesInUse of a Node: they grow
//     with the Node's workload.
//
// No cloud controller writes Node status with an update (the CCM's RBAC
// does not even allow it), and the patches they send are computed between
// two cached copies, so the dropped fields never appear in them.
//
// The same objects serve every reader of env.Informers' Node and Service
// informers, providers' controllers included. The transform is idempotent,
// as client-go asks, and works in place, which client-go allows: the object
// is fresh off the wire and nothing else holds it yet.
func trimCachedObject(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Node:
		o.ManagedFields = nil
		o.Status.Images = nil
		o.Status.VolumesAttached = nil
		o.Status.VolumesInUse = nil
	case metav1.Object:
		o.SetManagedFields(nil)
	}
	return obj, nil
}

// trimInformers sets trimCachedObject on f's Node informer and, when
// services is true, its Service informer. It must run before f starts
// them: NewCloud runs before the CCM starts its informers. Asking for an
// informer creates it, so the Service informer is only trimmed when the
// service controller will use it anyway: a CCM without load balancers does
// not watch Services for nothing.
func trimInformers(logger klog.Logger, f informers.SharedInformerFactory, services bool) {
	if f == nil {
		return
	}
	set := func(resource string, inf cache.SharedIndexInformer) {
		if err := inf.SetTransform(trimCachedObject); err != nil {
			// Already started (by the provider's Init): it keeps whole
			// objects, which costs memory but nothing else.
			logger.V(2).Info("Not trimming the informer's objects", "resource", resource, "err", err)
		}
	}
	set("nodes", f.Core().V1().Nodes().Informer())
	if services {
		set("services", f.Core().V1().Services().Informer())
	}
}
