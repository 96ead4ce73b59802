package e2e

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// sharedRoundTrip is the scenario of a shared filesystem's driver: a
// ReadWriteMany PVC is provisioned in the cloud; Pods on node-1 and
// node-2 use it at once (the test publishes it through each node's
// plugin, as their kubelets do), and what one writes the other reads;
// nothing is attached (the CSIDriver says attachRequired: false, so the
// attach-detach controller makes no VolumeAttachment); unpublished, and
// the Pods and the PVC deleted, the cloud holds nothing.
func (k *csiCluster) sharedRoundTrip(t *testing.T) {
	const ns = "default"
	ctx := t.Context()
	k.refusesMisspelt(t, ns)

	claim := pvc("shared", k.cloud.storageClass, cmp.Or(k.cloud.size, "1Gi"), nil)
	claim.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
	if k.waitsForConsumer(t) {
		// The scheduler's part (not run here) for the first Pod's node:
		// the provisioner provisions for the node it selected.
		claim.Annotations = map[string]string{selectedNode: "node-1"}
	}
	if _, err := k.admin.CoreV1().PersistentVolumeClaims(ns).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pv := k.waitBound(t, ns, "shared")
	if n := k.sim.volumes(); n != 1 {
		t.Fatalf("the cloud holds %d volumes after one PVC, want 1", n)
	}

	writer := k.publishShared(t, ns, "writer", "node-1", "shared", pv)
	reader := k.publishShared(t, ns, "reader", "node-2", "shared", pv)
	for _, step := range []struct {
		from, to mounted
		file     string
	}{{writer, reader, "hello"}, {reader, writer, "reply"}} {
		want := "written on " + step.from.node + "\n"
		if err := os.WriteFile(filepath.Join(step.from.target, step.file), []byte(want), 0o600); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(filepath.Join(step.to.target, step.file)); err != nil || string(got) != want {
			t.Errorf("%s reads %q (%v) from %s, want what %s wrote", step.to.node, got, err, step.file, step.from.node)
		}
	}
	vas, err := k.admin.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{})
	if err != nil || len(vas.Items) > 0 {
		t.Errorf("VolumeAttachments of a shared filesystem: %d (%v), want none", len(vas.Items), err)
	}

	k.unpublishShared(t, ns, writer)
	k.unpublishShared(t, ns, reader)
	k.deletePVCs(t, ns, "shared")
}

// publishShared binds a Pod using claim to node and publishes the
// volume at the Pod's target through node's plugin, as its kubelet does
// for a driver without staging.
func (k *csiCluster) publishShared(t *testing.T, ns, pod, node, claim string, pv *corev1.PersistentVolume) mounted {
	t.Helper()
	if _, err := k.admin.CoreV1().Pods(ns).Create(t.Context(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: pod},
		Spec: corev1.PodSpec{
			NodeName:   node,
			Containers: []corev1.Container{{Name: "app", Image: "app"}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim},
			}}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	m := mounted{
		pod: pod, node: node, handle: pv.Spec.CSI.VolumeHandle,
		target:        filepath.Join(k.dir, "kubelet-"+node, "pods", pod, "volumes", "kubernetes.io~csi", pv.Name, "mount"),
		volumeContext: pv.Spec.CSI.VolumeAttributes,
		capability: &csipb.VolumeCapability{
			AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER},
			AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{FsType: pv.Spec.CSI.FSType}},
		},
	}
	// The kubelet makes the target's parent; the driver the rest.
	if err := os.MkdirAll(filepath.Dir(m.target), 0o750); err != nil {
		t.Fatal(err)
	}
	if k.sim.beforePublish != nil {
		k.sim.beforePublish(t, m.handle)
	}
	k.retryAborted(t, "NodePublishVolume on "+node, func(ctx context.Context) error {
		_, err := k.nodes[node].NodePublishVolume(ctx, &csipb.NodePublishVolumeRequest{
			VolumeId: m.handle, TargetPath: m.target, VolumeCapability: m.capability, VolumeContext: m.volumeContext,
		})
		return err
	})
	return m
}

// unpublishShared unpublishes m as its node's kubelet does and deletes
// its Pod.
func (k *csiCluster) unpublishShared(t *testing.T, ns string, m mounted) {
	t.Helper()
	k.retryAborted(t, "NodeUnpublishVolume on "+m.node, func(ctx context.Context) error {
		_, err := k.nodes[m.node].NodeUnpublishVolume(ctx, &csipb.NodeUnpublishVolumeRequest{VolumeId: m.handle, TargetPath: m.target})
		return err
	})
	if _, err := os.Stat(m.target); !os.IsNotExist(err) {
		t.Errorf("the target %s is still there after NodeUnpublishVolume (%v)", m.target, err)
	}
	if err := k.admin.CoreV1().Pods(ns).Delete(t.Context(), m.pod, metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))}); err != nil {
		t.Fatal(err)
	}
}
