package triton

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// This file is CNS mode: no appliance; the Service's nodes join its CNS
// service with an entry <name>:<nodePort> per port, so that
// <name>.svc.<account>.<zone> resolves to the nodes CNS deems up (running,
// not drained: drain.go) and its SRV records carry the NodePorts. DNS maps
// no ports: clients must connect to a NodePort, which a Normal Event on
// the Service says.

// EventCNSPorts is the reason of the Normal Event that tells a CNS
// load balancer's users which ports to connect to.
const EventCNSPorts = "CNSLoadBalancerPorts"

// updateCNS makes the Service's nodes, and only they, carry its entries.
// It reports whether it wrote.
func (d *lbDriver) updateCNS(ctx context.Context, lb *tritonLB, req *lbRequest) (bool, error) {
	entries := cnsPortEntries(lb.cns, nodePorts(req.Service))
	want := map[string][]cnsEntry{}
	for _, id := range d.targetMachines(ctx, req.Nodes) {
		want[id] = entries
	}
	wrote, err := d.syncNodeEntries(ctx, lb.cns, want)
	if err != nil {
		return wrote, fmt.Errorf("CNS service %s: %w", lb.cns, err)
	}
	if wrote {
		d.event(req.Service, corev1.EventTypeNormal, EventCNSPorts,
			"CNS name %s resolves to the Service's Ready nodes; DNS maps no ports, so clients connect to the node ports %s (also in its SRV records), not to the Service ports %s",
			cnsHostname(lb.cns, d.api.AccountID, d.publicZone()), portList(nodePorts(req.Service)), portList(servicePorts(req.Service)))
	}
	return wrote, nil
}

// nodePorts and servicePorts are the Service's ports of each kind.
func nodePorts(svc *corev1.Service) []int32 {
	out := make([]int32, 0, len(svc.Spec.Ports))
	for _, p := range svc.Spec.Ports {
		out = append(out, p.NodePort)
	}
	return out
}

func servicePorts(svc *corev1.Service) []int32 {
	out := make([]int32, 0, len(svc.Spec.Ports))
	for _, p := range svc.Spec.Ports {
		out = append(out, p.Port)
	}
	return out
}

func portList(ports []int32) string {
	s := make([]string, len(ports))
	for i, p := range ports {
		s[i] = strconv.Itoa(int(p))
	}
	return strings.Join(s, ", ")
}
