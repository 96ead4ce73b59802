package framework

import (
	"context"
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// patchAnnotation sets one annotation on a Service with a merge patch, so it
// never overwrites concurrent changes to anything else.
func patchAnnotation(ctx context.Context, client kubernetes.Interface, svc *corev1.Service, key, value string) error {
	return patchAnnotations(ctx, client, svc.Namespace, svc.Name, map[string]*string{key: &value})
}

// patchAnnotations sets, or for nil values removes, annotations of a
// Service with a merge patch.
func patchAnnotations(ctx context.Context, client kubernetes.Interface, namespace, name string, annotations map[string]*string) error {
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": annotations},
	})
	if err != nil {
		return err
	}
	_, err = client.CoreV1().Services(namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// PatchServiceAnnotation sets one annotation on a Service with a merge
// patch, for drivers that record what the cloud changed (a renewed
// certificate's ID, say). A nil client (unit tests without a cluster) is a
// no-op.
func PatchServiceAnnotation(ctx context.Context, client kubernetes.Interface, svc *corev1.Service, key, value string) error {
	if client == nil {
		return nil
	}
	return patchAnnotation(ctx, client, svc, key, value)
}
