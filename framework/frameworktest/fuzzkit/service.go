package fuzzkit

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Service returns a LoadBalancer Service carrying ann, in one of a few
// shapes picked by shape (any value is fine): TCP ports 80 and 443; TCP
// and UDP on port 53; one UDP port; externalTrafficPolicy Local with a
// health-check node port and source ranges; IPv6 single-stack with a
// named SCTP port and a loadBalancerClass.
func Service(shape uint8, ann map[string]string) *corev1.Service {
	port := func(name string, proto corev1.Protocol, p, nodePort int32) corev1.ServicePort {
		return corev1.ServicePort{Name: name, Protocol: proto, Port: p, NodePort: nodePort, TargetPort: intstr.FromInt32(p)}
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "8a6e5e0c-6a8f-4b8e-9d6c-2f0a3c1b7e11", Annotations: ann},
		Spec: corev1.ServiceSpec{
			Type:                  corev1.ServiceTypeLoadBalancer,
			ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyCluster,
			IPFamilies:            []corev1.IPFamily{corev1.IPv4Protocol},
			Ports:                 []corev1.ServicePort{port("http", corev1.ProtocolTCP, 80, 30080), port("https", corev1.ProtocolTCP, 443, 30443)},
		},
	}
	switch shape % 5 {
	case 1:
		svc.Spec.Ports = []corev1.ServicePort{port("dns-tcp", corev1.ProtocolTCP, 53, 30053), port("dns", corev1.ProtocolUDP, 53, 30053)}
	case 2:
		svc.Spec.Ports = []corev1.ServicePort{port("", corev1.ProtocolUDP, 5353, 31353)}
	case 3:
		svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		svc.Spec.HealthCheckNodePort = 32000
		svc.Spec.LoadBalancerSourceRanges = []string{"203.0.113.0/24", "2001:db8::/32"}
	case 4:
		svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}
		svc.Spec.Ports = append(svc.Spec.Ports, port("sctp", corev1.ProtocolSCTP, 9000, 31900))
		class := "example.com/lb"
		svc.Spec.LoadBalancerClass = &class
	}
	return svc
}

// Nodes returns three Ready Nodes with providerIDs formatted by format
// (from their instance IDs "1001", "1002", "1003") and IPv4 and IPv6
// internal and external addresses; the third has no providerID and no
// InternalIP.
func Nodes(format func(id string) string) []*corev1.Node {
	var nodes []*corev1.Node
	for i, id := range []string{"1001", "1002", "1003"} {
		n := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "node-" + id, Labels: map[string]string{"kubernetes.io/hostname": "node-" + id}},
			Spec:       corev1.NodeSpec{ProviderID: format(id)},
			Status: corev1.NodeStatus{
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
				Addresses: []corev1.NodeAddress{
					{Type: corev1.NodeInternalIP, Address: "10.0.0." + id[3:]},
					{Type: corev1.NodeInternalIP, Address: "fd00::" + id[3:]},
					{Type: corev1.NodeExternalIP, Address: "203.0.113." + id[3:]},
					{Type: corev1.NodeHostName, Address: "node-" + id},
				},
			},
		}
		if i == 2 {
			n.Spec.ProviderID = ""
			n.Status.Addresses = n.Status.Addresses[2:]
		}
		nodes = append(nodes, n)
	}
	return nodes
}

// NamesAnnotation fails t unless each error joined in err names an
// annotation: holds one of keys, a prefix or a full key.
func NamesAnnotation(t testing.TB, err error, keys ...string) {
	t.Helper()
	for _, e := range unjoin(err) {
		named := false
		for _, k := range keys {
			named = named || strings.Contains(e.Error(), k)
		}
		if !named {
			t.Errorf("error names no annotation (%q): %v", keys, e)
		}
	}
}
