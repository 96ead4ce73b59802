package e2e

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
)

// The benchmark's cluster: BENCH_CSI_VOLUMES PVCs (100), each used by a
// Pod, spread over enough nodes for at most csiCloud.perNode a node (7,
// csi-digitalocean's default volume limit, unless the cloud's is lower).
const csiBenchPerNode = 7

// perNode is how many of the benchmark's volumes one node gets.
func (c csiCloud) perNode() int { return cmp.Or(c.maxPerNode, csiBenchPerNode) }

func csiBenchVolumes(b *testing.B) int {
	s := cmp.Or(os.Getenv("BENCH_CSI_VOLUMES"), "100")
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		b.Fatalf("BENCH_CSI_VOLUMES=%q: not a positive number", s)
	}
	return n
}

// BenchmarkCSIPVCs provisions BENCH_CSI_VOLUMES PVCs, attaches each to the
// node of a Pod using it, detaches and deletes them, through the whole
// stack TestCSI runs (the driver in controller mode, the sidecars and
// kube-controller-manager, with the shipped manifests; no devices, so no
// root). Per run it reports each phase's time and the API calls the
// cloud received per volume, by phase and in all; -v logs them by
// operation. `make bench` runs it once per cloud.
func BenchmarkCSIPVCs(b *testing.B) {
	for _, c := range csiClouds {
		b.Run(c.name, func(b *testing.B) {
			n := csiBenchVolumes(b)
			k := startCSI(b, c, csiOptions{nodes: (n + c.perNode() - 1) / c.perNode()})
			b.ResetTimer()
			for range b.N {
				k.lifecycle(b, n)
			}
			b.StopTimer()
			k.checkLogs(b)
		})
	}
}

// lifecycle runs n volumes through provisioning, attaching, detaching
// and deletion, reporting each phase.
func (k *csiCluster) lifecycle(b *testing.B, n int) {
	ctx := b.Context()
	const ns = "default"
	name := func(i int) string { return fmt.Sprintf("bench-%03d", i) }
	var phases []string
	calls := map[string]map[string]int{}
	var total int
	phase := func(what string, do func(i int) error, done func(ctx context.Context) (bool, error)) {
		before, start := k.sim.stats(), time.Now()
		var errs = make([]error, n)
		workqueue.ParallelizeUntil(ctx, 16, n, func(i int) { errs[i] = do(i) })
		for _, err := range errs {
			if err != nil {
				b.Fatalf("%s: %v", what, err)
			}
		}
		eventually(b, 10*time.Minute, what, done)
		b.ReportMetric(time.Since(start).Seconds(), what+"-s")
		calls[what] = map[string]int{}
		sum := 0
		for op, after := range k.sim.stats() {
			if d := after - before[op]; d > 0 {
				calls[what][op], sum = d, sum+d
			}
		}
		total += sum
		b.ReportMetric(float64(sum)/float64(n), what+"-calls/vol")
		phases = append(phases, what)
	}

	waitForConsumer := k.waitsForConsumer(b)
	deletePVC := func(i int) error {
		return k.admin.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, name(i), metav1.DeleteOptions{})
	}
	deleted := func(ctx context.Context) (bool, error) {
		pvs, err := k.admin.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
		return unless(err == nil && len(pvs.Items) == 0 && k.sim.volumes() == 0, "%d PVs, %d cloud volumes (%v)", len(pvs.Items), k.sim.volumes(), err)
	}
	phase("provision", func(i int) error {
		claim := pvc(name(i), k.cloud.storageClass, cmp.Or(k.cloud.size, "1Gi"), nil)
		if waitForConsumer {
			// The scheduler's part (not run here) for the Pod's node.
			claim.Annotations = map[string]string{selectedNode: fmt.Sprintf("node-%d", i/k.cloud.perNode()+1)}
		}
		_, err := k.admin.CoreV1().PersistentVolumeClaims(ns).Create(ctx, claim, metav1.CreateOptions{})
		return err
	}, func(ctx context.Context) (bool, error) {
		list, err := k.admin.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		bound := 0
		for _, c := range list.Items {
			if c.Status.Phase == corev1.ClaimBound {
				bound++
			}
		}
		return unless(bound == n && k.sim.volumes() == n, "%d of %d PVCs bound, %d cloud volumes", bound, n, k.sim.volumes())
	})
	if k.cloud.shared {
		// Nothing is attached: a shared filesystem's cost is provisioning
		// and deletion.
		phase("delete", deletePVC, deleted)
		k.reportCalls(b, n, total, phases, calls)
		return
	}
	phase("attach", func(i int) error {
		_, err := k.admin.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name(i)},
			Spec: corev1.PodSpec{
				NodeName:   fmt.Sprintf("node-%d", i/k.cloud.perNode()+1),
				Containers: []corev1.Container{{Name: "app", Image: "app"}},
				Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name(i)},
				}}},
			},
		}, metav1.CreateOptions{})
		return err
	}, func(ctx context.Context) (bool, error) {
		attached, err := k.attachments(ctx)
		return unless(err == nil && attached == n, "%d of %d attached (%v)", attached, n, err)
	})
	phase("detach", func(i int) error {
		return k.admin.CoreV1().Pods(ns).Delete(ctx, name(i), metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))})
	}, func(ctx context.Context) (bool, error) {
		list, err := k.admin.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{})
		return unless(err == nil && len(list.Items) == 0, "%d VolumeAttachments left (%v)", len(list.Items), err)
	})
	phase("delete", deletePVC, deleted)
	k.reportCalls(b, n, total, phases, calls)
}

// reportCalls reports the calls per volume in all, and logs each phase's
// by operation.
func (k *csiCluster) reportCalls(b *testing.B, n, total int, phases []string, calls map[string]map[string]int) {
	b.ReportMetric(float64(total)/float64(n), "calls/vol")
	for _, p := range phases {
		var ops []string
		for _, op := range slices.Sorted(maps.Keys(calls[p])) {
			ops = append(ops, fmt.Sprintf("%s %.2f", op, float64(calls[p][op])/float64(n)))
		}
		b.Logf("%-9s API calls per volume: %s", p, strings.Join(ops, ", "))
	}
}

// selectedNode is the PVC annotation the scheduler sets for a
// WaitForFirstConsumer class: the node the volume is provisioned for.
const selectedNode = "volume.kubernetes.io/selected-node"

// waitsForConsumer reports whether the cloud's StorageClass binds
// WaitForFirstConsumer.
func (k *csiCluster) waitsForConsumer(t testing.TB) bool {
	t.Helper()
	class, err := k.admin.StorageV1().StorageClasses().Get(t.Context(), k.cloud.storageClass, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := class.VolumeBindingMode
	return m != nil && *m == storagev1.VolumeBindingWaitForFirstConsumer
}

// attachments counts the VolumeAttachments marked attached.
func (k *csiCluster) attachments(ctx context.Context) (int, error) {
	list, err := k.admin.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, a := range list.Items {
		if a.Status.Attached {
			n++
		}
	}
	return n, nil
}
