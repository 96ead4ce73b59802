package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccmkit/internal/cluster"
)

func printSummary(ctx context.Context, out io.Writer, c *cluster.Cluster) error {
	nodes, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "\nNodes")
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "  NAME\tPROVIDER ID\tREGION/ZONE\tTYPE\tADDRESSES\tTAINTS")
	for _, n := range nodes.Items {
		fmt.Fprintf(w, "  %s\t%s\t%s/%s\t%s\t%s\t%s\n", n.Name, n.Spec.ProviderID,
			n.Labels[corev1.LabelTopologyRegion], n.Labels[corev1.LabelTopologyZone],
			n.Labels[corev1.LabelInstanceTypeStable], addresses(n.Status.Addresses), taints(n.Spec.Taints))
	}
	_ = w.Flush()

	svc, err := c.Kube.CoreV1().Services("default").Get(ctx, "demo-web", metav1.GetOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nService default/demo-web: external address %s, port %d -> nodePort %d, finalizers %v\n",
		ingressAddress(svc), svc.Spec.Ports[0].Port, svc.Spec.Ports[0].NodePort, svc.Finalizers)

	fmt.Fprintln(out, "\nLoad balancers in the simulated cloud")
	for _, lb := range c.Sim.LoadBalancers() {
		fmt.Fprintf(out, "  %s %q  listeners %v  members %v\n", lb.ID, lb.Name, lb.Listeners, lb.Members)
	}

	stats := c.Sim.Stats()
	ops := make([]string, 0, len(stats))
	for op := range stats {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	fmt.Fprintf(out, "\nCloud API calls spent: %d (writes: %d)\n", sum(stats), c.Sim.Writes())
	for _, op := range ops {
		fmt.Fprintf(out, "  %-28s %d\n", op, stats[op])
	}
	fmt.Fprintln(out)
	return nil
}

func addresses(as []corev1.NodeAddress) string {
	var parts []string
	for _, a := range as {
		parts = append(parts, string(a.Type)+"="+a.Address)
	}
	return strings.Join(parts, ",")
}

func taints(ts []corev1.Taint) string {
	if len(ts) == 0 {
		return "<none>"
	}
	var parts []string
	for _, t := range ts {
		parts = append(parts, t.Key+":"+string(t.Effect))
	}
	return strings.Join(parts, ",")
}

// keepRunning prints how to use the running cluster and waits for Ctrl-C.
func keepRunning(ctx context.Context, c *cluster.Cluster) error {
	kubeconfig := c.ControlPlane.AdminKubeconfig()
	root, _ := cluster.ModuleRoot()
	kubectl := filepath.Join(root, "bin", "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		kubectl = "kubectl"
	}
	fmt.Printf(`The cluster keeps running. Try:

  export KUBECONFIG=%s
  %s get nodes -o wide
  %s get svc demo-web
  %s get events -A
  tail -f %s/ccm.log
  curl -s %s/_sim/state

Press Ctrl-C to tear everything down.
`, kubeconfig, kubectl, kubectl, kubectl, c.WorkDir, c.Sim.URL())
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	fmt.Println("==> tearing down")
	c.Stop()
	return os.RemoveAll(c.WorkDir)
}
