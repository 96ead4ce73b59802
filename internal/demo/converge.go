package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	cloudproviderapi "k8s.io/cloud-provider/api"

	"github.com/ccmkit/ccmkit/internal/cluster"
)

func createService(ctx context.Context, c *cluster.Cluster) error {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "demo-web", Namespace: "default"},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeLoadBalancer,
			Selector: map[string]string{"app": "demo-web"},
			Ports:    []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	_, err := c.Kube.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{})
	return err
}

// waitForConvergence prints a progress line every second until every node
// is initialized and the Service has an external address.
func waitForConvergence(ctx context.Context, c *cluster.Cluster, timeout time.Duration) error {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		initialized, total, err := initializedNodes(ctx, c)
		if err != nil {
			return err
		}
		ingress := "pending"
		svc, err := c.Kube.CoreV1().Services("default").Get(ctx, "demo-web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(svc.Status.LoadBalancer.Ingress) > 0 {
			ingress = ingressAddress(svc)
		}
		fmt.Printf("    %4.1fs  nodes initialized %d/%d   service ingress: %-15s   cloud API calls: %d\n",
			time.Since(start).Seconds(), initialized, total, ingress, sum(c.Sim.Stats()))
		if total > 0 && initialized == total && ingress != "pending" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not converged after %s (CCM log: %s/ccm.log)", timeout, c.WorkDir)
		case <-tick.C:
		}
	}
}

func initializedNodes(ctx context.Context, c *cluster.Cluster) (initialized, total int, err error) {
	nodes, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, 0, err
	}
	for _, n := range nodes.Items {
		if n.Spec.ProviderID != "" && !tainted(&n, cloudproviderapi.TaintExternalCloudProvider) {
			initialized++
		}
	}
	return initialized, len(nodes.Items), nil
}

func tainted(n *corev1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

func ingressAddress(svc *corev1.Service) string {
	in := svc.Status.LoadBalancer.Ingress[0]
	if in.IP != "" {
		return in.IP
	}
	return in.Hostname
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
