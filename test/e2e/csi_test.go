package e2e

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/ccmkit/ccmkit/framework/csi/csitest"
	"github.com/ccmkit/ccmkit/framework/frameworktest/kubetest"
	"github.com/ccmkit/ccmkit/internal/cluster"
)

// csiCloud is one cloud's row of TestCSI and BenchmarkCSIPVCs: its CSI
// driver's command, its shipped manifests and its simulator.
type csiCloud struct {
	name      string
	command   string // the driver's main package, e.g. ./cmd/digitalocean-csi-driver
	manifests string // the shipped manifests, relative to this package
	// storageClass is the shipped StorageClass the test provisions from:
	// one whose filesystem grows while mounted here (xfs; ext4's online
	// growth needs CAP_SYS_RESOURCE, which this sandbox drops).
	storageClass  string
	snapshotClass string // the shipped VolumeSnapshotClass; "" for a driver without snapshots
	// sizes are the PVC's size and the size it is expanded to; "" for
	// 1Gi and 2Gi (a cloud with a larger minimum volume needs more).
	size, grownSize string
	// maxPerNode is how many volumes a node takes, when fewer than the
	// benchmark's 7 a node.
	maxPerNode int
	// shared: the driver's volumes are shared filesystems (a
	// csi.SharedFilesystem): nothing is attached, the PVC is
	// ReadWriteMany, and the scenario is sharedRoundTrip's.
	shared bool
	// start starts the simulated cloud, its volumes backed by hv (nil:
	// no devices), with one instance per node name; the first is the
	// host the node plugin runs as.
	start func(t testing.TB, hv *csitest.LoopHypervisor, nodes []string) csiSim
}

// csiSim is a started cloud, as the test needs it.
type csiSim struct {
	token                  string            // the API credential, never to be logged
	controllerEnv, nodeEnv map[string]string // the driver's settings of each mode
	// files are the driver's flags that name a file of the pod (a mounted
	// Secret's, e.g. --cloud-config), set to this machine's copy.
	files map[string]string
	// nodeEnvs, when not nil, are the node plugin's settings on each
	// node (shared filesystems: a node plugin runs on every node),
	// instead of nodeEnv.
	nodeEnvs []map[string]string
	// beforePublish, when not nil, does what the test stands in for
	// before a node publishes volume handle (e.g. serving its NFS
	// export).
	beforePublish  func(t testing.TB, handle string)
	nodeIDs        []string          // each node's CSI node ID, as NodeGetInfo gives it
	topology       map[string]string // the nodes' topology segments, as NodeGetInfo gives them
	device         func(handle string) string
	left           func() []string // volumes and snapshots the cloud holds
	volumes, snaps func() int
	stats          func() map[string]int // API calls so far, by operation
}

var csiClouds = []csiCloud{digitaloceanCSI, openstackCSI, brightboxCSI, tritonCSI, rancherCSI}

const csiNode = "node-1"

var (
	volumeSnapshots = schema.GroupVersionResource{Group: "snapshot.storage.k8s.io", Version: "v1", Resource: "volumesnapshots"}
	volumeSnapshotK = schema.GroupVersionKind{Group: "snapshot.storage.k8s.io", Version: "v1", Kind: "VolumeSnapshot"}
)

// TestCSI runs each cloud's CSI driver as a cluster does, on its shipped
// manifests: kube-controller-manager's PV binder, expander and
// attach-detach controllers, external-provisioner, -attacher, -resizer
// and -snapshotter beside the driver in controller mode, and the
// snapshot controller, each as its ServiceAccount of the shipped RBAC;
// the node plugin in a private mount namespace on real loop devices (the
// simulator's volumes, csitest.LoopHypervisor), and the test standing in
// for the kubelet and node-driver-registrar. A PVC is provisioned,
// attached to the node its Pod is bound to, staged, published and
// written; snapshotted, expanded (the filesystem grows), restored to a
// new PVC that holds the file; and everything deleted leaves no volume,
// snapshot, attachment, loop device or mount behind.
func TestCSI(t *testing.T) {
	for _, c := range csiClouds {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			requireCSIBinaries(t)
			csitest.InMountNamespace(t, func(t *testing.T, _ string) { runCSI(t, c) }, nil)
		})
	}
}

func runCSI(t *testing.T, c csiCloud) {
	if c.shared {
		k := startCSI(t, c, csiOptions{nodes: 2, nodePlugins: true})
		k.sharedRoundTrip(t)
		k.checkEmpty(t)
		return
	}
	k := startCSI(t, c, csiOptions{nodes: 1, devices: true})
	k.roundTrip(t)
	k.checkEmpty(t)
}

// checkEmpty checks that nothing is left: in the cloud, on this host, in
// the API server.
func (k *csiCluster) checkEmpty(t *testing.T) {
	t.Helper()
	// Nothing left: in the cloud, on this host, in the API server.
	if left := k.sim.left(); len(left) > 0 {
		t.Errorf("the cloud still holds %v", left)
	}
	if k.hv != nil {
		if n := k.hv.Attached(); n != 0 {
			t.Errorf("%d loop devices still attached", n)
		}
	}
	if m, err := mountsUnder(k.dir); err != nil || len(m) > 0 {
		t.Errorf("mounts left under the kubelet's directories: %v (%v)", m, err)
	}
	vas, err := k.admin.StorageV1().VolumeAttachments().List(t.Context(), metav1.ListOptions{})
	if err != nil || len(vas.Items) > 0 {
		t.Errorf("VolumeAttachments left: %d (%v)", len(vas.Items), err)
	}
	k.checkLogs(t)
}

// csiOptions say what startCSI starts.
type csiOptions struct {
	nodes int // Nodes and their cloud instances: node-1, node-2...
	// devices: volumes are loop devices (csitest.LoopHypervisor, which
	// needs root), and the node plugin runs on node-1, registered from
	// its NodeGetInfo. Without, there is no node plugin, and each node's
	// CSINode is written from the cloud's node IDs.
	devices bool
	// nodePlugins: a node plugin runs on every node, with its
	// csiSim.nodeEnvs, registered from its NodeGetInfo (a shared
	// filesystem's nodes need no devices).
	nodePlugins bool
}

// csiCluster is what startCSI started.
type csiCluster struct {
	cloud  csiCloud
	sim    csiSim
	hv     *csitest.LoopHypervisor
	admin  kubernetes.Interface
	apply  *applier
	node   csipb.NodeClient            // node-1's plugin
	nodes  map[string]csipb.NodeClient // every node's plugin, by node name
	dir    string                      // logs, sockets, the kubelet's directories
	procs  []*cluster.CCM
	driver string // the driver name
}

// startCSI starts a control plane with c's shipped storage objects and
// RBAC, c's simulated cloud, the driver in controller mode (and node
// mode with o.devices), the sidecars and the snapshot controller as
// their ServiceAccounts with their shipped arguments, and
// kube-controller-manager's storage controllers.
func startCSI(t testing.TB, c csiCloud, o csiOptions) *csiCluster {
	bin := requireCSIBinaries(t)
	root, err := cluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	driverBin, err := cluster.BuildCommand(t.Context(), root, dir, c.command)
	if err != nil {
		t.Fatal(err)
	}
	objs := manifestObjects(t, c.manifests)
	shipped := workloads(t, objs)
	cp := kubetest.StartControlPlane(t, kubetest.ControlPlaneOptions{RBACManifests: []string{filepath.Join(c.manifests, "rbac.yaml")}})
	k := &csiCluster{cloud: c, admin: cp.AdminClient(), apply: newApplier(t, cp.RESTConfig()), dir: dir}
	t.Cleanup(func() {
		if t.Failed() {
			dumpLogs(t, dir)
		}
	})

	// The cluster's storage objects as shipped: the snapshot CRDs first,
	// then the CSIDriver, StorageClasses and VolumeSnapshotClass.
	for _, crdsFirst := range []bool{true, false} {
		for _, o := range objs {
			switch o.GetKind() {
			case "Deployment", "StatefulSet", "DaemonSet", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
				continue
			}
			if (o.GetKind() == "CustomResourceDefinition") == crdsFirst {
				k.apply.create(t, o)
			}
		}
	}

	nodes := make([]kubetest.NodeSpec, o.nodes)
	names := make([]string, o.nodes)
	for i := range nodes {
		names[i] = fmt.Sprintf("node-%d", i+1)
		nodes[i] = kubetest.NodeSpec{Name: names[i]}
	}
	if o.devices {
		k.hv = csitest.NewLoopHypervisor(t)
	}
	k.sim = c.start(t, k.hv, names)
	// The nodes' kubelets post their status every few seconds, as real
	// ones do (at least every 5 minutes, and when their volumes in use
	// change): the attach-detach controller detaches a volume it attached
	// only once a node status shows it no longer in use, and without one
	// a volume whose attach it was still retrying when its Pod went
	// stays attached.
	kubelets, err := kubetest.RegisterNodes(t.Context(), k.admin, nodes, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kubetest.StopAll(kubelets) })

	// The driver, as the shipped workloads run it.
	plugin, ok := shipped[filepath.Base(driverBin)]
	nodePlugin, nodeOK := shipped[filepath.Base(driverBin)+"/node"]
	if !ok || !nodeOK {
		t.Fatalf("the shipped manifests run no %s controller and node containers (have %v)", filepath.Base(driverBin), slices.Sorted(maps.Keys(shipped)))
	}
	ctrlSock := filepath.Join(dir, "controller.sock")
	k.procs = append(k.procs, startProcess(t, dir, driverBin, "driver-controller", k.sim.controllerEnv, localArgs(plugin.container, ctrlSock, k.sim.files, "-v=5")...))
	ctrlConn := dialCSI(t, ctrlSock)
	waitForSocket(t, ctrlConn, "the controller")
	k.driver = pluginName(t, ctrlConn)
	switch {
	case o.devices:
		nodeSock := filepath.Join(dir, "node.sock")
		k.procs = append(k.procs, startProcess(t, dir, driverBin, "driver-node", k.sim.nodeEnv,
			localArgs(nodePlugin.container, nodeSock, k.sim.files, "--by-id-dir="+k.hv.ByIDDir, "-v=5")...))
		nodeConn := dialCSI(t, nodeSock)
		waitForSocket(t, nodeConn, "the node plugin")
		k.node = csipb.NewNodeClient(nodeConn)
		k.nodes = map[string]csipb.NodeClient{names[0]: k.node}
		k.registerNode(t, 0, names[0])
	case o.nodePlugins:
		k.nodes = map[string]csipb.NodeClient{}
		for i, n := range names {
			nodeSock := filepath.Join(dir, n+".sock")
			k.procs = append(k.procs, startProcess(t, dir, driverBin, "driver-"+n, k.sim.nodeEnvs[i],
				localArgs(nodePlugin.container, nodeSock, k.sim.files, "-v=5")...))
			nodeConn := dialCSI(t, nodeSock)
			waitForSocket(t, nodeConn, "the node plugin of "+n)
			k.nodes[n] = csipb.NewNodeClient(nodeConn)
			k.registerNode(t, i, n)
		}
		k.node = k.nodes[names[0]]
	default:
		for i, n := range names {
			k.writeCSINode(t, n, &csipb.NodeGetInfoResponse{
				NodeId: k.sim.nodeIDs[i], AccessibleTopology: &csipb.Topology{Segments: k.sim.topology},
			})
		}
	}

	// The sidecars beside the controller and the snapshot controller, each
	// as its ServiceAccount, with the shipped arguments.
	sidecars := []string{"csi-provisioner", "csi-attacher", "csi-resizer"}
	if c.shared {
		// Nothing to attach; no expansion.
		sidecars = []string{"csi-provisioner"}
	}
	if c.snapshotClass != "" {
		sidecars = append(sidecars, "csi-snapshotter", "snapshot-controller")
	}
	for _, name := range sidecars {
		w, ok := shipped[name]
		if !ok {
			t.Fatalf("the shipped manifests run no %s", name)
		}
		kcfg := serviceAccountKubeconfig(t, cp, dir, w.serviceAccount)
		k.procs = append(k.procs, startProcess(t, dir, filepath.Join(bin, name), name, nil,
			localArgs(w.container, ctrlSock, nil, "--kubeconfig="+kcfg, "--v=4")...))
	}
	// kube-controller-manager's storage controllers, as the cluster admin.
	kcm := filepath.Join(dir, "admin.kubeconfig")
	if err := cp.WriteKubeconfig(kcm); err != nil {
		t.Fatal(err)
	}
	k.procs = append(k.procs, startProcess(t, dir, filepath.Join(bin, "kube-controller-manager"), "kube-controller-manager", nil,
		"--kubeconfig="+kcm, "--leader-elect=false", "--secure-port=0", "--v=2",
		"--controllers=persistentvolume-binder-controller,persistentvolume-expander-controller,"+
			"persistentvolume-attach-detach-controller,persistentvolume-protection-controller,persistentvolumeclaim-protection-controller"))

	// Pod admission looks up the namespace's ServiceAccount, which the
	// serviceaccount controller (not run here) would make.
	if _, err := k.admin.CoreV1().ServiceAccounts("default").Create(t.Context(),
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return k
}

// checkLogs checks that the shipped RBAC let every process do its job
// and that no log holds the API credential.
func (k *csiCluster) checkLogs(t testing.TB) {
	t.Helper()
	var logs []string
	for _, p := range k.procs {
		logs = append(logs, p.Log())
	}
	if lines := forbiddenLines(logs...); len(lines) > 0 {
		t.Errorf("refused with the shipped RBAC:\n%s", strings.Join(lines, ""))
	}
	for i, l := range logs {
		if strings.Contains(l, k.sim.token) {
			t.Errorf("%s logs the API credential", k.procs[i].Name)
		}
	}
}

func pluginName(t testing.TB, conn *grpc.ClientConn) string {
	t.Helper()
	info, err := csipb.NewIdentityClient(conn).GetPluginInfo(t.Context(), &csipb.GetPluginInfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return info.GetName()
}

// registerNode does what node-driver-registrar and the kubelet do when
// the node plugin registers on node, the i-th: write the CSINode entry
// and node annotations from its NodeGetInfo.
func (k *csiCluster) registerNode(t testing.TB, i int, node string) {
	t.Helper()
	info, err := k.nodes[node].NodeGetInfo(t.Context(), &csipb.NodeGetInfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.GetNodeId() != k.sim.nodeIDs[i] {
		t.Fatalf("NodeGetInfo on %s gives node ID %q, want the instance's %q", node, info.GetNodeId(), k.sim.nodeIDs[i])
	}
	k.writeCSINode(t, node, info)
}

// writeCSINode writes what the kubelet and node-driver-registrar write
// for info: the CSINode entry, the node ID annotation, the topology
// labels, and the annotation that hands attaching to the attach-detach
// controller.
func (k *csiCluster) writeCSINode(t testing.TB, name string, info *csipb.NodeGetInfoResponse) {
	t.Helper()
	ctx := t.Context()
	node, err := k.admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var topologyKeys []string
	labels := map[string]string{}
	for key, v := range info.GetAccessibleTopology().GetSegments() {
		topologyKeys = append(topologyKeys, key)
		labels[key] = v
	}
	ids, _ := json.Marshal(map[string]string{k.driver: info.GetNodeId()})
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"labels": labels,
		"annotations": map[string]string{
			"csi.volume.kubernetes.io/nodeid":                        string(ids),
			"volumes.kubernetes.io/controller-managed-attach-detach": "true",
		},
	}})
	if _, err := k.admin.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	drv := storagev1.CSINodeDriver{Name: k.driver, NodeID: info.GetNodeId(), TopologyKeys: topologyKeys}
	if n := info.GetMaxVolumesPerNode(); n > 0 {
		drv.Allocatable = &storagev1.VolumeNodeResources{Count: ptr.To(int32(n))}
	}
	if _, err := k.admin.StorageV1().CSINodes().Create(ctx, &storagev1.CSINode{
		ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID,
		}}},
		Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{drv}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// roundTrip is the scenario.
func (k *csiCluster) roundTrip(t *testing.T) {
	const ns = "default"
	ctx := t.Context()
	pvcs := k.admin.CoreV1().PersistentVolumeClaims(ns)

	k.refusesMisspelt(t, ns)

	// Provisioned: a PVC of the shipped class gets a cloud volume.
	size, grown := cmp.Or(k.cloud.size, "1Gi"), cmp.Or(k.cloud.grownSize, "2Gi")
	if _, err := pvcs.Create(ctx, pvc("data", k.cloud.storageClass, size, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pv := k.waitBound(t, ns, "data")
	if n := k.sim.volumes(); n != 1 {
		t.Fatalf("the cloud holds %d volumes after one PVC, want 1", n)
	}

	// Attached: a Pod bound to the node gets a VolumeAttachment, which the
	// attacher attaches: a loop device appears under the cloud's name.
	writer := k.mount(t, ns, "writer", "data", pv)
	if err := os.WriteFile(filepath.Join(writer.target, "hello"), []byte("written before the snapshot\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	unix.Sync()

	if k.cloud.snapshotClass == "" {
		k.expand(t, ns, "data", pv, writer, grown)
		k.unmount(t, ns, writer)
		k.deletePVCs(t, ns, "data")
		return
	}

	// Snapshotted.
	snap := &unstructured.Unstructured{}
	snap.SetGroupVersionKind(volumeSnapshotK)
	snap.SetName("data-snap")
	snap.SetNamespace(ns)
	snap.Object["spec"] = map[string]any{
		"volumeSnapshotClassName": k.cloud.snapshotClass,
		"source":                  map[string]any{"persistentVolumeClaimName": "data"},
	}
	k.apply.create(t, snap)
	eventually(t, 2*time.Minute, "the VolumeSnapshot is ready to use", func(ctx context.Context) (bool, error) {
		s, err := k.apply.dyn.Resource(volumeSnapshots).Namespace(ns).Get(ctx, "data-snap", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ready, _, _ := unstructured.NestedBool(s.Object, "status", "readyToUse")
		return unless(ready, "status %v", s.Object["status"])
	})
	if n := k.sim.snaps(); n != 1 {
		t.Fatalf("the cloud holds %d snapshots, want 1", n)
	}

	// Expanded: the PVC grows, the resizer grows the cloud volume (and the
	// loop device), the kubelet grows the mounted filesystem.
	k.expand(t, ns, "data", pv, writer, grown)

	// Unmounted and detached.
	k.unmount(t, ns, writer)

	// Restored: a new PVC from the snapshot holds the file.
	restored := pvc("restored", k.cloud.storageClass, grown, &corev1.TypedLocalObjectReference{
		APIGroup: ptr.To(volumeSnapshots.Group), Kind: "VolumeSnapshot", Name: "data-snap",
	})
	if _, err := pvcs.Create(ctx, restored, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rpv := k.waitBound(t, ns, "restored")
	reader := k.mount(t, ns, "reader", "restored", rpv)
	b, err := os.ReadFile(filepath.Join(reader.target, "hello"))
	if err != nil || string(b) != "written before the snapshot\n" {
		t.Errorf("the restored volume holds %q (%v), want the file written before the snapshot", b, err)
	}
	k.unmount(t, ns, reader)

	// Deleted: the snapshot, then both PVCs; the cloud ends empty.
	if err := k.apply.dyn.Resource(volumeSnapshots).Namespace(ns).Delete(ctx, "data-snap", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "the cloud's snapshot is deleted", func(context.Context) (bool, error) {
		return k.sim.snaps() == 0, nil
	})
	k.deletePVCs(t, ns, "data", "restored")
}

// refusesMisspelt checks that a StorageClass parameter the driver does
// not take gets the PVC a Warning naming it, and the cloud no volume.
func (k *csiCluster) refusesMisspelt(t *testing.T, ns string) {
	t.Helper()
	ctx := t.Context()
	pvcs := k.admin.CoreV1().PersistentVolumeClaims(ns)
	bad, err := k.admin.StorageV1().StorageClasses().Get(ctx, k.cloud.storageClass, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bad.ObjectMeta = metav1.ObjectMeta{Name: "misspelt"}
	bad.Parameters = map[string]string{"fstpye": "xfs"}
	// Provisioned at once, with no scheduler to select a node.
	bad.VolumeBindingMode = ptr.To(storagev1.VolumeBindingImmediate)
	if _, err := k.admin.StorageV1().StorageClasses().Create(ctx, bad, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pvcs.Create(ctx, pvc("misspelt", "misspelt", "1Gi", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "a ProvisioningFailed Warning naming fstpye", func(ctx context.Context) (bool, error) {
		events, err := k.admin.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=misspelt"})
		if err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.Type == corev1.EventTypeWarning && e.Reason == "ProvisioningFailed" && strings.Contains(e.Message, "fstpye") &&
				strings.Contains(e.Message, "InvalidArgument") {
				return true, nil
			}
		}
		return false, fmt.Errorf("%d events", len(events.Items))
	})
	if n := k.sim.volumes(); n != 0 {
		t.Fatalf("the cloud holds %d volumes after a refused PVC", n)
	}
	if err := pvcs.Delete(ctx, "misspelt", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// deletePVCs deletes the PVCs and waits until their PVs and the cloud's
// volumes are gone.
func (k *csiCluster) deletePVCs(t *testing.T, ns string, names ...string) {
	t.Helper()
	for _, name := range names {
		if err := k.admin.CoreV1().PersistentVolumeClaims(ns).Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 2*time.Minute, "the PVs and the cloud's volumes are deleted", func(ctx context.Context) (bool, error) {
		pvs, err := k.admin.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		return unless(len(pvs.Items) == 0 && k.sim.volumes() == 0, "%d PVs; the cloud holds %v", len(pvs.Items), k.sim.left())
	})
}

func pvc(name, class, size string, source *corev1.TypedLocalObjectReference) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: ptr.To(class),
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
			DataSource:       source,
		},
	}
}

// waitBound waits for the PVC to be bound, and returns its PV.
func (k *csiCluster) waitBound(t *testing.T, ns, name string) *corev1.PersistentVolume {
	t.Helper()
	var pv *corev1.PersistentVolume
	eventually(t, 2*time.Minute, "PVC "+name+" is bound", func(ctx context.Context) (bool, error) {
		c, err := k.admin.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil || c.Status.Phase != corev1.ClaimBound {
			return false, err
		}
		pv, err = k.admin.CoreV1().PersistentVolumes().Get(ctx, c.Spec.VolumeName, metav1.GetOptions{})
		return err == nil && pv.Spec.CSI != nil, err
	})
	if pv.Spec.CSI.Driver != k.driver {
		t.Fatalf("PV %s is %s's, want %s's", pv.Name, pv.Spec.CSI.Driver, k.driver)
	}
	return pv
}

// mounted is a volume the stand-in kubelet staged and published for a Pod.
type mounted struct {
	pod, node       string
	handle          string
	staging, target string
	capability      *csipb.VolumeCapability
	publishContext  map[string]string
	volumeContext   map[string]string
}

// mount binds a Pod using claim to the node, waits for the attach-detach
// controller's VolumeAttachment to be attached by the attacher (and the
// device to appear under the cloud's by-id name), then stages and
// publishes the volume through the node plugin's socket as the kubelet
// does.
func (k *csiCluster) mount(t *testing.T, ns, pod, claim string, pv *corev1.PersistentVolume) mounted {
	t.Helper()
	ctx := t.Context()
	if _, err := k.admin.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: pod},
		Spec: corev1.PodSpec{
			NodeName:   csiNode,
			Containers: []corev1.Container{{Name: "app", Image: "app"}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim},
			}}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	handle := pv.Spec.CSI.VolumeHandle
	var va *storagev1.VolumeAttachment
	eventually(t, 2*time.Minute, "the VolumeAttachment of "+pv.Name+" is attached", func(ctx context.Context) (bool, error) {
		list, err := k.admin.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for i := range list.Items {
			a := &list.Items[i]
			if a.Spec.Source.PersistentVolumeName != nil && *a.Spec.Source.PersistentVolumeName == pv.Name && a.Spec.NodeName == csiNode {
				va = a
				return unless(a.Status.Attached, "status %+v", a.Status)
			}
		}
		return false, fmt.Errorf("no VolumeAttachment of %s among %d", pv.Name, len(list.Items))
	})
	link := k.sim.device(handle)
	if dev, err := filepath.EvalSymlinks(link); err != nil || !strings.HasPrefix(dev, "/dev/loop") {
		t.Fatalf("the attached volume's device %s is %q (%v), want a loop device", link, dev, err)
	}

	m := mounted{
		pod: pod, handle: handle,
		staging:        filepath.Join(k.dir, "kubelet", "plugins", "kubernetes.io", "csi", k.driver, pv.Name, "globalmount"),
		target:         filepath.Join(k.dir, "kubelet", "pods", pod, "volumes", "kubernetes.io~csi", pv.Name, "mount"),
		publishContext: va.Status.AttachmentMetadata,
		volumeContext:  pv.Spec.CSI.VolumeAttributes,
		capability: &csipb.VolumeCapability{
			AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
			AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{FsType: pv.Spec.CSI.FSType}},
		},
	}
	// The kubelet makes the staging directory's parent; the driver the rest.
	if err := os.MkdirAll(filepath.Dir(m.staging), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(m.target), 0o750); err != nil {
		t.Fatal(err)
	}
	k.retryAborted(t, "NodeStageVolume", func(ctx context.Context) error {
		_, err := k.node.NodeStageVolume(ctx, &csipb.NodeStageVolumeRequest{
			VolumeId: handle, PublishContext: m.publishContext, StagingTargetPath: m.staging,
			VolumeCapability: m.capability, VolumeContext: m.volumeContext,
		})
		return err
	})
	k.retryAborted(t, "NodePublishVolume", func(ctx context.Context) error {
		_, err := k.node.NodePublishVolume(ctx, &csipb.NodePublishVolumeRequest{
			VolumeId: handle, PublishContext: m.publishContext, StagingTargetPath: m.staging, TargetPath: m.target,
			VolumeCapability: m.capability, VolumeContext: m.volumeContext,
		})
		return err
	})
	return m
}

// retryAborted calls op until it does not fail Aborted or Unavailable,
// as the kubelet's operation executor retries.
func (k *csiCluster) retryAborted(t *testing.T, what string, op func(ctx context.Context) error) {
	t.Helper()
	eventually(t, time.Minute, what, func(ctx context.Context) (bool, error) {
		err := op(ctx)
		if err != nil && !retryable(err) {
			t.Fatalf("%s: %v", what, err)
		}
		return err == nil, err
	})
}

// unmount unpublishes and unstages m as the kubelet does, deletes its Pod
// and waits for the attach-detach controller to detach the volume.
func (k *csiCluster) unmount(t *testing.T, ns string, m mounted) {
	t.Helper()
	k.retryAborted(t, "NodeUnpublishVolume", func(ctx context.Context) error {
		_, err := k.node.NodeUnpublishVolume(ctx, &csipb.NodeUnpublishVolumeRequest{VolumeId: m.handle, TargetPath: m.target})
		return err
	})
	k.retryAborted(t, "NodeUnstageVolume", func(ctx context.Context) error {
		_, err := k.node.NodeUnstageVolume(ctx, &csipb.NodeUnstageVolumeRequest{VolumeId: m.handle, StagingTargetPath: m.staging})
		return err
	})
	if err := k.admin.CoreV1().Pods(ns).Delete(t.Context(), m.pod, metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "the volume of "+m.pod+" is detached", func(ctx context.Context) (bool, error) {
		list, err := k.admin.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		_, err = os.Lstat(k.sim.device(m.handle))
		return unless(len(list.Items) == 0 && os.IsNotExist(err), "%d VolumeAttachments; device link: %v", len(list.Items), err)
	})
}

// expand grows the claim to size: the resizer grows the cloud's volume,
// then the stand-in kubelet grows the mounted filesystem (NodeExpandVolume)
// and records it in the PVC's status, as the kubelet does.
func (k *csiCluster) expand(t *testing.T, ns, claim string, pv *corev1.PersistentVolume, m mounted, size string) {
	t.Helper()
	ctx := t.Context()
	before := fsSize(t, m.target)
	want := resource.MustParse(size)
	patch := fmt.Sprintf(`{"spec":{"resources":{"requests":{"storage":%q}}}}`, size)
	if _, err := k.admin.CoreV1().PersistentVolumeClaims(ns).Patch(ctx, claim, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "the PV of "+claim+" is "+size+" and the filesystem's resize pending", func(ctx context.Context) (bool, error) {
		p, err := k.admin.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c, err := k.admin.CoreV1().PersistentVolumeClaims(ns).Get(ctx, claim, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pending := false
		for _, cond := range c.Status.Conditions {
			pending = pending || cond.Type == corev1.PersistentVolumeClaimFileSystemResizePending
		}
		capacity := p.Spec.Capacity[corev1.ResourceStorage]
		return unless(capacity.Cmp(want) >= 0 && pending, "PV capacity %s, PVC conditions %+v", capacity.String(), c.Status.Conditions)
	})
	k.retryAborted(t, "NodeExpandVolume", func(ctx context.Context) error {
		_, err := k.node.NodeExpandVolume(ctx, &csipb.NodeExpandVolumeRequest{
			VolumeId: m.handle, VolumePath: m.target, StagingTargetPath: m.staging,
			CapacityRange: &csipb.CapacityRange{RequiredBytes: want.Value()}, VolumeCapability: m.capability,
		})
		return err
	})
	if after := fsSize(t, m.target); after <= before || after < want.Value()*9/10 {
		t.Errorf("the mounted filesystem is %d bytes after growing to %s, was %d", after, size, before)
	}
	// The kubelet's part: the claim's status says the new size.
	status := fmt.Sprintf(`{"status":{"capacity":{"storage":%q},"conditions":null,"allocatedResourceStatuses":null}}`, size)
	if _, err := k.admin.CoreV1().PersistentVolumeClaims(ns).Patch(ctx, claim, types.MergePatchType, []byte(status),
		metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
}

// fsSize is the size of the filesystem mounted at path, in bytes.
func fsSize(t *testing.T, path string) int64 {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Blocks) * st.Bsize
}

// unless is an eventually condition's answer: ok, or why not yet.
func unless(ok bool, format string, args ...any) (bool, error) {
	if ok {
		return true, nil
	}
	return false, fmt.Errorf(format, args...)
}
