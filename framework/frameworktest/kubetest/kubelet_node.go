package kubetest

import (
	"crypto/sha256"
	"encoding/hex"
	"runtime"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cloudproviderapi "k8s.io/cloud-provider/api"
)

// What the stand-in kubelet reports about itself.
const (
	KubeletVersion = "v1.37.1"
	// NodeLeaseDurationSeconds is kubelet's default --node-lease-duration-seconds.
	NodeLeaseDurationSeconds = 40

	kubeletPort = 10250
	// controllerManagedAttachAnnotation is set by kubelet's default
	// --enable-controller-attach-detach.
	controllerManagedAttachAnnotation = "volumes.kubernetes.io/controller-managed-attach-detach"
	// Beta OS/arch labels kubelet still sets next to the stable ones.
	betaLabelOS   = "beta.kubernetes.io/os"
	betaLabelArch = "beta.kubernetes.io/arch"
)

// The conditions kubelet posts, Ready last as kubelet orders them.
var kubeletConditions = []struct {
	typ     corev1.NodeConditionType
	status  corev1.ConditionStatus
	reason  string
	message string
}{
	{corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
	{corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
	{corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
	{corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"},
}

// initialNode builds the Node kubelet v1.37 registers with
// --cloud-provider=external (pkg/kubelet/kubelet_node_status.go
// initialNode and pkg/kubelet/nodestatus setters):
//   - the uninitialized taint, which the CCM's node controller removes;
//   - kubernetes.io/hostname, kubernetes.io/os, kubernetes.io/arch and their
//     beta twins;
//   - no providerID, no zone, region or instance-type labels: the CCM adds
//     them;
//   - alpha.kubernetes.io/provided-node-ip when kubelet has --node-ip, and
//     then addresses InternalIP=<ip> and Hostname; without --node-ip only a
//     Hostname address. The CCM replaces both with the cloud's addresses.
//
// spec.podCIDR(s) is not kubelet's: in a cluster kube-controller-manager's
// node IPAM (--allocate-node-cidrs) sets it after registration; the stand-in
// sets it at creation so the CCM's route controller has one to route.
func initialNode(spec NodeSpec, now time.Time) *corev1.Node {
	hostname := spec.Name
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: spec.Name,
			Labels: map[string]string{
				corev1.LabelHostname:   hostname,
				corev1.LabelOSStable:   "linux",
				corev1.LabelArchStable: runtime.GOARCH,
				betaLabelOS:            "linux",
				betaLabelArch:          runtime.GOARCH,
			},
			Annotations: map[string]string{controllerManagedAttachAnnotation: "true"},
		},
		Spec: corev1.NodeSpec{
			Taints: []corev1.Taint{{
				Key:    cloudproviderapi.TaintExternalCloudProvider,
				Value:  "true",
				Effect: corev1.TaintEffectNoSchedule,
			}},
		},
		Status: nodeStatus(spec.Name, now),
	}
	for k, v := range spec.Labels {
		node.Labels[k] = v
	}
	if spec.PodCIDR != "" {
		cidrs := splitList(spec.PodCIDR)
		node.Spec.PodCIDR, node.Spec.PodCIDRs = cidrs[0], cidrs
	}
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: hostname}}
	if spec.ProvidedIP != "" {
		node.Annotations[cloudproviderapi.AnnotationAlphaProvidedIPAddr] = spec.ProvidedIP
		var addrs []corev1.NodeAddress
		for _, ip := range splitList(spec.ProvidedIP) {
			addrs = append(addrs, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip})
		}
		node.Status.Addresses = append(addrs, node.Status.Addresses...)
	}
	return node
}

func nodeStatus(name string, now time.Time) corev1.NodeStatus {
	resources := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("2"),
		corev1.ResourceMemory: resource.MustParse("4Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	id := machineID(name)
	return corev1.NodeStatus{
		Capacity:    resources,
		Allocatable: resources.DeepCopy(),
		Conditions:  conditions(now),
		DaemonEndpoints: corev1.NodeDaemonEndpoints{
			KubeletEndpoint: corev1.DaemonEndpoint{Port: kubeletPort},
		},
		NodeInfo: corev1.NodeSystemInfo{
			MachineID:               id,
			SystemUUID:              id,
			BootID:                  id,
			KernelVersion:           "6.12.0",
			OSImage:                 "Debian GNU/Linux 13 (trixie)",
			ContainerRuntimeVersion: "containerd://2.1.0",
			KubeletVersion:          KubeletVersion,
			OperatingSystem:         "linux",
			Architecture:            runtime.GOARCH,
		},
	}
}

// conditions are kubelet's healthy conditions as posted at registration.
func conditions(now time.Time) []corev1.NodeCondition {
	out := make([]corev1.NodeCondition, 0, len(kubeletConditions))
	for _, c := range kubeletConditions {
		out = append(out, corev1.NodeCondition{
			Type:               c.typ,
			Status:             c.status,
			Reason:             c.reason,
			Message:            c.message,
			LastHeartbeatTime:  metav1.NewTime(now),
			LastTransitionTime: metav1.NewTime(now),
		})
	}
	return out
}

// conditionPatch is a NodeCondition in a strategic merge patch. Unlike
// NodeCondition it can leave a time out: a zero metav1.Time marshals as
// null, which the patch would take as "delete the field".
type conditionPatch struct {
	Type               corev1.NodeConditionType `json:"type"`
	Status             corev1.ConditionStatus   `json:"status"`
	Reason             string                   `json:"reason"`
	Message            string                   `json:"message"`
	LastHeartbeatTime  *metav1.Time             `json:"lastHeartbeatTime,omitempty"`
	LastTransitionTime *metav1.Time             `json:"lastTransitionTime,omitempty"`
}

// heartbeatConditions refresh the heartbeat time of kubelet's healthy
// conditions. A condition whose status in current (nil: unknown, taken as
// unchanged) differs also gets a new transition time; the others keep
// theirs.
func heartbeatConditions(now time.Time, current *corev1.Node) []conditionPatch {
	t := metav1.NewTime(now)
	out := make([]conditionPatch, 0, len(kubeletConditions))
	for _, c := range kubeletConditions {
		p := conditionPatch{Type: c.typ, Status: c.status, Reason: c.reason, Message: c.message, LastHeartbeatTime: &t}
		if current != nil && nodeConditionStatus(current, c.typ) != c.status {
			p.LastTransitionTime = &t
		}
		out = append(out, p)
	}
	return out
}

func nodeConditionStatus(node *corev1.Node, typ corev1.NodeConditionType) corev1.ConditionStatus {
	for _, c := range node.Status.Conditions {
		if c.Type == typ {
			return c.Status
		}
	}
	return ""
}

// unknownConditions is what kube-controller-manager's node lifecycle
// controller writes once a node stopped posting status for its grace
// period: every kubelet condition Unknown, heartbeat times left as they were.
func unknownConditions(now time.Time) []conditionPatch {
	t := metav1.NewTime(now)
	out := make([]conditionPatch, 0, len(kubeletConditions))
	for _, c := range kubeletConditions {
		out = append(out, conditionPatch{
			Type:               c.typ,
			Status:             corev1.ConditionUnknown,
			Reason:             "NodeStatusUnknown",
			Message:            "Kubelet stopped posting node status.",
			LastTransitionTime: &t,
		})
	}
	return out
}

// nodeLease is the Lease kubelet renews in kube-node-lease, owned by its Node.
func nodeLease(node *corev1.Node, duration int32, now time.Time) *coordinationv1.Lease {
	holder := node.Name
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name:      node.Name,
			Namespace: corev1.NamespaceNodeLease,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1",
				Kind:       "Node",
				Name:       node.Name,
				UID:        node.UID,
			}},
		},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       &holder,
			LeaseDurationSeconds: &duration,
			RenewTime:            &metav1.MicroTime{Time: now},
		},
	}
}

func machineID(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:16])
}

func splitList(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
