package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"

	"github.com/ccmkit/ccmkit/internal/cluster"
)

// postImages gives each node status.images as a real kubelet reports them
// (the stand-in reports none): n images (kubelet's default cap,
// --node-status-max-images, is 50), each with a digest and a tag name,
// through an unthrottled client, 16 nodes at a time.
func postImages(ctx context.Context, c *cluster.Cluster, prefix string, nodes, n int) error {
	if n == 0 {
		return nil
	}
	cfg := c.ControlPlane.RESTConfig()
	cfg.QPS, cfg.Burst = -1, 0
	fast, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"images": nodeImages(n)}})
	if err != nil {
		return err
	}
	errs := make([]error, nodes)
	workqueue.ParallelizeUntil(ctx, 16, nodes, func(i int) {
		name := prefix + "-" + strconv.Itoa(i)
		_, errs[i] = fast.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	})
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("posting node images: %w", err)
		}
	}
	return ctx.Err()
}

// nodeImages are n images in kubelet's form: registry/repo@sha256:<digest>
// and registry/repo:tag.
func nodeImages(n int) []corev1.ContainerImage {
	out := make([]corev1.ContainerImage, n)
	for i := range out {
		repo := fmt.Sprintf("registry.example.com/platform/component-%02d", i)
		out[i] = corev1.ContainerImage{
			Names:     []string{fmt.Sprintf("%s@sha256:%064x", repo, 0xc0ffee+i), fmt.Sprintf("%s:v1.%d.0", repo, i)},
			SizeBytes: int64(20+i) << 20,
		}
	}
	return out
}
