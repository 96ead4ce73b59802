package soak

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	cloudprovider "k8s.io/cloud-provider"
	cloudproviderapi "k8s.io/cloud-provider/api"

	"github.com/ccmkit/ccmkit/framework/frameworktest/simkit"
	"github.com/ccmkit/ccmkit/internal/cluster"
)

// companions lists the cloud's load balancer companions, nil for a cloud
// without (one whose simulator is no simkit.CompanionLister), and their
// names, nil for a cloud that does not give them (no
// simkit.CompanionNamer).
func companions(s cluster.Sim) (lbs, names map[string]string) {
	if n, ok := s.(simkit.CompanionNamer); ok {
		return n.Companions(), n.CompanionNames()
	}
	if l, ok := s.(simkit.CompanionLister); ok {
		return l.Companions(), nil
	}
	return nil, nil
}

// snapshot reads what the invariants look at from the API server and the
// cloud.
func (d *driver) snapshot(ctx context.Context, caps Capabilities, baseline map[string]string) (Snapshot, error) {
	kube := d.c.Kube.CoreV1()
	// The record first: a Node the soak deletes between the two reads is
	// then recorded before the API server is read.
	s := Snapshot{Record: d.snapshotRecord(), Baseline: baseline}
	nodes, err := kube.Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return s, err
	}
	for _, n := range nodes.Items {
		_, excluded := n.Labels[corev1.LabelNodeExcludeBalancers]
		s.Nodes = append(s.Nodes, Node{
			Name:          n.Name,
			Initialized:   !hasTaint(&n, cloudproviderapi.TaintExternalCloudProvider),
			Excluded:      excluded,
			ShutdownTaint: hasTaint(&n, cloudproviderapi.TaintNodeShutdown),
		})
	}
	services, err := kube.Services(d.c.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return s, err
	}
	warned, err := d.warned(ctx)
	if err != nil {
		return s, err
	}
	for _, svc := range services.Items {
		if svc.Name == "kubernetes" {
			continue
		}
		s.Services = append(s.Services, service(&svc, d.c.Provider.LBIDAnnotation, caps, warned[svc.Name]))
	}
	// The cloud last: what the Services name was written before.
	s.LoadBalancers = d.c.Sim.LoadBalancers()
	s.Companions, s.CompanionNames = companions(d.c.Sim)
	return s, nil
}

// warned are the messages of the Warning Events of each Service.
func (d *driver) warned(ctx context.Context) (map[string][]string, error) {
	events, err := d.c.Kube.CoreV1().Events(d.c.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: fields.Set{"type": corev1.EventTypeWarning, "involvedObject.kind": "Service"}.String(),
	})
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, e := range events.Items {
		out[e.InvolvedObject.Name] = append(out[e.InvolvedObject.Name], e.Message)
	}
	return out, nil
}

// service is svc as the invariants see it; warnings are its Warning
// Events' messages: it was warned about what makes it invalid when one
// names it.
func service(svc *corev1.Service, idAnnotation string, caps Capabilities, warnings []string) Service {
	why, what := invalid(svc, caps)
	out := Service{
		Name:         svc.Name,
		LBName:       cloudprovider.DefaultLoadBalancerName(svc),
		LoadBalancer: svc.Spec.Type == corev1.ServiceTypeLoadBalancer,
		LBID:         svc.Annotations[idAnnotation],
		Invalid:      why,
		Warned:       what != "" && slices.ContainsFunc(warnings, func(m string) bool { return strings.Contains(m, what) }),
	}
	for _, p := range svc.Spec.Ports {
		out.Ports = append(out.Ports, ServicePort{Port: p.Port, NodePort: p.NodePort})
	}
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if in.IP != "" {
			out.Ingress = append(out.Ingress, in.IP)
		}
		if in.Hostname != "" {
			out.Ingress = append(out.Ingress, in.Hostname)
		}
	}
	return out
}

// invalid says why the provider must reject svc, and what a Warning
// about it must name; "" when it must not.
func invalid(svc *corev1.Service, caps Capabilities) (why, what string) {
	for _, k := range keys(caps.Invalid) {
		if v, ok := svc.Annotations[k]; ok && v == caps.Invalid[k] {
			return fmt.Sprintf("annotation %s=%q", k, v), k
		}
	}
	if !caps.SourceRanges && len(svc.Spec.LoadBalancerSourceRanges) > 0 {
		return fmt.Sprintf("loadBalancerSourceRanges %v, which the provider does not support", svc.Spec.LoadBalancerSourceRanges), "loadBalancerSourceRanges"
	}
	return "", ""
}

func hasTaint(n *corev1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}
