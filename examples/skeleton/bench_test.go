package skeleton_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/cloud-provider/api"

	"github.com/ccmkit/ccmkit/examples/skeleton"
	"github.com/ccmkit/ccmkit/examples/skeleton/skeletonsim"
	"github.com/ccmkit/ccmkit/framework"
	"github.com/ccmkit/ccmkit/framework/cloudapi"
)

// BenchmarkNodeAddressSweep is what the node controller's periodic address
// refresh costs the cloud: InstanceMetadata for every one of 1,000 Nodes
// within one instance-cache TTL, over real HTTP to the simulator through
// the framework's transport. The cost must be the list pages,
// ceil(1000/page), not 1,000 GETs; it is reported as api-calls/sweep.
func BenchmarkNodeAddressSweep(b *testing.B) {
	const nodes = 1000
	sim := skeletonsim.NewServer(b, skeletonsim.Options{})
	list := make([]*corev1.Node, nodes)
	for i := range list {
		inst := sim.AddInstance(skeletonsim.Instance{
			Name: fmt.Sprintf("node-%04d", i), Type: "sk-2", Region: "sk-1", Zone: "sk-1a", Status: "running",
			PrivateIPv4: fmt.Sprintf("10.0.%d.%d", i/250, i%250+1),
		})
		list[i] = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: inst.Name}, Spec: corev1.NodeSpec{ProviderID: "skeleton://" + inst.ID}}
	}
	vars := map[string]string{"SKELETON_API_URL": sim.URL(), "SKELETON_TOKEN": sim.Token(), "SKELETON_API_QPS": "0"}

	var calls map[string]int64
	for b.Loop() {
		// A new CCM per sweep: one sweep is one TTL window, cache cold.
		counter := cloudapi.NewCounter()
		cloud, err := framework.NewCloud(context.Background(), skeleton.New(), &framework.Env{
			APICounter:       counter,
			InstanceCacheTTL: time.Hour,
			LookupEnv:        func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		})
		if err != nil {
			b.Fatal(err)
		}
		counter.Reset() // leave out Init's credential check
		inst, _ := cloud.InstancesV2()
		for _, n := range list {
			if _, err := inst.InstanceMetadata(context.Background(), n); err != nil {
				b.Fatal(err)
			}
		}
		calls = counter.Snapshot()
	}
	var total int64
	for _, n := range calls {
		total += n
	}
	if want := int64((nodes + skeletonsim.MaxPerPage - 1) / skeletonsim.MaxPerPage); total > want {
		b.Fatalf("%d InstanceMetadata calls cost %d API calls %v, want <= %d (list pages)", nodes, total, calls, want)
	}
	b.ReportMetric(float64(total), "api-calls/sweep")
	b.ReportMetric(float64(total)/nodes, "api-calls/node")
	b.Logf("cloud API calls for %d nodes: %v", nodes, calls)
}

// BenchmarkLoadBalancerCalls is what a fleet of LoadBalancer Services costs
// the cloud, over real HTTP to the simulator: 200 new Services synced by the
// service controller's 5 workers until every load balancer is active (the
// simulator activates one on its second read), then one node joining, which
// updates all 200. With the load-balancer cache (as in production) the
// first costs one list, the 200 creates and one list per poll round; the
// second the 200 updates and no read. cache=off is the pipeline calling
// Get and Find directly, for comparison.
func BenchmarkLoadBalancerCalls(b *testing.B) {
	for _, bc := range []struct {
		name string
		ttl  time.Duration
		// Budgets: fail the benchmark above them.
		maxEnsure, maxNodeChange int64
	}{
		{"cache=on", 0, 220, 200},
		{"cache=off", -1, 0, 0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			const services = 200
			var ensure, nodeChange map[string]int64
			for b.Loop() {
				ensure, nodeChange = lbFleet(b, services, bc.ttl)
			}
			ensureTotal, nodeTotal := sum(ensure), sum(nodeChange)
			if bc.maxEnsure > 0 && ensureTotal > bc.maxEnsure {
				b.Errorf("ensuring %d new Services cost %d API calls %v, want <= %d", services, ensureTotal, ensure, bc.maxEnsure)
			}
			if bc.maxNodeChange > 0 && nodeTotal > bc.maxNodeChange {
				b.Errorf("a node change over %d LBs cost %d API calls %v, want <= %d", services, nodeTotal, nodeChange, bc.maxNodeChange)
			}
			b.ReportMetric(float64(ensureTotal), "api-calls/200-services-ensured")
			b.ReportMetric(float64(nodeTotal), "api-calls/200-lbs-node-change")
			b.Logf("%d Services ensured: %v; a node joined: %v", services, ensure, nodeChange)
		})
	}
}

// lbFleet runs one CCM against a fresh simulator and returns the API calls
// of ensuring n new Services and of a node joining afterwards, by operation.
func lbFleet(b *testing.B, n int, lbCacheTTL time.Duration) (ensure, nodeChange map[string]int64) {
	ctx := context.Background()
	sim := skeletonsim.NewServer(b, skeletonsim.Options{})
	var nodes []*corev1.Node
	for i := range 4 {
		inst := sim.AddInstance(skeletonsim.Instance{Name: fmt.Sprintf("node-%d", i)})
		nodes = append(nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: inst.Name}, Spec: corev1.NodeSpec{ProviderID: "skeleton://" + inst.ID}})
	}
	kube := fake.NewClientset()
	svcs := make([]*corev1.Service, n)
	for i := range svcs {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("svc-%03d", i), Namespace: "default", UID: types.UID(fmt.Sprintf("uid-%03d", i))},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer,
				Ports: []corev1.ServicePort{{Protocol: corev1.ProtocolTCP, Port: 80, NodePort: int32(30000 + i)}}},
		}
		var err error
		if svcs[i], err = kube.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	vars := map[string]string{"SKELETON_API_URL": sim.URL(), "SKELETON_TOKEN": sim.Token(), "SKELETON_API_QPS": "0"}
	counter := cloudapi.NewCounter()
	cloud, err := framework.NewCloud(ctx, skeleton.New(), &framework.Env{
		Client:               kube,
		APICounter:           counter,
		LoadBalancerCacheTTL: lbCacheTTL,
		LookupEnv:            func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
	})
	if err != nil {
		b.Fatal(err)
	}
	lb, _ := cloud.LoadBalancer()
	counter.Reset() // leave out Init's credential check

	// The service controller: 5 workers; a Service whose load balancer is
	// provisioning comes back in the next round.
	pending := svcs
	for round := 0; len(pending) > 0; round++ {
		if round == 10 {
			b.Fatalf("%d load balancers still not ready after %d rounds", len(pending), round)
		}
		pending = syncAll(b, pending, func(svc *corev1.Service) error {
			fresh, err := kube.CoreV1().Services(svc.Namespace).Get(ctx, svc.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			_, err = lb.EnsureLoadBalancer(ctx, "bench", fresh, nodes)
			return err
		})
	}
	ensure = counter.Snapshot()
	counter.Reset()

	inst := sim.AddInstance(skeletonsim.Instance{Name: "node-new"})
	nodes = append(nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: inst.Name}, Spec: corev1.NodeSpec{ProviderID: "skeleton://" + inst.ID}})
	if left := syncAll(b, svcs, func(svc *corev1.Service) error {
		fresh, err := kube.CoreV1().Services(svc.Namespace).Get(ctx, svc.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		return lb.UpdateLoadBalancer(ctx, "bench", fresh, nodes)
	}); len(left) > 0 {
		b.Fatalf("%d load balancers not updated", len(left))
	}
	return ensure, counter.Snapshot()
}

// syncAll runs fn for every Service on the service controller's 5 workers
// and returns the ones that asked to be retried; any other error fails the
// benchmark.
func syncAll(b *testing.B, svcs []*corev1.Service, fn func(*corev1.Service) error) []*corev1.Service {
	work := make(chan *corev1.Service)
	var mu sync.Mutex
	var retry []*corev1.Service
	var wg sync.WaitGroup
	for range framework.DefaultConcurrentServiceSyncs {
		wg.Go(func() {
			for svc := range work {
				err := fn(svc)
				var r *api.RetryError
				switch {
				case errors.As(err, &r):
					mu.Lock()
					retry = append(retry, svc)
					mu.Unlock()
				case err != nil:
					b.Errorf("%s: %v", svc.Name, err)
				}
			}
		})
	}
	for _, svc := range svcs {
		work <- svc
	}
	close(work)
	wg.Wait()
	return retry
}

func sum(calls map[string]int64) int64 {
	var total int64
	for _, n := range calls {
		total += n
	}
	return total
}
