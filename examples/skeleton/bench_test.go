package skeleton_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
